"""`supportgate collect`: its flags and its run, registered by supportgate/cli.py."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

from supportgate.errors import UsageError

from .options import FORMATS, OPTIONAL_FIELDS, CollectOptions, Vendor

EXIT_OK = 0

DESCRIPTION = """\
Write a HardwareManifest for this machine. Probes nvidia-smi (or npu-smi), nvcc (or the CANN
install info), gcc, python3, uname and /etc/os-release; a flag given for a value replaces its
probe. What cannot be probed or was not given is listed by field and flag, and the command
exits 2 without writing anything. See docs/collect.md."""


def add_parser(commands: argparse._SubParsersAction[Any]) -> None:
    cmd = commands.add_parser(
        "collect",
        help="write a HardwareManifest for this machine",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    out = cmd.add_argument_group("output")
    out.add_argument(
        "--output", "-o", type=Path, metavar="FILE", help="write here (default stdout)"
    )
    out.add_argument("--format", choices=FORMATS, default="yaml")

    ident = cmd.add_argument_group("identity and pool (cannot be probed)")
    ident.add_argument("--name", required=True, help="metadata.name, a DNS label")
    ident.add_argument("--owner", help="metadata.owner")
    ident.add_argument(
        "--label", action="append", default=[], metavar="KEY=VALUE", help="metadata.labels entry"
    )
    ident.add_argument(
        "--nodes", type=int, default=1, help="machines in the pool like this one (default 1)"
    )
    ident.add_argument("--scale-up-domain", type=int, help="accelerators in one NVLink/HCCS domain")
    ident.add_argument("--fabric", help="interconnect.fabric, e.g. nvlink4, hccs")

    acc = cmd.add_argument_group("accelerator (probed by nvidia-smi / npu-smi)")
    acc.add_argument("--vendor", choices=get_args(Vendor), default="auto")
    acc.add_argument("--model")
    acc.add_argument("--arch", help="sm90, sm100, ... for NVIDIA; 910b, 950 for Ascend")
    acc.add_argument("--memory-gib", type=float)
    acc.add_argument("--per-node", type=int, help="accelerators per node (default: all found)")
    acc.add_argument(
        "--gpu-model", help="on a machine with mixed GPUs, describe those of this model"
    )
    acc.add_argument("--driver", help="the accelerator driver version")

    host = cmd.add_argument_group("toolkit and host")
    host.add_argument("--toolkit-name", help="cuda | cann | rocm ... (default from the vendor)")
    host.add_argument("--toolkit-version", help="e.g. 12.8 (default: nvcc / CANN install info)")
    host.add_argument("--os-name", help="default: uname -s, lower case")
    host.add_argument("--distribution", help="default: ID-VERSION_ID from /etc/os-release")
    host.add_argument("--kernel", help="default: uname -r up to the first non-number")
    host.add_argument("--compiler-name", default="gcc", help="the compiler to ask (default gcc)")
    host.add_argument("--compiler-version")
    host.add_argument(
        "--python-command", default="python3", help="the Python to ask (default python3)"
    )
    host.add_argument("--python-version")
    host.add_argument(
        "--omit",
        action="append",
        default=[],
        choices=OPTIONAL_FIELDS,
        help="leave this optional spec field out on purpose (repeatable)",
    )
    cmd.set_defaults(run=run)


def options_from(args: argparse.Namespace) -> CollectOptions:
    labels: dict[str, str] = {}
    for item in args.label:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"wants KEY=VALUE, got {item!r}", field="--label")
        labels[key] = value
    derived: dict[str, Any] = {"labels": labels, "omit": frozenset(args.omit)}
    given = {f.name: getattr(args, f.name) for f in fields(CollectOptions) if f.name not in derived}
    return CollectOptions(**given, **derived)


def run(args: argparse.Namespace) -> int:
    from .probe import SystemProbe  # noqa: PLC0415 - only `collect` loads them (options.py)
    from .render import render  # noqa: PLC0415 - only `collect` loads them (options.py)
    from .services import collect  # noqa: PLC0415 - only `collect` loads them (options.py)

    manifest = collect(options_from(args), SystemProbe())
    text = render(manifest, args.format)
    if args.output is None:
        sys.stdout.write(text)
    else:
        _write(args.output, text)
        print(f"wrote {args.output}", file=sys.stderr)
    return EXIT_OK


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a temporary file beside `path`, renamed over it."""
    import tempfile  # noqa: PLC0415 - only --output needs it, and every command loads this module

    directory = path.parent if str(path.parent) else Path()
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(temporary).replace(path)
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}", field="--output") from None
