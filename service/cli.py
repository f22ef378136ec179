"""The `supportgate` command line: thin calls into the domains.

Exit codes: 0 the gate passed, 1 a manifest failed the gate, 2 usage, input or engine errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from service.config import Settings
from service.errors import InputError, PolicyEngineError
from service.evaluations.check import check, read_manifest_files
from service.evaluations.evaluator import Evaluator
from service.matrix import load_matrix_file, prepare
from service.policy import EmbeddedEngine, PolicyBundle
from service.policy.catalog import read_catalog
from service.reports import FAIL_ON, FORMATS

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (InputError, PolicyEngineError) as exc:
        print(f"supportgate: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _check(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    bundle = PolicyBundle.load(settings.policy_dir)
    matrix = load_matrix_file(args.matrix or bundle.default_matrix_path)
    items = read_manifest_files(args.files)
    evaluator = Evaluator(EmbeddedEngine(bundle), prepare(matrix))
    titles = {rule_id: rule.title for rule_id, rule in read_catalog(bundle.modules).items()}
    outcome = check(
        items,
        evaluator,
        evaluated_at=args.at,
        fmt=args.format,
        fail_on=args.fail_on,
        rule_titles=titles,
    )
    sys.stdout.write(outcome.output if outcome.output.endswith("\n") else outcome.output + "\n")
    return EXIT_GATE_FAILED if outcome.failed else EXIT_OK


def _timestamp(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an RFC 3339 time: {text!r}") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"give a time zone (e.g. Z): {text!r}")
    return moment.astimezone(UTC)


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit with our code 2 and the same prefix."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"supportgate: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_ERROR)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="supportgate", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check_cmd = commands.add_parser("check", help="evaluate manifest files and gate on the verdict")
    check_cmd.add_argument("files", nargs="+", metavar="FILE", help="YAML or JSON manifests")
    check_cmd.add_argument("--format", choices=FORMATS, default="text")
    check_cmd.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="rejected",
        help="fail the gate on rejected manifests (default), or on experimental ones too",
    )
    check_cmd.add_argument(
        "--matrix", type=Path, help="evaluate under this matrix file instead of the default"
    )
    check_cmd.add_argument(
        "--at",
        type=_timestamp,
        default=datetime.now(UTC),
        help="evaluation time (RFC 3339), for replaying a decision; default now",
    )
    check_cmd.set_defaults(run=_check)
    return parser


if __name__ == "__main__":
    sys.exit(main())
