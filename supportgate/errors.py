"""The supportgate error tree, mapped to exit codes and HTTP statuses in one place each.

SupportgateError
├── InputError                 bad input from a user (CLI exit 2, HTTP 4xx); `field` names it
│   ├── ManifestError          a manifest or matrix that does not decode or validate (HTTP 400);
│   │   │                      its `path` is its field
│   │   └── DocumentTooLargeError   a document over the size limit (HTTP 413)
│   ├── UsageError             a command line or request that makes no sense (HTTP 400)
│   │   ├── CannotReplay           audit/replay.py: a decision that cannot be replayed here
│   │   ├── CollectError           collect/services.py: values neither probed nor given
│   │   ├── PolicyRefused          policy/org_check.py: an organisation bundle that fails
│   │   └── SigningKeyError        ledger/keys.py: the signing key cannot be had as set
│   ├── UnsupportedMediaType   a body that is neither JSON nor YAML (HTTP 415)
│   ├── ConflictError          contradicts what is stored: a duplicate version (HTTP 409)
│   ├── Forbidden              the key may not say this: another owner's manifest (HTTP 403)
│   └── NotFound               names something that is not there: a tracked manifest, a sweep,
│                              a path parameter (HTTP 404)
├── PolicyEngineError          the policy engine could not answer (CLI exit 2, HTTP 503)
│   ├── PolicyEngineUnavailable    the engine cannot be reached or refused the call
│   └── PolicyEvaluationError      the engine answered, but not with a decision
├── DatabaseError              the database cannot serve supportgate (CLI exit 2, HTTP 503)
│   ├── DatabaseBusy           a lock or statement timeout: worth retrying
│   ├── SchemaOutdated         the schema is not the revision this supportgate needs
│   ├── NodeStoreError         the database's node store lacks a node, or was asked to rewrite
│   │                          one; also a supportgate.tlog.NodeStoreError, as the protocol says
│   ├── LedgerWriteFailed      ledger/writer.py: a write not recorded, or no writer running
│   ├── UnusableInput          audit/tracking_state.py: a stored policy input that is not usable
│   └── SweepPaused            reevaluation/services.py: a sweep stopped on an outage
└── (caught where raised, never answered: a 500 with its traceback if one ever escapes)
    ├── HeadNotSigned          ledger/checkpointer.py: the head is past the signed checkpoint
    ├── IdempotencyConflict    ledger/writer.py: the Idempotency-Key was stored first by another
    ├── SourceUnreachable      matrix_sources/fetch.py: a matrix source that cannot be read
    ├── NoDocument             matrix_sources/fetch.py: a revision without a matrix document
    ├── RegoSyntaxError        policy/rego_parse.py: a Rego module that does not parse
    ├── UnknownTime            policy/time_thresholds.py: a time the memo cannot reason about
    ├── FieldError             manifests/common.py: a Struct's cross-field check (a ValueError
    │                          too, which msgspec turns into the decode error naming the field)
    ├── TargetRefused          webhooks/targets.py: a webhook host that is not allowed
    └── DeadlinePassed         webhooks/posting.py: a delivery attempt cut off at its deadline

supportgate.tlog.TlogError     the transparency log's own tree (supportgate/tlog/errors.py): a
│                              library's, so not SupportgateErrors; reported as ours are
├── TlogInputError             reported as an InputError: CLI exit 2, HTTP 400 with its `field`
│   ├── OutOfRange             a leaf index or tree size the log does not have
│   ├── InvalidProof           an inclusion or consistency proof that does not hold
│   ├── InvalidKey             a signer or verifier key that is malformed
│   └── InvalidNote            a signed note, checkpoint or receipt that is malformed or unsigned
└── NodeStoreError             reported as a DatabaseError: CLI exit 2, HTTP 503

Classes that only refine a message live beside their raiser and are drawn above with their
module; the mapping to HTTP (supportgate.http_errors) and to exit codes (supportgate.cli)
reads only the classes the two roots' modules define. Litestar's own exceptions (a console's
CsrfRefused, a PermissionDeniedException) are answered by Litestar and are not drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from supportgate import tlog


class SupportgateError(Exception):
    pass


class InputError(SupportgateError):
    """`field`: a JSON path into a body (`$.spec.python`), a parameter, header, option (`--at`) or
    setting name; None only when no one field is at fault. Keyword-only without a default, so
    that every raiser decides; the HTTP mapping, the console and the CLI read it, not the text."""

    def __init__(self, message: str, *, field: str | None) -> None:
        self.message = message
        self.field = field
        super().__init__(self.describe())

    def describe(self) -> str:
        return self.message if self.field is None else f"{self.field}: {self.message}"


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """`line` and `column` are 1-based, None where the text does not show them."""

    field: str
    message: str
    line: int | None = None
    column: int | None = None
    source: str | None = None

    def describe(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}{self.message} - at `{self.field}`"


class ManifestError(InputError):
    """`path` (the error's `field`) is `$` for the whole document; `problems` are all the
    problems found (CONTRACT 10.8), the first being this error's own."""

    field: str

    def __init__(
        self,
        message: str,
        *,
        path: str = "$",
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        problems: tuple[FieldProblem, ...] = (),
    ) -> None:
        self.source = source
        self.problems = problems or (FieldProblem(path, message, line, column, source),)
        super().__init__(message, field=path)

    @property
    def path(self) -> str:
        return self.field

    def describe(self) -> str:
        return self.problems[0].describe()

    def with_source(self, source: str) -> ManifestError:
        return self.with_problems(tuple(replace(p, source=source) for p in self.problems))

    def with_problems(self, problems: tuple[FieldProblem, ...]) -> ManifestError:
        first = problems[0]
        return type(self)(first.message, path=first.field, source=first.source, problems=problems)


class DocumentTooLargeError(ManifestError):
    pass


class UsageError(InputError):
    pass


class UnsupportedMediaType(InputError):
    pass


class ConflictError(InputError):
    pass


class Forbidden(InputError):
    pass


class NotFound(InputError):
    pass


class PolicyEngineError(SupportgateError):
    pass


class PolicyEngineUnavailable(PolicyEngineError):
    pass


class PolicyEvaluationError(PolicyEngineError):
    pass


class DatabaseError(SupportgateError):
    pass


class DatabaseBusy(DatabaseError):
    pass


class SchemaOutdated(DatabaseError):
    pass


class NodeStoreError(DatabaseError, tlog.NodeStoreError):
    pass
