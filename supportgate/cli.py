"""The `supportgate` command line: thin calls into the domains."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Only what `check` and the parser need is imported here: `check` runs in every CI job, and
# the database and web stacks (SQLAlchemy, Alembic, Litestar, httpx) would triple its start-up.
# The commands that need them import them in their own function.
from supportgate import __version__
from supportgate.auth import ROLES
from supportgate.collect import command as collect_command
from supportgate.config import Settings
from supportgate.errors import DatabaseError, InputError, PolicyEngineError, UsageError
from supportgate.evaluations.check import CheckOptions, report_refused_command, run_check
from supportgate.matrix import load_matrix_file
from supportgate.policy import commands as policy_commands
from supportgate.reports import FAIL_ON, FORMATS
from supportgate.tlog import TlogError

if TYPE_CHECKING:
    from sqlalchemy.orm import sessionmaker
    from sqlmodel import Session

    from supportgate.runtime import Runtime
    from supportgate.tlog import NoteVerifier

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        args = parser.parse_args(arguments)
    except _Refused as refused:  # `check --format F` still writes its report (reports.md)
        report_refused_command(
            arguments, refused.message, os.environ, stdout=sys.stdout, stderr=sys.stderr
        )
        raise
    try:
        return int(args.run(args))
    except (InputError, PolicyEngineError, DatabaseError, TlogError) as exc:
        print(f"supportgate: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _serve(args: argparse.Namespace) -> int:
    from supportgate import serving
    from supportgate.app import create_app
    from supportgate.db.migrate import ensure_current
    from supportgate.ledger.keys import check_signing_key
    from supportgate.logging import configure_logging

    configure_logging()
    settings = Settings.from_env()
    if args.bootstrap_admin_key:
        with _running(may_create=True) as runtime:
            secret = runtime.keys.bootstrap_admin()
        if secret is not None:
            print("no API key existed: created admin key 'admin'; it is shown only once:")
            print(secret, flush=True)
    if args.no_upgrade:  # refuse now, in one line naming the fix, not in uvicorn's lifespan
        _absent_database(settings.database_url, may_create=False)
        ensure_current(settings.database_url)
    check_signing_key(settings)  # likewise
    app = create_app(settings, upgrade_schema=not args.no_upgrade)
    serving.run(app, host=args.host, port=args.port, limits=settings.server_limits)
    return EXIT_OK


@contextmanager
def _running(*, may_create: bool = False) -> Iterator[Runtime]:
    """Only the commands that set a database up (`keys create`, `serve --bootstrap-admin-key`)
    may create its SQLite file, and say so on stderr; the others refuse a missing one."""
    from supportgate.runtime import Runtime

    settings = Settings.from_env()
    absent = _absent_database(settings.database_url, may_create=may_create)
    runtime = Runtime.build(settings)
    runtime.prepare_database(upgrade_schema=True)
    if absent is not None:
        print(f"supportgate: created the database {absent}", file=sys.stderr)
    try:
        yield runtime
    finally:
        runtime.stop()


def _absent_database(url: str, *, may_create: bool) -> str | None:
    """A SQLite file that does not exist yet (None when it does, or for PostgreSQL). Connecting
    would create it empty, and a reading command would report on nothing as if all were well
    (`audit verify`: "intact: 0 decisions"); an in-memory one would be this command's own."""
    from supportgate.db.engine import absent_sqlite_database
    from supportgate.db.migrate import UPGRADE_COMMAND

    absent = absent_sqlite_database(url)
    if absent is None:
        return None
    if absent.in_memory:
        raise DatabaseError(
            f"the database {absent.url} is in memory: this command's own, empty, and gone when "
            "it ends. Set SUPPORTGATE_DATABASE_URL to the service's database"
        )
    if not may_create:
        raise DatabaseError(
            f"no database at {absent.url}: the SQLite file does not exist. Run the command "
            "where the service keeps its database, set SUPPORTGATE_DATABASE_URL to it, or "
            f"create one with `{UPGRADE_COMMAND}`"
        )
    return absent.url


def _db_upgrade(_: argparse.Namespace) -> int:
    from supportgate.db.migrate import head_revision, upgrade

    upgrade(Settings.from_env().database_url)
    print(f"database schema is at {head_revision()}")
    return EXIT_OK


_KEY_OPTIONS = {  # the key API's body fields, as `keys create` spells them
    "$.name": "--name",
    "$.role": "--role",
    "$.owners": "--owner",
    "$.expires_in": "--expires-in",
}


def _keys_create(args: argparse.Namespace) -> int:
    try:
        with _running(may_create=True) as runtime:  # a first key, made before the first `serve`
            created = runtime.keys.create(
                name=args.name, role=args.role, owners=args.owner, expires_in=args.expires_in
            )
    except InputError as exc:  # named as the API's body names it: say the option instead
        option = _KEY_OPTIONS.get((exc.field or "").partition("[")[0], exc.field)
        raise UsageError(exc.message, field=option) from exc
    scope = f"for {', '.join(sorted(set(args.owner)))}" if args.owner else "for every owner"
    until = f", expiring in {args.expires_in}" if args.expires_in else ""
    print(
        f"created API key {args.name!r} with role {args.role} {scope}{until}; "
        "it is shown only once:"
    )
    print(created.key)
    return EXIT_OK


def _keys_list(_: argparse.Namespace) -> int:
    with _running() as runtime:
        keys = runtime.keys.list_keys()
    rows: list[tuple[str, ...]] = [
        ("NAME", "ROLE", "OWNERS", "CREATED", "EXPIRES", "LAST USED", "REVOKED")
    ]
    rows.extend(
        (
            key.name,
            key.role,
            ",".join(key.owners) or "*",
            *map(_when, (key.created_at, key.expires_at, key.last_used_at, key.revoked_at)),
        )
        for key in keys
    )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    return EXIT_OK


def _when(at: datetime | None) -> str:
    return "-" if at is None else at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _keys_revoke(args: argparse.Namespace) -> int:
    with _running() as runtime:
        revoked = runtime.keys.revoke(args.name)
    print(
        f"revoked API key {revoked.name!r} at {_when(revoked.revoked_at)}: refused from now on "
        "(by a running service within 2 s)"
    )
    return EXIT_OK


_VERIFIER_KEY = re.compile(r"[^+\s]+\+[0-9a-f]{8}\+\S+")


def _read_verifier_key(value: str) -> NoteVerifier:
    """A verifier key or a file holding one: the key's shape decides, not whether such a file
    exists, as a key's name (the log's origin) may hold slashes."""
    from supportgate.tlog import NoteVerifier

    text = value.strip()
    if not _VERIFIER_KEY.fullmatch(text):
        try:
            text = Path(value).read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"neither a verifier key (<name>+<hash>+<base64>) nor a readable file: {exc}",
                field="--verifier-key",
            ) from exc
    return NoteVerifier.from_key(text)


def _audit_verify(args: argparse.Namespace) -> int:
    from supportgate.audit.checkpoints import witness_notes
    from supportgate.audit.verify import verify_log
    from supportgate.ledger.keys import log_verifier

    settings = Settings.from_env()
    trusted = args.verifier_key or settings.verifier_key
    verifier = _read_verifier_key(trusted) if trusted is not None else log_verifier(settings)
    notes = None if args.checkpoints is None else witness_notes(args.checkpoints)
    with _existing_database(settings) as sessions:
        report = verify_log(sessions, notes=notes, verifier=verifier)
    print(report.summary())
    if report.intact:
        return EXIT_OK
    return EXIT_ERROR if report.unverified else EXIT_GATE_FAILED


def _audit_rebuild_tracking(_: argparse.Namespace) -> int:
    from supportgate.audit.rebuild import rebuild_tracking
    from supportgate.audit.tracking_state import UnusableInput

    with _existing_database(Settings.from_env()) as sessions:
        try:
            rebuilt = rebuild_tracking(sessions)
        except UnusableInput as exc:
            print(
                f"supportgate: error: cannot rebuild the tracked-manifest table from the log: "
                f"{exc}; `supportgate audit verify` names what was edited",
                file=sys.stderr,
            )
            return EXIT_ERROR
    print(rebuilt.summary())
    return EXIT_OK


@contextmanager
def _existing_database(settings: Settings) -> Iterator[sessionmaker[Session]]:
    """Sessions on the service's database as it is: neither created, nor migrated, nor
    seeded with the default matrix (which appends an entry): `audit verify` must judge the
    database it was given, and the rebuild must change only what it says it changes."""
    from supportgate.db import create_db_engine, session_factory
    from supportgate.db.migrate import ensure_current

    _absent_database(settings.database_url, may_create=False)
    engine = create_db_engine(settings.database_url)
    try:
        ensure_current(engine)
        yield session_factory(engine)
    finally:
        engine.dispose()


def _audit_keygen(args: argparse.Namespace) -> int:
    from supportgate.ledger.keys import write_signer_key

    origin = args.origin or Settings.from_env().log_origin
    verifier = write_signer_key(args.out, origin)
    print(f"wrote the signer key of {origin!r} to {args.out} (mode 0600): keep it where the")
    print("database's owner cannot read it, and set SUPPORTGATE_SIGNING_KEY_FILE to it.")
    print("The verifier key, for whoever checks the log:")
    print(verifier.encoded())
    return EXIT_OK


def _opa_setup(args: argparse.Namespace) -> int:
    from supportgate.policy.opa_setup import setup

    for path in setup(args.signing_key, args.dir):
        print(f"wrote {path}")
    return EXIT_OK


def _audit_receipt(args: argparse.Namespace) -> int:
    from supportgate.audit.receipts import make_receipt
    from supportgate.tlog import encode_receipt

    with _running() as runtime:
        made = make_receipt(runtime.sessions, runtime.checkpointer, args.decision_id)
    receipt = made.receipt
    if made.signed_now:
        print(
            f"decision {args.decision_id} was newer than the latest checkpoint: signed one of "
            f"{receipt.tree_size} entries",
            file=sys.stderr,
        )
    args.out.write_bytes(encode_receipt(receipt))
    print(
        f"wrote the receipt of decision {args.decision_id} (leaf {receipt.leaf_index}, "
        f"checkpoint of {receipt.tree_size} entries) to {args.out}"
    )
    return EXIT_OK


def _audit_verify_receipt(args: argparse.Namespace) -> int:
    # No database, no server: only the transparency log.
    from supportgate.tlog import TlogInputError, check_receipt, read_receipt

    trusted = args.verifier_key or Settings.from_env().verifier_key
    if trusted is None:  # the receipt's own key shows only that its holder signed it
        raise UsageError(
            "a receipt is checked against the log's verifier key, obtained apart from the "
            "receipt: pass --verifier-key KEY (or a file holding it) or set "
            "SUPPORTGATE_VERIFIER_KEY",
            field="--verifier-key",
        )
    key = _read_verifier_key(trusted)  # a bad key: the caller's to fix (exit 2), not the receipt's
    try:
        data = args.file.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot read the receipt {args.file}: {exc.strerror}", field="FILE"
        ) from exc
    try:
        receipt = read_receipt(data)
        check_receipt(receipt, key)
    except TlogInputError as exc:
        print(f"receipt {args.file} does not hold: {exc}")
        return EXIT_GATE_FAILED
    print(
        f"receipt {args.file} holds: leaf {receipt.leaf_index} is in the log's checkpoint of "
        f"{receipt.tree_size} entries, signed by {key.encoded()}"
    )
    return EXIT_OK


def _audit_replay(args: argparse.Namespace) -> int:
    from supportgate.audit.replay import CannotReplay, decision_ids, differences, replay_decision
    from supportgate.pagination import parse_time

    if args.since is not None and args.decisions:
        raise UsageError("give decision ids or --since, not both", field="--since")
    since = parse_time("--since", args.since)
    reproduced = differ = skipped = 0
    with _running() as runtime:
        for decision_id in args.decisions or decision_ids(runtime, since=since):
            try:
                replayed = replay_decision(runtime, decision_id)
            except CannotReplay as exc:
                print(f"decision {decision_id}: cannot replay here: {exc}")
                skipped += 1
                continue
            if replayed.reproduced:
                reproduced += 1
                continue
            differ += 1
            print(f"decision {decision_id} differs: {'; '.join(differences(replayed))}")
    print(
        f"replayed {reproduced + differ}: {reproduced} reproduced, {differ} differ, "
        f"{skipped} cannot be replayed here"
    )
    if differ:
        return EXIT_GATE_FAILED
    return EXIT_ERROR if skipped and args.decisions else EXIT_OK


def _report_option(value: str) -> tuple[str, str]:
    fmt, equals, path = value.partition("=")
    if not equals or not path or fmt not in FORMATS:
        raise argparse.ArgumentTypeError(
            f"expected FORMAT=FILE with FORMAT one of {', '.join(FORMATS)}, got {value!r}"
        )
    return fmt, path


def _check(args: argparse.Namespace) -> int:
    options = CheckOptions(**{f.name: getattr(args, f.name) for f in fields(CheckOptions)})
    return run_check(options, os.environ, stdout=sys.stdout, stderr=sys.stderr)


def _matrix_publish(args: argparse.Namespace) -> int:
    from supportgate.matrix.services import cli_publisher, describe

    matrix = load_matrix_file(args.file)
    with _running() as runtime:
        published = runtime.matrices.publish_view(matrix, published_by=cli_publisher())
    print(describe(published))
    return EXIT_OK


def _reevaluate(_: argparse.Namespace) -> int:
    from uuid import uuid4

    with _running() as runtime:
        sweep = runtime.reevaluation.run_sweep("schedule", trigger=f"cli:{uuid4()}")
    counts = sweep.counts
    print(
        f"sweep {sweep.id} {sweep.status}: evaluated {counts.evaluated}, "
        f"changed {counts.changed}, failed {counts.failed}"
    )
    return EXIT_OK if sweep.status == "finished" else EXIT_ERROR


def _report_oscal(args: argparse.Namespace) -> int:
    with _running() as runtime:
        at = runtime.oscal.as_of(args.as_of, field="--as-of")
        document = runtime.oscal.document(at)
    if args.output is None:
        sys.stdout.buffer.write(document)
        sys.stdout.flush()
        return EXIT_OK
    try:
        args.output.write_bytes(document)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}", field="--output") from exc
    print(f"wrote the OSCAL assessment results of the fleet at {_when(at)} to {args.output}")
    return EXIT_OK


class _Refused(SystemExit):
    def __init__(self, message: str) -> None:
        super().__init__(EXIT_ERROR)
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit with our code 2 and the same prefix, under the usage of
    the command they are about (`usage: supportgate keys create ...`)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"supportgate: error: {message}", file=sys.stderr)
        raise _Refused(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes one at every add_argument, sized by shutil.get_terminal_size; shutil
        # brings bz2 and lzma, a tenth of `check`'s start-up (docs/performance.md).
        try:
            width = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            try:
                width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                width = 80
        return self.formatter_class(prog=self.prog, width=width)  # type: ignore[call-arg]

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self._subparsers is None:
            # argparse hands a command's leftover arguments up to `supportgate` itself, which
            # would refuse them under its own usage: refuse them here, under the command's.
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def _parser() -> argparse.ArgumentParser:
    """Each command's options are (flag, METAVAR, help) rows; docs/ holds the long story."""
    parser = _Parser(prog="supportgate", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"supportgate {__version__}")
    commands = _commands(parser, None, "")

    check = _command(
        commands,
        "check",
        _check,
        "evaluate manifest files and gate on the verdict",
        # --matrix and --at are checked by run_check, so that a bad value is in the report too
        ("--matrix", "FILE", "evaluate under this matrix file instead of the default"),
        ("--at", "TIME", "evaluation time (RFC 3339), for replaying a decision; default now"),
        ("--server", "URL", "judge on this server, under its matrix and pools (a dry run)"),
        ("--record", None, "with --server: post each manifest to be recorded and tracked"),
        ("--token", "KEY", "the API key for --server (default: $SUPPORTGATE_TOKEN)"),
        ("--supportgate-only", None, "judge only supportgate/v1 documents; list the rest"),
        ("--find-hardware", None, "find an undefined hardware.ref in the repository (git)"),
        ("--output", "FILE", "write the report to FILE instead of stdout"),
        ("--sarif-root", "DIR", "SARIF paths are relative to DIR (default: the working dir)"),
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="YAML or JSON manifests")
    check.add_argument("--format", dest="fmt", choices=FORMATS, default="text")
    check.add_argument("--fail-on", choices=FAIL_ON, default="rejected")
    check.add_argument(
        "--report",
        dest="reports",
        action="append",
        default=[],
        type=_report_option,
        metavar="FORMAT=FILE",
        help="also write the report in FORMAT to FILE (repeatable), e.g. sarif=supportgate.sarif",
    )

    collect_command.add_parser(commands)

    serve = _command(
        commands,
        "serve",
        _serve,
        "run the HTTP service",
        ("--no-upgrade", None, "refuse an out-of-date schema instead of upgrading it"),
        ("--bootstrap-admin-key", None, "with no API key yet, create an admin key, print it"),
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)

    _command(_commands(commands, "db", "database schema"), "upgrade", _db_upgrade, "migrate it")

    keys = _commands(commands, "keys", "API keys")
    create = _command(
        keys,
        "create",
        _keys_create,
        "create a key; prints it on the last line",
        ("--expires-in", "DURATION", "90d, 12h or 30m, under 1000 days (default: never)"),
    )
    create.add_argument("--role", required=True, choices=ROLES)
    create.add_argument("--name", required=True)
    create.add_argument(
        "--owner", action="append", default=[], help="an owner the key may post for (repeat)"
    )
    _command(keys, "list", _keys_list, "every key, its role, owners, times and revocation")
    _command(keys, "revoke", _keys_revoke, "revoke a key").add_argument("name", metavar="NAME")

    matrix = _commands(commands, "matrix", "the support matrix")
    publish = _command(matrix, "publish", _matrix_publish, "publish a new matrix version")
    publish.add_argument("file", type=Path, metavar="FILE", help="a YAML or JSON matrix")

    _command(commands, "reevaluate", _reevaluate, "re-evaluate every tracked manifest now")

    audit = _commands(commands, "audit", "the audit history (docs/ledger.md)")
    verify = _command(
        audit,
        "verify",
        _audit_verify,
        "check the verifiable log; exit 1 naming the first bad entry or checkpoint",
        ("--verifier-key", "KEY", "the log's verifier key, or a file holding it"),
    )
    verify.add_argument(
        "--checkpoints", type=Path, metavar="FILE", help="check this witness file's checkpoints"
    )
    _command(audit, "rebuild-tracking", _audit_rebuild_tracking, "restore tracking from the log")
    keygen = _command(
        audit,
        "keygen",
        _audit_keygen,
        "write a new checkpoint signing key; prints its verifier key on the last line",
        ("--origin", "ORIGIN", "the log's origin (default: $SUPPORTGATE_LOG_ORIGIN)"),
    )
    keygen.add_argument("--out", type=Path, required=True, metavar="FILE")
    receipt = _command(audit, "receipt", _audit_receipt, "write a decision's receipt")
    receipt.add_argument("decision_id", metavar="DECISION_ID")
    receipt.add_argument("--out", type=Path, required=True, metavar="FILE")
    verify_receipt = _command(
        audit,
        "verify-receipt",
        _audit_verify_receipt,
        "check a receipt offline (no database, no server)",
        ("--verifier-key", "KEY", "the log's verifier key, or a file holding it"),
    )
    verify_receipt.add_argument("file", type=Path, metavar="FILE")
    replay = _command(
        audit,
        "replay",
        _audit_replay,
        "evaluate stored inputs again; report each decision that comes out different",
        ("--since", "TIME", "only decisions evaluated at or after TIME (RFC 3339)"),
    )
    replay.add_argument("decisions", nargs="*", metavar="DECISION_ID", help="default: all")

    policy_commands.add_parser(commands, _Parser)

    setup = _command(
        _commands(commands, "opa", "the OPA server's trust (docs/opa.md)"),
        "setup",
        _opa_setup,
        "write the bundle signing key and the tokens OPA and the service share",
    )
    setup.add_argument("--signing-key", type=Path, required=True, metavar="FILE")
    setup.add_argument("--dir", type=Path, required=True, metavar="DIR")

    oscal = _command(
        _commands(commands, "report", "reports on the tracked fleet (docs/reports.md)"),
        "oscal",
        _report_oscal,
        "the fleet at a time as an OSCAL Assessment Results document (JSON)",
        ("--as-of", "TIME", "the time the report speaks of, RFC 3339 (default: now)"),
    )
    oscal.add_argument("--output", metavar="FILE", type=Path, help="write it here, not stdout")
    return parser


def _commands(parser: Any, name: str | None, text: str) -> Any:
    """A group of subcommands, shown as COMMAND: without a metavar, argparse names the
    internal dest in "the following arguments are required"."""
    if name is not None:
        parser = parser.add_parser(name, help=text)
    return parser.add_subparsers(
        dest=f"{name}_command" if name else "command",
        metavar="COMMAND",
        required=True,
        parser_class=_Parser,
    )


def _command(
    group: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    text: str,
    *options: tuple[str, str | None, str],
) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = group.add_parser(name, help=text)
    command.set_defaults(run=run)
    for flag, metavar, help_text in options:
        if metavar is None:  # a switch
            command.add_argument(flag, action="store_true", help=help_text)
        else:
            command.add_argument(flag, metavar=metavar, help=help_text)
    return command


if __name__ == "__main__":
    sys.exit(main())
