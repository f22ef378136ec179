"""The supportgate error tree, mapped to exit codes and HTTP statuses in one place each.

SupportgateError
├── InputError                 bad input from a user (CLI exit 2, HTTP 4xx); names the field
│   ├── ManifestError          a manifest or matrix that does not decode or validate (HTTP 400,
│   │                          413 when too large)
│   ├── UsageError             a command line or request that makes no sense (HTTP 400)
│   ├── UnsupportedMediaType   a body that is neither JSON nor YAML (HTTP 415)
│   └── ConflictError          contradicts what is stored: a duplicate version (HTTP 409)
├── PolicyEngineError          the policy engine could not answer (CLI exit 2, HTTP 503)
│   ├── PolicyEngineUnavailable    the engine cannot be reached or refused the call
│   └── PolicyEvaluationError      the engine answered, but not with a decision
└── DatabaseError              the database cannot serve supportgate (CLI exit 2, HTTP 503)
    └── SchemaOutdated         the schema is not the revision this supportgate needs
"""

from __future__ import annotations


class SupportgateError(Exception):
    """Root of every error supportgate raises on purpose."""


class InputError(SupportgateError):
    """Input that a user can fix; the message says what and where."""


class ManifestError(InputError):
    """A document that does not decode or validate.

    `path` is the JSON path of the failing field (`$.spec.python`), or `$` for the document.
    `source` names where the document came from (a file name), when known.
    """

    def __init__(self, message: str, *, path: str = "$", source: str | None = None) -> None:
        self.message = message
        self.path = path
        self.source = source
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}{self.message} - at `{self.path}`"

    def with_source(self, source: str) -> ManifestError:
        return type(self)(self.message, path=self.path, source=source)


class UsageError(InputError):
    """A command or request that cannot be carried out as asked."""


class UnsupportedMediaType(InputError):
    """A body in a media type supportgate does not read (HTTP 415)."""


class ConflictError(InputError):
    """The request contradicts what is stored (a duplicate version, a reused key)."""


class PolicyEngineError(SupportgateError):
    """The policy engine gave no decision; never turned into a verdict."""


class PolicyEngineUnavailable(PolicyEngineError):
    """The engine could not be reached, or it refused the request."""


class PolicyEvaluationError(PolicyEngineError):
    """The engine answered, but its answer is not a decision document."""


class DatabaseError(SupportgateError):
    """The database cannot serve supportgate as it is; the message says why."""


class SchemaOutdated(DatabaseError):
    """The database schema is not at the revision this supportgate needs; names the fix."""
