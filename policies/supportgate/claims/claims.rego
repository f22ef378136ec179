# The three claims kept apart (docs/domain.md): a build proves only that the code compiles;
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
#   remediation: >-
#     Run the missing correctness checks (numerical_parity against a reference runtime,
#     structured_output, long_context, distributed_stability) on this platform and record each
#     as evidence with status passed, a time and a ref.
warn contains data.supportgate.lib.violation("claims.correctness", sprintf("spec.evidence.%v", [item]), message) if {
	data.supportgate.lib.facts.deployment
	data.supportgate.lib.facts.platform_unlisted
	passed := data.supportgate.lib.passed_items
	some item in data.supportgate.lib.correctness_items
	not item in passed
	message := sprintf(_messages.correctness, [item, data.supportgate.lib.accelerator_text, data.supportgate.lib.evidence_status(item)])
}

# METADATA
# title: Performance evidence on an unlisted platform
# description: A deployment on an unlisted platform lacks a passed performance item.
# custom:
#   id: claims.performance
#   severity: warn
#   remediation: >-
#     Benchmark the deployment on this platform and record evidence.performance with status
#     passed and its measured latencies, concurrency, memory and recovery time.
warn contains data.supportgate.lib.violation("claims.performance", "spec.evidence.performance", message) if {
	data.supportgate.lib.facts.deployment
	data.supportgate.lib.facts.platform_unlisted
	not "performance" in data.supportgate.lib.passed_items
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
#   remediation: >-
#     Re-run the stale check and record the new result with a fresh `at` time, or replace the
#     evidence item; the matrix's evidence_max_age_days sets how old evidence may be.
warn contains data.supportgate.lib.violation("evidence.stale", sprintf("spec.evidence.%v", [item]), message) if {
	some item, record in data.supportgate.lib.members(data.supportgate.lib.spec.evidence)
	record.at <= _stale_cutoff
	max_age_days := data.matrix.evidence_max_age_days
	is_number(max_age_days)
	now := data.supportgate.lib.evaluated_at_ns
	recorded := data.supportgate.lib.timestamp_ns(record.at)
	age := now - recorded
	age > max_age_days * data.supportgate.lib.day_ns
	message := sprintf(_messages.stale, [item, record.at, floor(age / data.supportgate.lib.day_ns), input.evaluated_at, max_age_days])
}

# _stale_cutoff lets evidence.stale skip recent evidence without parsing its time (a regex
# and a parse per item, the bulk of a deployment's decision): an `at` whose text sorts
# after the cutoff is no stale time. The cutoff is the text, to the second, of one day and
# one second after the staleness threshold (evaluated_at minus evidence_max_age_days): the
# text of a valid RFC 3339 time starts with its local date and time, and its UTC offset is
# under a day. Everything else (older, odd or not a string: Rego orders numbers, null and
# booleans below strings) is judged exactly by timestamp_ns. Should the cutoff fall outside
# the years time.format handles alike on both engines, {} (ordered above every string)
# lets every item through.
_stale_cutoff := substring(time.format(cutoff_ns), 0, 19) if {
	max_age_days := data.matrix.evidence_max_age_days
	is_number(max_age_days)

	# floor keeps the nanoseconds whole; it can only move the cutoff later.
	threshold_ns := data.supportgate.lib.evaluated_at_ns - (floor(max_age_days) * data.supportgate.lib.day_ns)
	cutoff_ns := (threshold_ns + data.supportgate.lib.day_ns) + 1000000000
	cutoff_ns > -9000000000000000000
	cutoff_ns < 9000000000000000000
} else := {}
