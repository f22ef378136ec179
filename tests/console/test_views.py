"""The console's pure parts: the timeline geometry, the decision diff, the matrix diff."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from supportgate.console.decision_diff import diff_decisions
from supportgate.console.matrix_diff import diff_matrices
from supportgate.console.timeline import timeline
from supportgate.manifests.decision import Decision

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def decision(n: int, verdict: str, matrix: str = "2026.11.1", **fields: Any) -> Decision:
    base: dict[str, Any] = {
        "id": f"d{n}",
        "manifest": {"kind": "HardwareManifest", "name": "pool-a"},
        "verdict": verdict,
        "allowed": verdict != "rejected",
        "violations": [],
        "claims": {"builds": "proven", "correct": "unproven", "performant": "unproven"},
        "checklist": {
            "official_support": verdict == "supported",
            "kernels_and_correctness": "unproven",
            "distributed_performance": "unproven",
            "service_completeness": "not-applicable",
        },
        "recommendations": [],
        "matrix_version": matrix,
        "policy_revision": "sha256:" + "0" * 64,
        "input_digest": "sha256:" + "1" * 64,
        "evaluated_at": (T0 + timedelta(days=n)).isoformat(),
        "cause": "submission",
    }
    return msgspec.convert({**base, **fields}, Decision)


def violation(rule: str, severity: str = "warn", message: str = "m", path: str = "spec") -> Any:
    return {"rule": rule, "severity": severity, "message": message, "path": path}


def test_the_timeline_places_verdicts_in_time_and_marks_matrix_changes() -> None:
    assert timeline([]) is None
    decisions = [
        decision(3, "rejected", "2026.12.1"),
        decision(0, "experimental"),
        decision(1, "supported"),
        decision(2, "supported", "2026.12.1"),
    ]
    chart = timeline(decisions)
    assert chart is not None
    assert [p.decision_id for p in chart.points] == ["d0", "d1", "d2", "d3"]
    xs = [p.x for p in chart.points]
    assert xs == sorted(xs)
    assert chart.left < xs[0] < xs[-1] < chart.right_x
    assert xs[1] - xs[0] == xs[2] - xs[1]  # one day apart each: evenly spaced
    ys = {p.verdict: p.y for p in chart.points}
    assert ys["supported"] < ys["experimental"] < ys["rejected"]  # supported on top
    assert [(m.version, m.x) for m in chart.markers] == [("2026.11.1", xs[0]), ("2026.12.1", xs[2])]
    assert chart.line.startswith(f"M {xs[0]} ")
    assert chart.line.count(" H ") == 3
    single = timeline([decision(0, "supported")])
    assert single is not None
    assert single.points[0].x == chart.left + (chart.right_x - chart.left) / 2
    assert [m.anchor for m in chart.markers] == ["start", "end"]  # labels stay inside
    assert len(single.ticks) == 1


def test_the_decision_diff_matches_violations_on_rule_and_path() -> None:
    old = decision(
        0,
        "rejected",
        violations=[
            violation("support.platform"),
            violation("port.pinning", "deny", "engine missing", "spec.port.pinned"),
            violation("host.python", "deny", "old", "spec.python"),
        ],
        recommendations=["use vllm"],
    )
    new = decision(
        1,
        "experimental",
        "2026.12.1",
        violations=[
            violation("support.platform"),
            violation("port.pinning", "waived", "engine missing", "spec.port.pinned"),
            violation("evidence.stale", "warn", "stale", "spec.evidence.build"),
        ],
        claims={"builds": "proven", "correct": "proven", "performant": "unproven"},
    )
    for diff in (diff_decisions(old, new), diff_decisions(new, old)):
        assert diff.older.id == "d0"
        assert diff.verdict is not None
        assert (diff.verdict.before, diff.verdict.after) == ("rejected", "experimental")
        changes = {(c.change, c.rule) for c in diff.violations}
        assert changes == {
            ("added", "evidence.stale"),
            ("removed", "host.python"),
            ("changed", "port.pinning"),
        }
        assert diff.unchanged_violations == 1
        assert [(c.field, c.before, c.after) for c in diff.claims] == [
            ("correct", "unproven", "proven")
        ]
        assert [c.field for c in diff.checklist] == []
        assert diff.recommendations_removed == ("use vllm",)
        assert [c.field for c in diff.context] == ["matrix_version"]
        assert not diff.same
    assert diff_decisions(old, old).same


def test_the_matrix_diff_is_structural() -> None:
    old = {
        "version": "1",
        "evidence_max_age_days": 90,
        "engines": {
            "deepinfer": {
                "models": ["A", "B"],
                "platforms": [
                    {
                        "vendor": "nvidia",
                        "arch": "sm100",
                        "toolkit": {"name": "cuda", "min": "13.0"},
                    },
                    {"vendor": "ascend", "arch": "950", "toolkit": {"name": "cann", "min": "9.2"}},
                ],
                "host": {"os": ["linux"], "python": {"min": "3.12", "below": "3.13"}},
            },
            "old-engine": {"models": [], "platforms": [], "host": {"os": ["linux"]}},
        },
        "alternatives": [{"name": "vllm", "platforms": [{"vendor": "nvidia", "arch": "sm90"}]}],
        "accelerators": [{"vendor": "nvidia", "models": ["*H100*"], "arch": "sm90"}],
    }
    new = {
        "version": "2",
        "evidence_max_age_days": 90,
        "engines": {
            "deepinfer": {
                "models": ["B", "C"],
                "platforms": [
                    {"vendor": "ascend", "arch": "950", "toolkit": {"name": "cann", "min": "9.2"}},
                    {
                        "vendor": "nvidia",
                        "arch": "sm100",
                        "toolkit": {"name": "cuda", "min": "13.1"},
                    },
                    {"vendor": "nvidia", "arch": "sm90", "toolkit": {"name": "cuda"}},
                ],
                "host": {"os": ["linux"], "python": {"min": "3.12", "below": "3.14"}},
            },
        },
        "alternatives": [
            {"name": "vllm", "platforms": [{"vendor": "nvidia", "arch": "sm90"}]},
            {"name": "sglang", "platforms": []},
        ],
        "accelerators": [{"vendor": "nvidia", "models": ["*H100*"], "arch": "sm90a"}],
    }
    found = {(c.change, c.section, c.path, c.before, c.after) for c in diff_matrices(old, new)}
    assert found == {
        ("changed", "version", "", "1", "2"),
        ("added", "engine deepinfer", "models", None, "C"),
        ("removed", "engine deepinfer", "models", "A", None),
        ("changed", "engine deepinfer", "platforms[nvidia/sm100].toolkit.min", "13.0", "13.1"),
        (
            "added",
            "engine deepinfer",
            "platforms[nvidia/sm90]",
            None,
            '{"vendor":"nvidia","arch":"sm90","toolkit":{"name":"cuda"}}',
        ),
        ("changed", "engine deepinfer", "host.python.below", "3.13", "3.14"),
        (
            "removed",
            "engine old-engine",
            "",
            '{"models":[],"platforms":[],"host":{"os":["linux"]}}',
            None,
        ),
        ("added", "alternatives", "[sglang]", None, '{"name":"sglang","platforms":[]}'),
        ("changed", "accelerators", "[nvidia/*H100*].arch", "sm90", "sm90a"),
    }
    assert diff_matrices(old, old) == ()
