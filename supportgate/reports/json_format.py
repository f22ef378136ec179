"""`--format json`: the gate and every decision, for machines.

    {"gate": {"fail_on": ..., "passed": bool},
     "results": [{"source": ..., "passed": bool, "decision": <Decision>}]}

Keys keep this order and the decision keeps its Struct field order, so equal input gives
byte-equal output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from supportgate.reports.model import CheckedManifest, FailOn, any_failed, gate_failed


def render_json(results: Sequence[CheckedManifest], fail_on: FailOn) -> str:
    document: dict[str, Any] = {
        "gate": {"fail_on": fail_on, "passed": not any_failed(results, fail_on)},
        "results": [
            {
                "source": result.source,
                "passed": not gate_failed(result.decision, fail_on),
                "decision": msgspec.to_builtins(result.decision),
            }
            for result in results
        ],
    }
    return json.dumps(document, indent=2) + "\n"
