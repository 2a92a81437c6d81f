"""Identities and capabilities: who may read, write, delete, dream or administer.

Capabilities: ``read`` (search, read traces and turns), ``write`` (add and
update traces, post turns), ``delete`` (delete; merging needs it too, since
it deletes the merged-away traces), ``dream`` (run a dream pass) and
``admin`` (everything, and managing tokens).  None implies another, except
``admin``.  An identity may be confined to scope ids: a token pinned to them,
or a caller naming whom it acts for (:meth:`Identity.acting_as`, per scope).  It
then sees and writes only those, and never acts on the whole brain
(:func:`brain_wide`: tokens, dream passes, brain-wide counts).  Every read and
write of memory_core acts for an identity (``identity=``, required): the
library enforces its scope ids and capabilities, not only the adapters.  Every
tenant is an unconfined identity named as such (:data:`SYSTEM`, :data:`OPEN`),
never a default.

:mod:`~memory_core.auth.identity` holds the identity and its confinement,
:mod:`~memory_core.auth.tokens` the tokens that name one, and
:mod:`~memory_core.auth.session` the re-check of a long-lived caller's token.
"""

from memory_core.auth.identity import (
    ADMIN,
    CAPABILITIES,
    DELETE,
    DREAM,
    MAX_SCOPE_ID_LENGTH,
    OPEN,
    READ,
    SYSTEM,
    WRITE,
    Identity,
    Within,
    acting,
    brain_wide,
    named_scopes,
)
from memory_core.auth.session import RECHECK_S, Session
from memory_core.auth.tokens import (
    ANONYMOUS_NAME,
    TOKEN_PREFIX,
    TokenInfo,
    anonymous,
    any_active_token,
    authenticate,
    create_token,
    grant_anonymous,
    identify,
    list_tokens,
    reset_token,
    revoke_token,
)

__all__ = [
    "ADMIN",
    "ANONYMOUS_NAME",
    "CAPABILITIES",
    "DELETE",
    "DREAM",
    "MAX_SCOPE_ID_LENGTH",
    "OPEN",
    "READ",
    "RECHECK_S",
    "SYSTEM",
    "TOKEN_PREFIX",
    "WRITE",
    "Identity",
    "Session",
    "TokenInfo",
    "Within",
    "acting",
    "anonymous",
    "any_active_token",
    "authenticate",
    "brain_wide",
    "create_token",
    "grant_anonymous",
    "identify",
    "list_tokens",
    "named_scopes",
    "reset_token",
    "revoke_token",
]
