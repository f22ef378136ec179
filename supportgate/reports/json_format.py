"""`--format json`: the gate, the problems and every decision, for machines.

    {"gate": {"fail_on": ..., "status": "passed" | "failed" | "error", "passed": bool},
     "errors": [{"source": ..., "field": ..., "line": ..., "column": ..., "message": ...}],
     "results": [{"source": ..., "passed": bool, "decision": <Decision>}]}

`errors` is always there (empty when nothing kept check from judging), one per problem (a
manifest with several problems has an error for each); `source`, `field`, `line` and
`column` of an error are null when they do not apply or are not known. Keys keep this order and the
decision keeps its Struct field order, so equal input gives byte-equal output.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from supportgate.reports.model import Report, gate_failed, problem_line


def render_json(report: Report) -> str:
    document: dict[str, Any] = {
        "gate": {
            "fail_on": report.fail_on,
            "status": report.status,
            "passed": report.status == "passed",
        },
        "errors": [
            {
                "source": problem.source,
                "field": problem.field,
                "line": problem_line(problem),
                "column": problem.column,
                "message": problem.message,
            }
            for problem in report.problems
        ],
        "results": [
            {
                "source": result.source,
                "passed": not gate_failed(result.decision, report.fail_on),
                "decision": msgspec.to_builtins(result.decision),
            }
            for result in report.results
        ],
    }
    return json.dumps(document, indent=2) + "\n"
