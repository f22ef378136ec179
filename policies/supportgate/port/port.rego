# The experimental-port discipline (docs/domain.md): a deployment on an unlisted platform or
# model keeps the production stack unchanged, works on an isolated branch with pinned
# versions, inventories the architecture-dependent dependencies and reaches production
# only with every evidence item proof (lib/evidence/evidence.rego).
#
# The deny rules apply to deployments that are provably unlisted (engines.unlisted): quiet
# when the engine is not in the matrix (support.engine rejects) and, unless the model alone
# is unlisted, when the hardware is unresolved (manifest.hardware-ref rejects). The
# discipline of the port itself (isolation, pinning, arch-dependencies, production-stack)
# applies only where standing.port_discipline holds (not on a preview platform, CONTRACT
# 10.6); port.production and port.pin-drift (the pins against the pool) apply to every
# unlisted deployment. port.consumer-card is the exception: it judges the accelerator alone,
# for HardwareManifests and deployments, whatever the engine.
# Missing port fields count as not true / not pinned / not inventoried.
package supportgate.port

# METADATA
# title: Production on an unlisted configuration
# description: >-
#   Stage production on an unlisted platform or model needs every evidence item to be proof
#   (build, numerical_parity, structured_output, long_context, distributed_stability,
#   performance, workload_improvement: passed, dated, referenced, fresh and complete).
# custom:
#   id: port.production
#   severity: deny
#   remediation: >-
#     Keep the deployment at stage experimental or evaluation until every evidence item is
#     proof (the message names each item that is not, and why), or move it to an officially
#     supported platform and model.
deny contains {"rule": "port.production", "path": "spec.stage", "message": message} if {
	applies
	input.manifest.spec.stage == "production"
	reasons := [sprintf("%v (%v)", [item, why]) |
		some item in data.supportgate.lib.evidence.items
		why := data.supportgate.lib.evidence.not_proof(item)
	]
	count(reasons) > 0
	message := sprintf("stage production on unlisted %v needs every evidence item to be proof; not proof: %v", [
		data.supportgate.lib.unlisted_text,
		concat(", ", reasons),
	])
}

# METADATA
# title: Production stack unchanged
# description: >-
#   An unlisted deployment at stage evaluation or experimental must declare
#   port.production_stack_unchanged true (at stage production, the rollout that step 6
#   allows once the evidence is proof, the stack changes on purpose).
# custom:
#   id: port.production-stack
#   severity: deny
#   remediation: >-
#     Leave the production stack untouched while porting and declare it with
#     port.production_stack_unchanged: true.
deny contains {"rule": "port.production-stack", "path": "spec.port.production_stack_unchanged", "message": message} if {
	applies
	data.supportgate.lib.standing.port_discipline
	input.manifest.spec.stage in {"evaluation", "experimental"}
	not input.manifest.spec.port.production_stack_unchanged == true
	message := sprintf(
		concat(" ", [
			"%v is unlisted, so the production model server must keep running unchanged;",
			"port.production_stack_unchanged is %v, not true",
		]),
		[
			data.supportgate.lib.unlisted_text,
			data.supportgate.lib.text(input.manifest.spec, ["port", "production_stack_unchanged"]),
		],
	)
}

# METADATA
# title: Isolated branch
# description: An unlisted deployment must declare port.isolated_branch true.
# custom:
#   id: port.isolation
#   severity: deny
#   remediation: >-
#     Do the port on an isolated branch of the engine and declare it with
#     port.isolated_branch: true.
deny contains {"rule": "port.isolation", "path": "spec.port.isolated_branch", "message": message} if {
	applies
	data.supportgate.lib.standing.port_discipline
	not input.manifest.spec.port.isolated_branch == true
	message := sprintf("%v is unlisted, so the port belongs on an isolated branch; port.isolated_branch is %v, not true", [
		data.supportgate.lib.unlisted_text,
		data.supportgate.lib.text(input.manifest.spec, ["port", "isolated_branch"]),
	])
}

# METADATA
# title: Pinned versions
# description: >-
#   An unlisted deployment pins engine, toolkit, driver, compiler and model in
#   port.pinned; one violation per missing pin.
# custom:
#   id: port.pinning
#   severity: deny
#   remediation: >-
#     Pin every version the port was tested with in port.pinned: engine, toolkit, driver,
#     compiler and model (a digest such as sha256:...).
deny contains {"rule": "port.pinning", "path": sprintf("spec.port.pinned.%v", [pin]), "message": message} if {
	applies
	data.supportgate.lib.standing.port_discipline
	some pin in data.supportgate.lib.evidence.pins
	not pin in _pinned
	message := sprintf("%v is unlisted, so the %v version must be pinned; port.pinned.%v is missing", [
		data.supportgate.lib.unlisted_text,
		pin,
		pin,
	])
}

# METADATA
# title: Architecture-dependent dependencies inventoried
# description: >-
#   An unlisted deployment records a port status for each of the engine's
#   arch_dependencies; missing or "unknown" fires ("unported" was inventoried and is fine).
#   One violation per offending dependency.
# custom:
#   id: port.arch-dependencies
#   severity: deny
#   remediation: >-
#     Inventory each of the engine's architecture-dependent dependencies in
#     port.arch_dependencies as ported or unported; unknown is not an answer.
deny contains {"rule": "port.arch-dependencies", "path": path, "message": message} if {
	applies
	data.supportgate.lib.standing.port_discipline
	some dependency in data.supportgate.lib.engine.arch_dependencies
	not dependency in _inventoried
	path := sprintf("spec.port.arch_dependencies.%v", [dependency])
	message := sprintf(
		concat(" ", [
			"%v is unlisted, so the architecture-dependent dependency %v must be inventoried",
			"before compiling; its port status is %v",
		]),
		[
			data.supportgate.lib.unlisted_text,
			dependency,
			data.supportgate.lib.text(input.manifest.spec, ["port", "arch_dependencies", dependency]),
		],
	)
}

# METADATA
# title: Consumer card
# description: >-
#   The accelerator is a consumer card (arch sm89 or sm120, or a model containing RTX): no
#   consumer card is listed, and it is no replacement for the reference topology.
# custom:
#   id: port.consumer-card
#   severity: warn
#   remediation: >-
#     Plan production on a data-center accelerator that the matrix lists; keep the consumer
#     card for development and trials.
warn contains {
	"rule": "port.consumer-card",
	"path": data.supportgate.lib.hardware_path("accelerator"),
	"message": message,
} if {
	data.supportgate.lib.facts.consumer_card
	message := data.supportgate.lib.hardware_message(sprintf(
		concat(" ", [
			"%v (%v) is a consumer card: no consumer card is listed, and a single card or a",
			"small pool does not replace the reference topology",
		]),
		[
			data.supportgate.lib.text(data.supportgate.lib.hardware.accelerator, ["model"]),
			data.supportgate.lib.facts.accelerator_text,
		],
	))
}

# METADATA
# title: Pin differs from the pool
# description: >-
#   A pinned toolkit, driver or compiler (port.pinned) of an unlisted deployment differs from
#   the version the deployment's pool has: the port was tested with one stack and runs on another. A pin
#   matches when, compared without regard to case and with "-", "_" and spaces alike, it is
#   the pool's version or its name and version ("12.8" or "cuda-12.8"; "gcc-13.2.0" for
#   compiler {name: gcc, version: 13.2.0}), trailing ".0" parts ignored ("13.0" is "13").
# custom:
#   id: port.pin-drift
#   severity: warn
#   remediation: >-
#     Re-run the port's checks on the pool's versions and pin those, or bring the pool to the
#     pinned versions.
warn contains {"rule": "port.pin-drift", "path": sprintf("spec.port.pinned.%v", [what]), "message": message} if {
	applies
	pinned := input.manifest.spec.port.pinned
	some what, pool in _pool_stack
	pin := pinned[what]
	is_string(pin)
	not pin in pool.forms # as written: the usual case, without the regexes below
	forms := {_version_form(data.supportgate.lib.identity(form)) | some form in pool.forms}
	not _version_form(data.supportgate.lib.identity(pin)) in forms
	message := data.supportgate.lib.hardware_message(sprintf(
		"port.pinned.%v is %v, but the pool has %v %v: the port was tested with another version than it runs on",
		[what, pin, what, pool.text],
	))
}

# _pool_stack: the pool's toolkit, driver and compiler, each with the forms a matching pin may
# take and its text for messages (a part the pool does not state is not compared).
_pool_stack[what] := {"forms": [version, named], "text": sprintf("%v %v", [name, version])} if {
	hardware := data.supportgate.lib.hardware # indexed below by a variable (rego_limits.py)
	some what in ["toolkit", "compiler"]
	name := hardware[what].name
	version := hardware[what].version
	named := sprintf("%v-%v", [name, version])
}

_pool_stack["driver"] := {"forms": [driver], "text": driver} if {
	driver := data.supportgate.lib.hardware.driver
}

# _version_form drops trailing ".0" parts: version 13.0 is version 13.
_version_form(text) := regex.replace(text, `(\.0+)+$`, "")

# applies: a deployment that is provably unlisted, so the port rules apply. Every deny rule
# here starts with it (and port.pin-drift), and the decision reads port.deny only when it
# holds.
applies if {
	data.supportgate.lib.facts.deployment
	data.supportgate.lib.standing.unlisted
}

# The pins and the inventoried dependencies the port record states, each set computed once
# (a helper function would run once per pin and dependency).
_pinned contains pin if {
	some pin, value in input.manifest.spec.port.pinned
	not value in {"", null}
}

_inventoried contains dependency if {
	some dependency, status in input.manifest.spec.port.arch_dependencies
	not status in {"", null, "unknown"}
}
