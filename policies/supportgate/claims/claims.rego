# The three claims kept apart (docs/domain.md): a build proves only that the code compiles;
# correctness and performance need their own evidence, and only proof counts
# (lib/evidence/evidence.rego: passed, dated, referenced, fresh and complete).
#
# claims.* fire for deployments on an unlisted *platform* (an unlisted model on a listed
# platform is support.model's business) and for every deployment at stage production (the
# pre-migration checklist's points 2 and 3 hold for every production rollout, CONTRACT
# 10.1): one warning per evidence item that is not proof. A missing evidence item counts as
# absent. Why an item that says passed is no proof is reported by the evidence concern.
package supportgate.claims

# The claims concern has no deny rules; the empty set keeps the concern interface uniform.
deny := set()

# METADATA
# title: Correctness evidence
# description: >-
#   A deployment on an unlisted platform or at stage production lacks proof of
#   numerical_parity, structured_output, long_context or distributed_stability (one warning
#   per item that is not proof).
# custom:
#   id: claims.correctness
#   severity: warn
#   remediation: >-
#     Run the missing correctness checks (numerical_parity against a reference runtime,
#     structured_output, long_context, distributed_stability) on this platform and record each
#     as evidence with status passed, its time (`at`) and a `ref`; name the reference_runtime
#     of numerical_parity.
warn contains {"rule": "claims.correctness", "path": sprintf("spec.evidence.%v", [item]), "message": message} if {
	scope := _scope
	proven := data.supportgate.lib.evidence.proof
	some item in data.supportgate.lib.evidence.correctness_items
	not item in proven
	message := sprintf(
		"%v %v is not proof (%v): a build proves only that the code compiles, not that results are correct",
		[item, scope, data.supportgate.lib.evidence.not_proof(item)],
	)
}

# METADATA
# title: Performance evidence
# description: >-
#   A deployment on an unlisted platform or at stage production lacks proof of its
#   performance.
# custom:
#   id: claims.performance
#   severity: warn
#   remediation: >-
#     Benchmark the deployment on this platform and record evidence.performance with status
#     passed, its `at` and `ref`, and the measured prefill_latency_ms, decode_latency_ms,
#     concurrency, memory_gib and recovery_s.
warn contains {"rule": "claims.performance", "path": "spec.evidence.performance", "message": message} if {
	scope := _scope
	not "performance" in data.supportgate.lib.evidence.proof
	message := sprintf(
		"performance %v is not proof (%v): its latency, concurrency, memory and recovery are not shown",
		[scope, data.supportgate.lib.evidence.not_proof("performance")],
	)
}

# _scope: why the deployment needs the claims proven, for messages; undefined when it does
# not (a deployment on a listed platform before production, or a HardwareManifest).
_scope := sprintf("on unlisted platform %v", [data.supportgate.lib.facts.accelerator_text]) if {
	data.supportgate.lib.facts.deployment
	data.supportgate.lib.standing.platform_unlisted
} else := "at stage production" if {
	data.supportgate.lib.facts.deployment
	input.manifest.spec.stage == "production"
}
