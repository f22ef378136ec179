# The three claims kept apart (DOMAIN.md): a build proves only that the code compiles;
# correctness and performance on an unlisted platform need their own evidence. Also the
# freshness of every evidence item.
#
# claims.* fire only for deployments on an unlisted *platform* (an unlisted model on a
# listed platform is support.model's business), one warning per evidence item that has
# not passed. A missing evidence item counts as absent. evidence.stale judges every
# evidence item with an `at` against input.evaluated_at, one warning per stale item.
package supportgate.claims

_messages := {
	"correctness": "%v on unlisted platform %v is %v, not passed: a build proves only that the code compiles, not that results are correct",
	"performance": "performance on unlisted platform %v is %v, not passed: latency, concurrency, memory and recovery are unmeasured",
	"stale": "%v evidence from %v is %v days old at %v, older than the %v days the matrix allows",
}

# The claims concern has no deny rules; the empty set keeps the concern interface uniform.
deny := set()

# METADATA
# title: Correctness evidence on an unlisted platform
# description: >-
#   A deployment on an unlisted platform lacks a passed numerical_parity,
#   structured_output, long_context or distributed_stability (one warning per item).
# custom:
#   id: claims.correctness
#   severity: warn
warn contains data.supportgate.lib.violation("claims.correctness", sprintf("spec.evidence.%v", [item]), message) if {
	_unlisted_platform
	some item in data.supportgate.lib.correctness_items
	not data.supportgate.lib.passed(item)
	message := sprintf(_messages.correctness, [item, data.supportgate.lib.accelerator_text, data.supportgate.lib.evidence_status(item)])
}

# METADATA
# title: Performance evidence on an unlisted platform
# description: A deployment on an unlisted platform lacks a passed performance item.
# custom:
#   id: claims.performance
#   severity: warn
warn contains data.supportgate.lib.violation("claims.performance", "spec.evidence.performance", message) if {
	_unlisted_platform
	not data.supportgate.lib.passed("performance")
	message := sprintf(_messages.performance, [data.supportgate.lib.accelerator_text, data.supportgate.lib.evidence_status("performance")])
}

# METADATA
# title: Stale evidence
# description: >-
#   An evidence item's `at` is older than the matrix's evidence_max_age_days at
#   evaluation time (input.evaluated_at). One warning per stale item.
# custom:
#   id: evidence.stale
#   severity: warn
warn contains data.supportgate.lib.violation("evidence.stale", sprintf("spec.evidence.%v", [item]), message) if {
	max_age_days := data.matrix.evidence_max_age_days
	is_number(max_age_days)
	now := data.supportgate.lib.evaluated_at_ns
	some item, record in data.supportgate.lib.members(data.supportgate.lib.field(data.supportgate.lib.spec, ["evidence"], {}))
	recorded := data.supportgate.lib.timestamp_ns(record.at)
	age := now - recorded
	age > max_age_days * data.supportgate.lib.day_ns
	message := sprintf(_messages.stale, [item, record.at, floor(age / data.supportgate.lib.day_ns), input.evaluated_at, max_age_days])
}

_unlisted_platform if {
	data.supportgate.lib.is_deployment
	data.supportgate.lib.platform_unlisted
}
