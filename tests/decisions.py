"""What tests put in a Decision they make without a policy engine, where every claim holds."""

from __future__ import annotations

from supportgate.manifests.decision import Checklist, Claims

PROVEN_CLAIMS = Claims(builds="proven", correct="proven", performant="proven")
PROVEN_CHECKLIST = Checklist(
    official_support=True,
    kernels_and_correctness="proven",
    distributed_performance="proven",
    service_completeness="complete",
)
