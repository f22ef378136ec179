"""`supportgate policy rules | test | check` (docs/organisation-policies.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import msgspec

from supportgate.config import Settings

from .bundle import PolicyBundle
from .catalog import read_catalog
from .org import read_bundles
from .org_check import refuse_problems

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    policy = commands.add_parser(
        "policy", help="the policies: built-in and organisation bundles"
    ).add_subparsers(
        dest="policy_command", metavar="COMMAND", required=True, parser_class=parser_class
    )
    policy.add_parser(
        "rules",
        help="print the policy revision, bundles and rules (as GET /v1/policy), as JSON",
    ).set_defaults(run=_rules)
    test = policy.add_parser(
        "test", help="run the Rego tests of the built-in policies and of the given bundles"
    )
    test.add_argument("dirs", nargs="*", type=Path, metavar="DIR")
    test.set_defaults(run=_test)
    check = policy.add_parser(
        "check", help="check organisation bundles: ids, METADATA, packages, compiling"
    )
    check.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    check.set_defaults(run=_check)


def _rules(_: argparse.Namespace) -> int:
    settings = Settings.from_env(os.environ)
    bundle = PolicyBundle.load(settings.policy_dir, settings.policy_bundles)
    from .views import policy_view  # noqa: PLC0415 - the API's shape, not `check`'s

    view = policy_view(bundle, read_catalog(bundle.modules))
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(view)).decode() + "\n")
    return EXIT_OK


def _test(args: argparse.Namespace) -> int:
    from .rego_tests import run_tests  # noqa: PLC0415 - subprocess is not `check`'s to load

    policies = PolicyBundle.read(Settings.from_env(os.environ).policy_dir)
    bundles = read_bundles(args.dirs, field=None)
    return EXIT_OK if run_tests(policies, bundles, out=sys.stdout) else EXIT_FAILED


def _check(args: argparse.Namespace) -> int:
    # field None: each refusal names its file, a leading `DIR:` would say nothing more
    policies = PolicyBundle.read(Settings.from_env(os.environ).policy_dir, args.dirs, field=None)
    refuse_problems(policies, field=None)
    bundles = policies.bundles
    rules = read_catalog(module for bundle in bundles for module in bundle.modules)
    for bundle in bundles:
        count = sum(rule.source == bundle.name for rule in rules.values())
        print(f"{bundle.source}: {count} rules, revision {bundle.revision}")
    return EXIT_OK
