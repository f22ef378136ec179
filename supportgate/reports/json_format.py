"""`--format json` (docs/reports.md). Keys keep their order and the decision its Struct field
order: equal input gives byte-equal output.
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
