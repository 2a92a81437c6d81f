"""The one error root of memory_core, and its families.

Every error memory_core raises on purpose is a :class:`ReverieError`.  Adapters
(the CLI, the HTTP API, the tool entry point) map each class to one exit code,
status or error result, so the classes say what went wrong, not where.
"""

from __future__ import annotations


class ReverieError(Exception):
    """Base class of every error memory_core raises on purpose."""

    code = "error"


class ConfigError(ReverieError):
    """Raised when settings, a config file or a brain URL cannot be used."""

    code = "config_error"


class BrainNotFound(ReverieError):
    """Raised when a command that only reads names a brain that does not exist."""

    code = "brain_not_found"


class BrainError(ReverieError):
    """Raised when the brain file cannot be opened, migrated or written."""

    code = "brain_error"


class BrainUnavailable(BrainError):
    """Raised when the brain cannot be reached for now (a connection refused or lost, the
    server shutting down): trying again later may succeed."""

    code = "brain_unavailable"


class BrainUnwritable(BrainError):
    """Raised when the brain refuses a write: its disk is full, it is read-only, or
    its storage fails."""

    code = "brain_unwritable"

    def __init__(self, message: str, *, full: bool = False) -> None:
        super().__init__(message)
        self.full = full


class InvalidArgument(ReverieError):
    """Raised when a call's arguments are malformed; nothing was changed."""

    code = "invalid_argument"


class InvalidIdentity(InvalidArgument):
    """Raised when a caller names itself in a way that cannot be read: a blank or doubled
    identity, or one whose bytes are not UTF-8; nothing was done."""

    code = "invalid_identity"


class NotFound(ReverieError):
    """Raised when an id names no active trace (or a deleted one)."""

    code = "not_found"


class Conflict(ReverieError):
    """Raised when a compare-and-set write lost a race with another writer."""

    code = "conflict"


class NotEnabled(ReverieError):
    """Raised when a feature that is not available in this build is asked for."""

    code = "not_enabled"


class EmbedderError(ReverieError):
    """Raised when an embedder cannot produce vectors (model missing, endpoint down)."""

    code = "embedder_error"


class ExtractionError(ReverieError):
    """Raised when a fact extractor fails or answers something unusable."""

    code = "extraction_error"


class ReasonerError(ExtractionError):
    """Raised when a reasoner (a chat endpoint, the host agent's command line) gives no
    usable answer within its deadline; the caller keeps its offline reading."""

    code = "reasoner_error"


class BreakerOpen(ReasonerError):
    """Raised when a reasoner is not asked: its breaker is open after failures."""

    code = "breaker_open"


class ChannelUnavailable(ReverieError):
    """Raised when a search channel cannot answer now; search goes on without it."""

    code = "channel_unavailable"


class Unauthorized(ReverieError):
    """Raised when a call carries no token, or one that is malformed, unknown or revoked."""

    code = "unauthorized"


class Forbidden(ReverieError):
    """Raised when a valid identity lacks the capability or scope id a call needs."""

    code = "forbidden"


class AddressUnavailable(ReverieError):
    """Raised when a server cannot listen on its address (in use, or not this machine's)."""

    code = "address_unavailable"
