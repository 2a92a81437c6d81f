"""Finding memories: hybrid search with hard filters first.

:mod:`.search` runs a search; :mod:`.lexical` is the BM25 channel over the
full-text index, :mod:`.dense` the vector channel over the in-memory
:mod:`.vector_index`, with queries embedded by :mod:`.query_embedding`;
:mod:`.ranking` fuses and adjusts, :mod:`.relevance` says how well a hit
fits; :mod:`.feedback` applies what search returned, off the read path.
"""
