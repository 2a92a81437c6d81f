"""memory_core: the library that owns the brain.

It imports no queue, no scheduler and no web framework; the workers, the
scheduler, the API, MCP and memctl are thin adapters over what is exported
here.  A process holds one :class:`Runtime` (settings, brain, embedder,
extractor, where its jobs go), built at its entry point; every read and write
acts for an :class:`Identity`.
"""

from memory_core.auth import OPEN, SYSTEM, Identity
from memory_core.brain.db import Brain, open_brain
from memory_core.errors import (
    AddressUnavailable,
    BrainError,
    BrainNotFound,
    BrainUnavailable,
    BrainUnwritable,
    ConfigError,
    Conflict,
    Forbidden,
    InvalidArgument,
    InvalidIdentity,
    NotEnabled,
    NotFound,
    ReverieError,
    Unauthorized,
)
from memory_core.retrieval.search import SearchHit, SearchResponse, search
from memory_core.runtime import Runtime
from memory_core.settings import Settings, load_settings
from memory_core.timeref import parse_time
from memory_core.tools import TOOL_SCHEMAS, ToolContext, call_tool
from memory_core.traces.merge import MergeResult, merge_traces
from memory_core.traces.model import NewTrace, Trace
from memory_core.traces.store import (
    add_trace,
    add_traces,
    delete_trace,
    get_trace,
    list_traces,
    said_again,
    update_trace,
)
from memory_core.traces.supersession import undo_supersession

__all__ = [
    "OPEN",
    "SYSTEM",
    "TOOL_SCHEMAS",
    "AddressUnavailable",
    "Brain",
    "BrainError",
    "BrainNotFound",
    "BrainUnavailable",
    "BrainUnwritable",
    "ConfigError",
    "Conflict",
    "Forbidden",
    "Identity",
    "InvalidArgument",
    "InvalidIdentity",
    "MergeResult",
    "NewTrace",
    "NotEnabled",
    "NotFound",
    "ReverieError",
    "Runtime",
    "SearchHit",
    "SearchResponse",
    "Settings",
    "ToolContext",
    "Trace",
    "Unauthorized",
    "add_trace",
    "add_traces",
    "call_tool",
    "delete_trace",
    "get_trace",
    "list_traces",
    "load_settings",
    "merge_traces",
    "open_brain",
    "parse_time",
    "said_again",
    "search",
    "undo_supersession",
    "update_trace",
]
