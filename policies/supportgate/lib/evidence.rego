# The evidence a deployment records (docs/domain.md: a build proves only that the code
# compiles) and the versions a port pins.
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

# passed: the evidence items whose status is passed.
passed contains item if {
	some item, record in input.manifest.spec.evidence
	record.status == "passed"
}

# status: an item's status; a missing evidence item counts as absent. (The records are a rule
# of this package: under regorus a function reading an imported name reads nothing.)
status(name) := object.get(_records, [name, "status"], "absent")

_records := object.get(input.manifest.spec, "evidence", {})

pins := ["engine", "toolkit", "driver", "compiler", "model"]
