# Evidence that says passed but proves nothing (CONTRACT 10.1, docs/domain.md "Evidence that
# proves something"): one warning per item and reason, at the item's path. What makes an
# item proof, and each reason it is not, is worked out once in lib/evidence/evidence.rego (the claims,
# the checklist and port.production count only proof).
package supportgate.evidence

# The evidence concern has no deny rules; the empty set keeps the concern interface uniform.
deny := set()

# applies: some item says passed but proves nothing. Every warn here requires it, and the
# decision reads evidence.warn only when it holds.
applies if data.supportgate.lib.evidence.unproven

# METADATA
# title: Unreferenced evidence
# description: >-
#   An evidence item says passed but has no `at` or no `ref`: nobody can tell when it ran or
#   look its result up, so it is no proof. One warning per item.
# custom:
#   id: evidence.unreferenced
#   severity: warn
#   remediation: >-
#     Record when the check ran (`at`, RFC 3339) and where its result can be looked up (`ref`:
#     the CI run or report) on the evidence item.
warn contains {"rule": "evidence.unreferenced", "path": _path(flaw), "message": flaw.message} if {
	some flaw in data.supportgate.lib.evidence.flaws
	flaw.rule == "evidence.unreferenced"
}

# METADATA
# title: Evidence from the future
# description: >-
#   An evidence item says passed but its `at` lies more than 5 minutes after the evaluation
#   time (input.evaluated_at): a result not yet obtained is no proof. One warning per item.
# custom:
#   id: evidence.future
#   severity: warn
#   remediation: >-
#     Correct the item's `at` to the time the check actually ran (in UTC or with its offset);
#     it counts as proof from that time on.
warn contains {"rule": "evidence.future", "path": _path(flaw), "message": flaw.message} if {
	some flaw in data.supportgate.lib.evidence.flaws
	flaw.rule == "evidence.future"
}

# METADATA
# title: Stale evidence
# description: >-
#   An evidence item says passed but its `at` is older than the matrix's
#   evidence_max_age_days at evaluation time (input.evaluated_at): it no longer counts as
#   proof. One warning per stale item.
# custom:
#   id: evidence.stale
#   severity: warn
#   remediation: >-
#     Re-run the stale check and record the new result with a fresh `at` time, or replace the
#     evidence item; the matrix's evidence_max_age_days sets how old evidence may be.
warn contains {"rule": "evidence.stale", "path": _path(flaw), "message": flaw.message} if {
	some flaw in data.supportgate.lib.evidence.flaws
	flaw.rule == "evidence.stale"
}

# METADATA
# title: Incomplete evidence
# description: >-
#   numerical_parity says passed without naming its reference_runtime, or performance says
#   passed without prefill_latency_ms, decode_latency_ms, concurrency and memory_gib above 0
#   and recovery_s of 0 or more: the claim has nothing to rest on.
# custom:
#   id: evidence.incomplete
#   severity: warn
#   remediation: >-
#     Name the runtime the parity run compared against (reference_runtime), and record the
#     measured prefill_latency_ms, decode_latency_ms, concurrency, memory_gib and recovery_s
#     on the performance item.
warn contains {"rule": "evidence.incomplete", "path": _path(flaw), "message": flaw.message} if {
	some flaw in data.supportgate.lib.evidence.flaws
	flaw.rule == "evidence.incomplete"
}

# _path: the evidence item a flaw is about.
_path(flaw) := sprintf("spec.evidence.%v", [flaw.item])
