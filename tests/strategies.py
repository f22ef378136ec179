"""Hypothesis strategies for valid manifests and matrices, as canonical builtins dicts.

Each strategy draws a dict in the canonical form `supportgate.manifests.to_builtins` produces
(absent optional fields omitted, times in UTC with `Z`, versions as strings), so that
`to_builtins(decode(dump(d))) == d`. The mix is realistic: NVIDIA, Ascend and AMD pools
with their toolkits, deployments by reference to a small set of pool names or inline,
partially filled service/port/evidence, and evidence times within the 200 days before NOW.

    hardware_manifests()    HardwareManifest dicts
    deployment_manifests()  DeploymentManifest dicts (hardware by ref or inline spec)
    manifests()             either
    matrices()              support matrix dicts
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final

from hypothesis import strategies as st

Doc = dict[str, Any]

NOW: Final = datetime(2026, 11, 30, tzinfo=UTC)
"""The evaluation time the fixtures are written against (examples/expected.yaml)."""

WAIVED_RULES: Final = (
    "host.os",
    "host.compiler",
    "host.python",
    "support.toolkit",
    "support.engine",
    "port.production",
    "port.pinning",
    "port.isolation",
    "service.kv_cache",
    "service.not-provided",
    "topology.capacity",
    "manifest.hardware-ref",
)
"""The deny rules generated waivers name (the parity and the policy-tree oracle tests)."""

POOL_NAMES: Final = (
    "h100-pool-a",
    "b200-pool",
    "ascend950-pool",
    "rtx4090-workstation",
    "mi300x-pool",
)

# vendor, arch, accelerator model, memory GiB, toolkit name
ACCELERATORS: Final = (
    ("nvidia", "sm80", "A100-SXM4-80GB", 80, "cuda"),
    ("nvidia", "sm89", "GeForce RTX 4090", 24, "cuda"),
    ("nvidia", "sm90", "H100-SXM5-80GB", 80, "cuda"),
    ("nvidia", "sm90a", "H200-SXM-141GB", 141, "cuda"),
    ("nvidia", "sm100", "B200-SXM-180GB", 180, "cuda"),
    ("nvidia", "sm120", "GeForce RTX 5090", 32, "cuda"),
    ("ascend", "910b", "Ascend 910B", 64, "cann"),
    ("ascend", "950", "Ascend 950", 128, "cann"),
    ("amd", "gfx942", "Instinct MI300X", 192, "rocm"),
)
TOOLKIT_VERSIONS: Final = {
    "cuda": ("12.4", "12.6", "12.8", "13.0", "13.0.1", "13.1"),
    "cann": ("8.0", "9.1", "9.2", "9.2.1", "9.3"),
    "rocm": ("6.2", "6.3.1", "7.0"),
}
TOOLKIT_RANGES: Final = {  # (min, below); None leaves that side open
    "cuda": (("12.4", "13"), ("13.0", "14"), ("12.8", None)),
    "cann": (("9.2", "9.3"), ("8.0", "9"), (None, "10")),
    "rocm": (("6.2", "7"), ("6.3", None)),
}
ENGINES: Final = ("deepinfer", "vllm", "sglang")
MODELS: Final = ("DeepSeek-V4.1-Flash", "DeepSeek-V4.1", "Qwen3-235B-A22B", "Llama-4-Maverick")
COMPONENTS: Final = (
    "kv_cache",
    "pd_orchestration",
    "load_balancing",
    "authentication",
    "http_transport",
    "api_compatibility",
)
EVIDENCE: Final = (
    "build",
    "numerical_parity",
    "structured_output",
    "long_context",
    "distributed_stability",
    "performance",
    "workload_improvement",
)
ARCH_DEPENDENCIES: Final = ("flashmla", "deepgemm", "deepep", "tilelang")

dns_labels = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?\Z")
versions = st.lists(st.from_regex(r"\A[0-9]{1,3}\Z"), min_size=1, max_size=4).map(
    ".".join
)  # leading zeros included ("560.35.03")
texts = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=24
)


@st.composite
def times(draw: st.DrawFn) -> str:
    """An RFC 3339 time in UTC within the 200 days before NOW, as the canonical form has it."""
    seconds = draw(st.integers(0, 200 * 24 * 3600))
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _some(**optional: st.SearchStrategy[Any]) -> st.SearchStrategy[Doc]:
    """A dict holding any subset of `optional` (possibly none)."""
    return st.fixed_dictionaries({}, optional=optional)


def _metadata() -> st.SearchStrategy[Doc]:
    return st.fixed_dictionaries(
        {"name": dns_labels},
        optional={
            "owner": st.sampled_from(("infra", "ml-platform", "research")) | texts,
            "labels": st.dictionaries(
                st.sampled_from(("site", "team", "app.kubernetes.io/name")) | texts,
                st.sampled_from(("fra1", "iad2", "serving", "1", "no", "3.10")) | texts,
                min_size=1,
            ),
        },
    )


@st.composite
def hardware_specs(draw: st.DrawFn) -> Doc:
    vendor, arch, model, memory, toolkit = draw(st.sampled_from(ACCELERATORS))
    per_node = draw(st.sampled_from((1, 2, 4, 8, 16)))
    accelerator: Doc = {"vendor": vendor, "model": model, "arch": arch, "per_node": per_node}
    if draw(st.booleans()):
        accelerator["memory_gib"] = memory
    spec: Doc = {
        "accelerator": accelerator,
        "nodes": draw(st.integers(1, 72)),
        "toolkit": {"name": toolkit, "version": draw(st.sampled_from(TOOLKIT_VERSIONS[toolkit]))},
    }
    spec |= draw(
        _some(
            interconnect=st.fixed_dictionaries(
                {"scale_up_domain": st.sampled_from((1, 8, 16, 64, 72))},
                optional={"fabric": st.sampled_from(("nvlink4", "nvlink5", "hccs", "xgmi"))},
            ),
            driver=st.sampled_from(("570.86.15", "580.65.06", "560.35.03", "25.2.0")) | versions,
            os=st.fixed_dictionaries(
                {"name": st.just("linux")},
                optional={
                    "distribution": st.sampled_from(("ubuntu-24.04", "openeuler-24.03")),
                    "kernel": st.sampled_from(("6.8.0", "5.15.0", "6.6.0")),
                },
            ),
            compiler=st.fixed_dictionaries(
                {"name": st.just("gcc"), "version": st.sampled_from(("12.2.0", "13.2.0", "14.2"))}
            ),
            python=st.sampled_from(("3.10", "3.11.2", "3.12.7", "3.13")),
        )
    )
    return spec


def hardware_manifests() -> st.SearchStrategy[Doc]:
    return st.fixed_dictionaries(
        {
            "kind": st.just("HardwareManifest"),
            "apiVersion": st.just("supportgate/v1"),
            "metadata": _metadata(),
            "spec": hardware_specs(),
        }
    )


def _evidence_item(name: str) -> st.SearchStrategy[Doc]:
    optional: dict[str, st.SearchStrategy[Any]] = {
        "at": times(),
        "ref": st.sampled_from(("ci://builds/812", "https://ci.example/runs/9")),
        "reference_runtime": st.sampled_from(("vllm", "sglang")),
    }
    if name == "performance":
        numbers = st.integers(0, 5000) | st.floats(0, 1e5, allow_nan=False, allow_infinity=False)
        for figure in ("prefill_latency_ms", "decode_latency_ms", "memory_gib", "recovery_s"):
            optional[figure] = numbers
        optional["concurrency"] = st.integers(0, 4096)
    status = st.sampled_from(("passed", "failed", "absent"))
    return st.fixed_dictionaries({"status": status}, optional=optional)


def _component() -> st.SearchStrategy[Doc]:
    return st.fixed_dictionaries(
        {"source": st.sampled_from(("builtin", "external", "missing"))},
        optional={
            "provider": st.sampled_from(("lmcache", "envoy", "oauth2-proxy", "deepseek-recipe")),
            "persistent": st.booleans(),
        },
    )


def _port() -> st.SearchStrategy[Doc]:
    pins = _some(
        engine=st.just("1.0.0"),
        toolkit=st.sampled_from(("12.8", "9.2")),
        driver=st.just("570.86.15"),
        compiler=st.just("gcc-13.2.0"),
        model=st.just("sha256:5be1c0"),
    )
    statuses = st.sampled_from(("ported", "unported", "unknown"))
    return _some(
        production_stack_unchanged=st.booleans(),
        isolated_branch=st.booleans(),
        pinned=pins,
        arch_dependencies=st.dictionaries(st.sampled_from(ARCH_DEPENDENCIES), statuses),
    )


def deployment_specs() -> st.SearchStrategy[Doc]:
    hardware = st.fixed_dictionaries({"ref": st.sampled_from(POOL_NAMES)}) | (
        st.fixed_dictionaries({"spec": hardware_specs()})
    )
    engine = st.fixed_dictionaries(
        {"name": st.sampled_from(ENGINES), "version": st.sampled_from(("1.0.0", "0.9", "1.1"))},
        optional={"commit": st.sampled_from(("3f2a9c1", "a1b2c3d"))},
    )
    model = st.fixed_dictionaries(
        {"name": st.sampled_from(MODELS)},
        optional={"quantization": st.sampled_from(("fp8", "bf16", "int4"))},
    )
    gpus = st.integers(0, 128)
    return st.fixed_dictionaries(
        {
            "hardware": hardware,
            "engine": engine,
            "model": model,
            "stage": st.sampled_from(("evaluation", "experimental", "production")),
            "mode": st.sampled_from(("offline", "online")),
            "topology": st.fixed_dictionaries({"prefill_gpus": gpus, "decode_gpus": gpus}),
        },
        optional={
            "service": _some(**{name: _component() for name in COMPONENTS}),
            "port": _port(),
            "evidence": _some(**{name: _evidence_item(name) for name in EVIDENCE}),
        },
    )


def deployment_manifests() -> st.SearchStrategy[Doc]:
    return st.fixed_dictionaries(
        {
            "kind": st.just("DeploymentManifest"),
            "apiVersion": st.just("supportgate/v1"),
            "metadata": _metadata(),
            "spec": deployment_specs(),
        }
    )


def manifests() -> st.SearchStrategy[Doc]:
    return hardware_manifests() | deployment_manifests()


@st.composite
def _platform(draw: st.DrawFn) -> Doc:
    vendor, arch, _model, _memory, toolkit = draw(st.sampled_from(ACCELERATORS))
    low, below = draw(st.sampled_from(TOOLKIT_RANGES[toolkit]))
    bounds = {"min": low, "below": below}
    return {
        "vendor": vendor,
        "arch": arch,
        "toolkit": {"name": toolkit} | {k: v for k, v in bounds.items() if v is not None},
    }


def _engine_support() -> st.SearchStrategy[Doc]:
    python = st.sampled_from(({"min": "3.12", "below": "3.13"}, {"min": "3.10"}, {"below": "4"}))
    host = st.fixed_dictionaries(
        {"os": st.just(["linux"])},
        optional={
            "compiler": st.fixed_dictionaries(
                {"name": st.just("gcc"), "min": st.sampled_from(("13", "12.2"))}
            ),
            "python": python,
        },
    )
    return st.fixed_dictionaries(
        {
            "models": st.lists(st.sampled_from(MODELS), max_size=3, unique=True),
            "platforms": st.lists(_platform(), min_size=1, max_size=4),
            "host": host,
        },
        optional={
            "provides": st.lists(st.sampled_from(COMPONENTS), min_size=1, unique=True),
            "arch_dependencies": st.lists(
                st.sampled_from(ARCH_DEPENDENCIES), min_size=1, unique=True
            ),
            "reference_topology": st.fixed_dictionaries(
                {
                    "prefill_gpus": st.sampled_from((4, 8)),
                    "decode_gpus": st.sampled_from((64, 48)),
                    "single_scale_up_domain": st.booleans(),
                }
            ),
        },
    )


@st.composite
def matrices(draw: st.DrawFn) -> Doc:
    names = draw(st.lists(st.sampled_from(ENGINES), min_size=1, max_size=3, unique=True))
    matrix: Doc = {
        "version": draw(st.from_regex(r"\A20[0-9]{2}\.(1[0-2]|[1-9])\.[0-9]{1,2}\Z")),
        "evidence_max_age_days": draw(st.integers(0, 365)),
        "engines": {name: draw(_engine_support()) for name in names},
    }
    if draw(st.booleans()):
        matrix["effective_from"] = draw(times())
    if draw(st.booleans()):
        matrix["default_engine"] = draw(st.sampled_from(names))
    alternatives = st.fixed_dictionaries(
        {
            "name": st.sampled_from(("vllm", "sglang", "tensorrt-llm")),
            "platforms": st.lists(
                st.sampled_from(ACCELERATORS).map(lambda a: {"vendor": a[0], "arch": a[1]}),
                min_size=1,
                max_size=3,
            ),
        }
    )
    if draw(st.booleans()):
        matrix["alternatives"] = draw(st.lists(alternatives, min_size=1, max_size=3))
    return matrix
