"""The two helpers of CONTRACT 10.3 and 10.5 that stand on their own, queried directly in
both engines: the default matrix's hardware catalogue against the names people and tools
write, and the "within two edits" test against a Levenshtein distance computed in Python."""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

import pytest
import regorus

from supportgate.policy import PolicyBundle
from supportgate.policy.prepared import identity

from ..engines import default_matrix

pytestmark = pytest.mark.fast

# model as written -> (vendor, the first pattern of the one family it belongs to, its arch)
REAL_NAMES: dict[str, tuple[str, str, str]] = {
    "A100-SXM4-80GB": ("nvidia", "*a100", "sm80"),
    "NVIDIA A100-SXM4-80GB": ("nvidia", "*a100", "sm80"),
    "NVIDIA A100 80GB PCIe": ("nvidia", "*a100", "sm80"),
    "NVIDIA-A100-SXM4-40GB": ("nvidia", "*a100", "sm80"),
    "H100-SXM5-80GB": ("nvidia", "*h100", "sm90"),
    "NVIDIA H100 80GB HBM3": ("nvidia", "*h100", "sm90"),
    "NVIDIA-H100-80GB-HBM3": ("nvidia", "*h100", "sm90"),
    "NVIDIA H100 PCIe": ("nvidia", "*h100", "sm90"),
    "NVIDIA H100 NVL": ("nvidia", "*h100", "sm90"),
    "h100": ("nvidia", "*h100", "sm90"),
    "H200": ("nvidia", "h200", "sm90"),
    "NVIDIA H200": ("nvidia", "h200", "sm90"),
    "NVIDIA H200 NVL": ("nvidia", "h200", "sm90"),
    "NVIDIA-H200": ("nvidia", "h200", "sm90"),
    "H200-SXM-141GB": ("nvidia", "h200", "sm90"),
    "H20": ("nvidia", "h20", "sm90"),
    "NVIDIA H20": ("nvidia", "h20", "sm90"),
    "NVIDIA-H20": ("nvidia", "h20", "sm90"),
    "H20-96GB": ("nvidia", "h20", "sm90"),
    "NVIDIA GH200 480GB": ("nvidia", "*gh200*", "sm90"),
    "NVIDIA-GH200-480GB": ("nvidia", "*gh200*", "sm90"),
    "GH200": ("nvidia", "*gh200*", "sm90"),
    "B200": ("nvidia", "b200", "sm100"),
    "B200-SXM-180GB": ("nvidia", "b200", "sm100"),
    "NVIDIA B200": ("nvidia", "b200", "sm100"),
    "NVIDIA-B200": ("nvidia", "b200", "sm100"),
    "NVIDIA GB200": ("nvidia", "*gb200*", "sm100"),
    "NVIDIA-GB200-NVL72": ("nvidia", "*gb200*", "sm100"),
    "GB200": ("nvidia", "*gb200*", "sm100"),
    "B300": ("nvidia", "b300", "sm103"),
    "NVIDIA B300 SXM6 AC": ("nvidia", "b300", "sm103"),
    "NVIDIA-B300-SXM6-AC": ("nvidia", "b300", "sm103"),
    "NVIDIA GB300": ("nvidia", "*gb300*", "sm103"),
    "GB300": ("nvidia", "*gb300*", "sm103"),
    "NVIDIA L40S": ("nvidia", "*l40s*", "sm89"),
    "NVIDIA-L40S": ("nvidia", "*l40s*", "sm89"),
    "NVIDIA GeForce RTX 4090": ("nvidia", "*rtx*4090*", "sm89"),
    "NVIDIA-GeForce-RTX-4090": ("nvidia", "*rtx*4090*", "sm89"),
    "GeForce RTX 4090": ("nvidia", "*rtx*4090*", "sm89"),
    "RTX 4090 D": ("nvidia", "*rtx*4090*", "sm89"),
    "NVIDIA GeForce RTX 5090": ("nvidia", "*rtx*5090*", "sm120"),
    "NVIDIA-GeForce-RTX-5090": ("nvidia", "*rtx*5090*", "sm120"),
    "Ascend 910B": ("ascend", "*910b*", "910b"),
    "Ascend910B3": ("ascend", "*910b*", "910b"),
    "Ascend 950": ("ascend", "*950*", "950"),
    "Ascend 950PR": ("ascend", "*950*", "950"),
}
# Names no family may claim: other cards, and a family's name under another vendor.
UNKNOWN_NAMES: list[tuple[str, str]] = [
    ("nvidia", "NVIDIA RTX A1000"),
    ("nvidia", "NVIDIA L4"),
    ("nvidia", "Tesla V100-SXM2-32GB"),
    ("nvidia", "Ascend 950"),
    ("amd", "Instinct MI300X"),
    ("amd", "H100"),
]
CONSUMER = {"*rtx*4090*", "*rtx*5090*"}

_CATALOGUE_QUERY = """[[accelerator.vendor, accelerator.model, families] |
    some accelerator in input.accelerators
    families := [[entry.patterns[0], entry.arch, entry.consumer] |
        some entry in data.supportgate.lib.catalogued(accelerator)]]"""
_DISTANCE_QUERY = """[pair |
    some pair in input.pairs
    data.supportgate.lib.within_two_edits(pair[0], pair[1])]"""


def _both(bundle: PolicyBundle, opa_binary: str, query: str, policy_input: Any) -> Any:
    """The query's value in regorus and in OPA (which must agree), on the default matrix."""
    engine = regorus.Engine()
    for name, text in bundle.modules:
        engine.add_policy(name, text)
    engine.add_data_json(default_matrix(bundle).data_json())
    engine.set_input(policy_input)
    embedded = engine.eval_query(query)["result"][0]["expressions"][0]["value"]
    ran = subprocess.run(
        [
            opa_binary,
            "eval",
            "--format",
            "json",
            "--stdin-input",
            "-d",
            str(bundle.directory),
            query,
        ],
        input=json.dumps(policy_input),
        capture_output=True,
        text=True,
        check=True,
    )
    assert embedded == json.loads(ran.stdout)["result"][0]["expressions"][0]["value"]
    return embedded


def test_the_default_catalogue_knows_the_names_people_and_tools_write(
    policy_bundle: PolicyBundle, opa_binary: str
) -> None:
    accelerators = [
        {"vendor": vendor, "model": model} for model, (vendor, _, _) in REAL_NAMES.items()
    ]
    accelerators += [{"vendor": vendor, "model": model} for vendor, model in UNKNOWN_NAMES]
    answers = _both(policy_bundle, opa_binary, _CATALOGUE_QUERY, {"accelerators": accelerators})
    found = {(vendor, model): families for vendor, model, families in answers}
    for model, (vendor, family, arch) in REAL_NAMES.items():
        assert found[vendor, model] == [[family, arch, family in CONSUMER]], model
    for vendor, model in UNKNOWN_NAMES:
        assert found[vendor, model] == [], model


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def _near_pairs(count: int) -> list[list[str]]:
    """Pairs of short strings over a small alphabet, the second one to four random edits
    away from the first: distances 0 to 4, common prefixes and suffixes, repeated letters."""
    rng = random.Random(21)  # noqa: S311 (fixed seed: a failure must be reproducible)
    alphabet = "ab-."
    pairs = []
    for _ in range(count):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        b = list(a)
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(b))
            edit = rng.choice(("insert", "delete", "substitute"))
            if edit == "insert":
                b.insert(at, rng.choice(alphabet))
            elif b and at < len(b):
                if edit == "delete":
                    del b[at]
                else:
                    b[at] = rng.choice(alphabet)
        pairs.append([a, "".join(b)])
    return pairs


def test_within_two_edits_is_a_levenshtein_distance_of_one_or_two(
    policy_bundle: PolicyBundle, opa_binary: str
) -> None:
    pairs = _near_pairs(3000)
    within = {
        tuple(pair) for pair in _both(policy_bundle, opa_binary, _DISTANCE_QUERY, {"pairs": pairs})
    }
    expected = {(a, b) for a, b in pairs if 0 < _levenshtein(a, b) <= 2}
    assert {_levenshtein(a, b) for a, b in pairs} >= {0, 1, 2, 3, 4}
    assert within == expected


def test_python_prepares_names_in_the_identity_the_policies_compare(
    policy_bundle: PolicyBundle, opa_binary: str
) -> None:
    names = ["DeepSeek Recipe", "deepseek_recipe", " -Deep--Infer_ ", "DeepSeek-V4.1-Flash", "vLLM"]
    query = "[data.supportgate.lib.identity(name) | some name in input.names]"
    assert _both(policy_bundle, opa_binary, query, {"names": names}) == [identity(n) for n in names]
