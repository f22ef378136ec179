# The evidence a deployment records and the versions a port pins.
#
# An item counts only when it is proof (CONTRACT 10.1, docs/domain.md "Evidence that proves
# something"): it says passed, it is dated no later than the evaluation time (plus 5 minutes
# for clocks that disagree) and no older than the matrix's evidence_max_age_days, it says
# where its result can be looked up (`ref`), and it carries what its claim rests on
# (parity: the reference runtime; performance: the measured figures). "Plan nothing on an
# unresolved issue or a forum post": a bare "passed" is such a post.
package supportgate.lib.evidence

items := [
	"build",
	"numerical_parity",
	"structured_output",
	"long_context",
	"distributed_stability",
	"performance",
	"workload_improvement",
]

correctness_items := ["numerical_parity", "structured_output", "long_context", "distributed_stability"]

# The figures a performance item must carry above 0 (recovery_s may be 0: no failure seen).
performance_figures := ["prefill_latency_ms", "decode_latency_ms", "concurrency", "memory_gib"]

# How far ahead of the evaluation time an item may be dated: clocks of CI runners disagree.
clock_skew_ns := (5 * 60) * 1000000000

# proof: the evidence items that prove something: each condition of CONTRACT 10.1 in turn.
proof contains item if {
	some item, record in _passed
	at := time.parse_rfc3339_ns(record.at)
	at <= _latest_ns
	at >= _oldest_ns
	is_string(record.ref) # _stated inlined: regorus charges a call per item
	record.ref != ""
	not item in _incomplete
}

# _latest_ns: the latest time evidence may have at evaluated_at.
_latest_ns := data.supportgate.lib.evaluated_at_ns + clock_skew_ns

# _oldest_ns: the oldest time evidence may have at evaluated_at; without a numeric
# evidence_max_age_days, a time before any the policies read (nothing is stale).
_oldest_ns := data.supportgate.lib.evaluated_at_ns - (max_age_days * data.supportgate.lib.day_ns) if {
	max_age_days := data.matrix.evidence_max_age_days
	is_number(max_age_days)
} else := -1e19

# _incomplete: the items that say passed without what their claim rests on.
_incomplete contains "numerical_parity" if {
	record := _passed.numerical_parity
	not _stated(object.get(record, "reference_runtime", null))
}

_incomplete contains "performance" if count(_missing_figures) > 0

# _missing_figures: the figures a performance item that says passed lacks, in order.
_missing_figures := array.concat(
	[figure | some figure in performance_figures; not object.get(record, figure, 0) > 0],
	[figure | figure := "recovery_s"; not object.get(record, figure, -1) >= 0],
) if {
	record := _passed.performance
}

# flaws: why an item that says passed proves nothing, one entry per reason, each with the
# evidence.* rule that reports it, a short `why` (for the messages of the rules that want
# proof) and the rule's message. Worked out only when `unproven` holds (each reason costs
# regorus a pass over the items).
flaws contains {"rule": "evidence.unreferenced", "item": item, "why": why, "message": message} if {
	unproven
	some item, record in _passed
	missing := [field | some field in ["at", "ref"]; not _stated(object.get(record, field, null))]
	count(missing) > 0
	why := sprintf("has no %v", [concat(" and no ", missing)])
	message := sprintf(
		"%v says passed but %v: a result that does not say when it ran and where it can be looked up proves nothing",
		[item, why],
	)
}

flaws contains {"rule": "evidence.future", "item": item, "why": why, "message": message} if {
	unproven
	some item, record in _passed
	time.parse_rfc3339_ns(record.at) > _latest_ns
	why := sprintf("is dated %v, after the evaluation time", [record.at])
	message := sprintf(
		"%v says passed but %v (more than 5 minutes ahead): a result not yet obtained proves nothing",
		[item, why],
	)
}

flaws contains {"rule": "evidence.stale", "item": item, "why": why, "message": message} if {
	# What every item is judged against, worked out before the items are (a `data.` reference
	# costs regorus a search of every module, each time it is read).
	unproven
	max_age_days := data.matrix.evidence_max_age_days
	is_number(max_age_days)
	max_age_ns := max_age_days * data.supportgate.lib.day_ns
	now := data.supportgate.lib.evaluated_at_ns
	some item, record in _passed
	age := now - time.parse_rfc3339_ns(record.at)
	age > max_age_ns
	why := sprintf("is older than the %v days the matrix allows", [max_age_days])
	message := sprintf("%v evidence from %v is %v days old at %v, older than the %v days the matrix allows", [
		item,
		record.at,
		floor(age / data.supportgate.lib.day_ns),
		input.evaluated_at,
		max_age_days,
	])
}

flaws contains {"rule": "evidence.incomplete", "item": "numerical_parity", "why": why, "message": message} if {
	"numerical_parity" in _incomplete
	why := "names no reference_runtime"
	message := sprintf(
		"numerical_parity says passed but %v: parity is a comparison, and it names nothing it was compared with",
		[why],
	)
}

flaws contains {"rule": "evidence.incomplete", "item": "performance", "why": why, "message": message} if {
	"performance" in _incomplete
	why := sprintf("lacks %v", [concat(", ", _missing_figures)])
	message := sprintf(
		concat(" ", [
			"performance says passed but %v: latency, concurrency, memory and recovery are what",
			"it measures (prefill_latency_ms, decode_latency_ms, concurrency and memory_gib",
			"above 0, recovery_s 0 or more)",
		]),
		[why],
	)
}

# not_proof: why an evidence item that is not proof is not: its status, or for an item that
# says passed, its flaws; undefined for proof. A function, so that only the messages that ask
# it pay for it.
not_proof(item) := status(item) if {
	not _passed[item]
} else := sprintf("passed, but %v", [concat("; ", whys)]) if {
	whys := [flaw.why | some flaw in flaws; flaw.item == item]
	count(whys) > 0
}

# status: an item's status; a missing evidence item counts as absent. (The records are a rule
# of this package: under regorus a function reading an imported name reads nothing.)
status(name) := object.get(_records, [name, "status"], "absent")

_records := object.get(input.manifest.spec, "evidence", {})

# unproven: some item that says passed is no proof (so `flaws` has members).
unproven if count(proof) < count(_passed)

_passed[item] := record if {
	some item, record in _records
	record.status == "passed"
}

# _stated: a text that says something (Python drops absent fields; an empty text says
# nothing). Called with object.get: OPA leaves `not _stated(record.ref)` undefined, not true,
# when the field is absent.
_stated(value) if {
	is_string(value)
	value != ""
}

pins := ["engine", "toolkit", "driver", "compiler", "model"]
