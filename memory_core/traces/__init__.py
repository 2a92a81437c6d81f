"""Memory traces: storing, reading and changing them, and taking them back.

:mod:`.model` is what a trace is (the row decoded, a trace to add, the checks
every write makes); :mod:`.store` adds, reads, lists, updates and soft-deletes
traces (with the full-text index in the same transaction); :mod:`.merge` merges traces;
:mod:`.undo` records and reverses changes; :mod:`.decay` is how strength
fades and grows with use.  Forgetting a scope id for good, which reaches
every table, is :mod:`memory_core.forget`.
"""
