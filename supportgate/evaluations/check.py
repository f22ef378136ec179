"""`supportgate check`: evaluate manifest files, resolving hardware refs among them, and report.
The report always comes out (docs/reports.md): the files that are fine are still judged beside a
problem unless it stops every evaluation (a bad `--at`, `--matrix`, server or engine)."""

from __future__ import annotations

import argparse
import io
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO, cast

from supportgate.config import Settings
from supportgate.errors import (
    InputError,
    ManifestError,
    PolicyEngineError,
    UsageError,
)
from supportgate.manifests import (
    HardwareManifest,
    decode_manifests,
    format_of,
)
from supportgate.manifests.common import FIRST_YEAR, LAST_YEAR
from supportgate.manifests.decode import decode_supportgate_documents
from supportgate.matrix import load_matrix_file, prepare
from supportgate.pagination import parse_time
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.catalog import read_catalog
from supportgate.reports import (
    FAIL_ON,
    FORMATS,
    CheckedManifest,
    FailOn,
    Problem,
    Report,
    SarifOptions,
    render,
)
from supportgate.reports.rules import docs_url

from .evaluator import Evaluator, Subject
from .sourced import SourcedManifest


@dataclass(frozen=True, slots=True)
class ManifestFiles:
    manifests: list[SourcedManifest]
    problems: list[Problem]
    skipped: list[str]
    """The files (or `<file>, document N`) passed over: not supportgate/v1 documents."""


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """As given, not yet validated."""

    files: Sequence[str]
    fmt: str = "text"
    fail_on: FailOn = "rejected"
    matrix: str | None = None
    at: str | None = None
    server: str | None = None
    token: str | None = None
    record: bool = False
    supportgate_only: bool = False
    find_hardware: bool = False
    output: str | None = None
    reports: Sequence[tuple[str, str]] = ()
    sarif_root: str | None = None


def read_manifest_files(paths: Sequence[str], *, supportgate_only: bool = False) -> ManifestFiles:
    """A file that gives none is a problem (`supportgate_only`: passed over, as are documents
    that are not supportgate/v1)."""
    found: list[SourcedManifest] = []
    problems: list[Problem] = []
    skipped: list[str] = []
    for source in paths:
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            problems.append(Problem(f"{source}: cannot read: {exc.strerror}", source=source))
            continue
        text = data.decode("utf-8", errors="replace")
        fmt = format_of(source)
        try:
            if supportgate_only:
                manifests, passed_over = decode_supportgate_documents(data, fmt=fmt, source=source)
                skipped += _skipped(source, passed_over, several=bool(manifests))
            else:
                manifests = list(enumerate(decode_manifests(data, fmt=fmt, source=source)))
        except ManifestError as exc:  # every problem, each where the decoder found it
            problems += [
                Problem(
                    found.describe(),
                    source,
                    found.field,
                    text,
                    line=found.line,
                    column=found.column,
                )
                for found in exc.problems
            ]
            continue
        if not manifests and not supportgate_only:
            problems.append(
                Problem(
                    f"{source}: holds no manifest (no document, or only empty ones) - at `$`",
                    source=source,
                    field="$",
                )
            )
        found.extend(
            SourcedManifest(source=source, text=text, document_index=index, manifest=manifest)
            for index, manifest in manifests
        )
    unique, duplicates = _split_duplicates(found)
    return ManifestFiles(manifests=unique, problems=problems + duplicates, skipped=skipped)


def _skipped(source: str, numbers: Sequence[int], *, several: bool) -> list[str]:
    if not several and numbers in ([1], []):
        return [source] if numbers else []
    return [f"{source}, document {number}" for number in numbers]


def check_locally(
    items: Sequence[SourcedManifest],
    evaluator: Evaluator,
    *,
    evaluated_at: datetime,
    more_pools: Mapping[str, HardwareManifest],
) -> list[CheckedManifest]:
    """A `hardware.ref` names a pool of `items` first; `seconds` is a share of the one batch."""
    pools = {
        **more_pools,
        **{
            item.manifest.metadata.name: item.manifest
            for item in items
            if isinstance(item.manifest, HardwareManifest)
        },
    }
    started = time.perf_counter()
    evaluations = evaluator.evaluate_batch(
        [Subject(item.manifest) for item in items], evaluated_at=evaluated_at, hardware=pools.get
    )
    share = (time.perf_counter() - started) / len(items) if items else 0.0
    return [
        item.checked(evaluation.decision, share)
        for item, evaluation in zip(items, evaluations, strict=True)
    ]


def parse_at(text: str) -> datetime:
    moment = cast(datetime, parse_time("--at", text))  # None only for no text
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise UsageError(
            f"give a time in the years {FIRST_YEAR} to {LAST_YEAR} in UTC, which the policies"
            f" can compare: {text!r}",
            field="--at",
        )
    return moment


def run_check(
    options: CheckOptions,
    environ: Mapping[str, str],
    *,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    problems: list[Problem] = []
    results: list[CheckedManifest] = []
    evaluated_at = datetime.now(UTC)
    if options.at is not None:
        try:
            evaluated_at = parse_at(options.at)
        except UsageError as exc:
            problems.append(Problem(str(exc), field=exc.field))
    bundle: PolicyBundle | None = None
    try:
        settings = Settings.from_env(environ)
        bundle = PolicyBundle.load(settings.policy_dir, settings.policy_bundles)
    except InputError as exc:  # a bad setting, no policies
        problems.append(Problem(str(exc), field=exc.field))
    # under a bad --at or without the policies nothing is evaluated; the files are still read
    can_evaluate = not problems
    files = read_manifest_files(options.files, supportgate_only=options.supportgate_only)
    problems += files.problems
    items, more_pools = files.manifests, {}
    if options.find_hardware and options.server is None:
        from .hardware_search import find_hardware  # noqa: PLC0415 - only the hook needs it

        found = find_hardware(items)
        items, more_pools = found.items, found.pools
        problems += found.problems
    if can_evaluate and bundle is not None:
        try:
            results = _evaluate(options, bundle, environ, items, evaluated_at, more_pools)
        except ManifestError as exc:  # the matrix file
            problems.append(Problem(str(exc), source=exc.source, field=exc.field))
        except InputError as exc:
            problems.append(Problem(str(exc), field=exc.field))
        except PolicyEngineError as exc:
            problems.append(Problem(str(exc)))
    formats = {options.fmt, *(fmt for fmt, _ in options.reports)}
    sarif = sarif_options(bundle if "sarif" in formats else None, environ, options.sarif_root)
    report = Report(
        results=results, problems=problems, fail_on=options.fail_on, skipped=files.skipped
    )
    for fmt, path in options.reports:
        report = _write_copy(report, fmt, path, sarif)
    return write_report(report, options.fmt, options.output, sarif, stdout=stdout, stderr=stderr)


def _write_copy(
    report: Report, fmt: str, path: str, sarif: SarifOptions, option: str = "--report"
) -> Report:
    text = render(report, fmt, sarif)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        unwritten = Problem(f"{option}: cannot write {path}: {exc.strerror}", field=option)
        return replace(report, problems=[*report.problems, unwritten])
    return report


def write_report(
    report: Report,
    fmt: str,
    output: str | None,
    sarif: SarifOptions,
    *,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """When `output` cannot be written, that is one more problem, and the report goes to stdout."""
    if output is not None:
        written = _write_copy(report, fmt, output, sarif, option="--output")
        if written is not report:
            return write_report(written, fmt, None, sarif, stdout=stdout, stderr=stderr)
    else:
        stdout.write(render(report, fmt, sarif))
        stdout.flush()
    for problem in report.problems:
        print(f"supportgate: error: {problem.message}", file=stderr)
    return report.exit_code


def sarif_options(
    bundle: PolicyBundle | None, environ: Mapping[str, str], sarif_root: str | None
) -> SarifOptions:
    """The root is resolved (symlinks too), as GitHub matches URIs against the checkout's
    real files."""
    rules = read_catalog(bundle.modules) if bundle is not None else {}
    cwd = os.getcwd()
    root = os.path.realpath(os.path.join(cwd, sarif_root or "."))
    return SarifOptions(rules=rules, root=root, cwd=cwd, docs_url=docs_url(environ))


def report_refused_command(
    arguments: Sequence[str],
    message: str,
    environ: Mapping[str, str],
    *,
    stdout: TextIO,
    stderr: TextIO,
) -> None:
    """After argparse refused a `check` command line, still write the report it asked for,
    when it names a `--format` (with the default text format the stderr message is the report).
    """
    words = [word for word in arguments if not word.startswith("-")]
    if not words or words[0] != "check":
        return
    lenient = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    for option in ("--format", "--fail-on", "--output", "--sarif-root"):
        lenient.add_argument(option)
    try:
        known, _ = lenient.parse_known_args(arguments[arguments.index("check") + 1 :])
    except argparse.ArgumentError:
        return
    if known.format not in FORMATS:
        return
    fail_on: FailOn = known.fail_on if known.fail_on in FAIL_ON else "rejected"
    try:
        settings = Settings.from_env(environ)
        bundle: PolicyBundle | None = PolicyBundle.load(
            settings.policy_dir, settings.policy_bundles
        )
    except InputError:
        bundle = None  # the report still comes out, with no rule descriptions
    sarif = sarif_options(bundle if known.format == "sarif" else None, environ, known.sarif_root)
    refusal = Problem(f"the command line was refused: {message}")
    report = Report(results=[], problems=[refusal], fail_on=fail_on)
    # the parser has told stderr already: only the report is written here
    write_report(report, known.format, known.output, sarif, stdout=stdout, stderr=io.StringIO())


def _evaluate(  # noqa: PLR0917 - one private call site, in run_check
    options: CheckOptions,
    bundle: PolicyBundle,
    environ: Mapping[str, str],
    items: list[SourcedManifest],
    evaluated_at: datetime,
    more_pools: Mapping[str, HardwareManifest],
) -> list[CheckedManifest]:
    if options.server is not None or options.token is not None:
        from .remote import Server, check_remote  # noqa: PLC0415 - only --server needs httpx

        server = Server.from_options(
            options.server,
            options.token,
            environ,
            in_process_only={
                "--matrix": options.matrix,
                "--at": options.at,
                "--find-hardware": options.find_hardware or None,
            },
        )
        return check_remote(items, server, record=options.record) if items else []
    if options.record:
        raise UsageError("records on a server only: give --server too", field="--record")

    matrix_path = Path(options.matrix) if options.matrix else bundle.default_matrix_path
    try:
        matrix = load_matrix_file(matrix_path)
    except UsageError as exc:  # the file cannot be read
        if options.matrix is None:
            raise
        raise UsageError(str(exc), field="--matrix") from None
    if not items:
        return []
    evaluator = Evaluator(EmbeddedEngine(bundle), prepare(matrix))
    return check_locally(items, evaluator, evaluated_at=evaluated_at, more_pools=more_pools)


def _split_duplicates(
    items: Sequence[SourcedManifest],
) -> tuple[list[SourcedManifest], list[Problem]]:
    seen: dict[tuple[str, str], str] = {}
    unique: list[SourcedManifest] = []
    problems: list[Problem] = []
    for item in items:
        key = (item.manifest.kind, item.manifest.metadata.name)
        if key in seen:
            problems.append(
                Problem(
                    f"{item.source}: {key[0]} {key[1]!r} is also defined in {seen[key]}; "
                    "a manifest is identified by kind and name - at `$.metadata.name`",
                    source=item.source,
                    field="$.metadata.name",
                    text=item.text,
                    document_index=item.document_index,
                )
            )
            continue
        seen[key] = item.source
        unique.append(item)
    return unique, problems
