"""MCP: Reverie's memory tools and resources for any MCP client.

:mod:`.server` is the transport-neutral server; :mod:`.stdio` serves it to
one client over stdio (``memctl mcp``), and the API mounts it over
streamable HTTP at ``/mcp`` (``reverie.api.mcp_http``).
"""
