# The three claims kept apart (docs/domain.md): a build proves only that the code compiles;
# correctness and performance on an unlisted platform need their own evidence. Also the
# freshness of every evidence item.
#
# claims.* fire only for deployments on an unlisted *platform* (an unlisted model on a
# listed platform is support.model's business), one warning per evidence item that has
# not passed. A missing evidence item counts as absent. evidence.stale judges every
# evidence item with an `at` against input.evaluated_at, one warning per stale item.
package supportgate.claims

import data.supportgate.lib.engines.standing
import data.supportgate.lib.evidence.correctness_items
import data.supportgate.lib.evidence.passed as passed_items
import data.supportgate.lib.evidence.status as evidence_status
import data.supportgate.lib.subject.subject
import data.supportgate.lib.times.day_ns
import data.supportgate.lib.times.evaluated_at_ns

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
warn contains {"rule": "claims.correctness", "path": sprintf("spec.evidence.%v", [item]), "message": message} if {
	subject.deployment
	standing.platform_unlisted
	passed := passed_items
	some item in correctness_items
	not item in passed
	message := sprintf(
		concat(" ", [
			"%v on unlisted platform %v is %v, not passed: a build proves only that the code",
			"compiles, not that results are correct",
		]),
		[item, subject.accelerator_text, evidence_status(item)],
	)
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
warn contains {"rule": "claims.performance", "path": "spec.evidence.performance", "message": message} if {
	subject.deployment
	standing.platform_unlisted
	not "performance" in passed_items
	message := sprintf(
		concat(" ", [
			"performance on unlisted platform %v is %v, not passed: latency, concurrency,",
			"memory and recovery are unmeasured",
		]),
		[subject.accelerator_text, evidence_status("performance")],
	)
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
warn contains {"rule": "evidence.stale", "path": sprintf("spec.evidence.%v", [item]), "message": message} if {
	# What every item is judged against, worked out before the items are (a `data.` reference
	# costs regorus a search of every module, each time it is read).
	max_age_days := data.matrix.evidence_max_age_days
	is_number(max_age_days)
	max_age_ns := max_age_days * day_ns
	now := evaluated_at_ns
	some item, record in input.manifest.spec.evidence
	recorded := time.parse_rfc3339_ns(record.at)
	age := now - recorded
	age > max_age_ns
	message := sprintf("%v evidence from %v is %v days old at %v, older than the %v days the matrix allows", [
		item,
		record.at,
		floor(age / day_ns),
		input.evaluated_at,
		max_age_days,
	])
}
