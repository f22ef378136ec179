# The experimental-port discipline (docs/domain.md): a deployment on an unlisted platform or
# model keeps the production stack unchanged, works on an isolated branch with pinned
# versions, inventories the architecture-dependent dependencies and reaches production
# only with every evidence item passed.
#
# These rules apply to deployments that are provably unlisted (engines.unlisted): quiet when
# the engine is not in the matrix (support.engine rejects) and, unless the model alone
# is unlisted, when the hardware is unresolved (manifest.hardware-ref rejects).
# port.consumer-card is the exception: it judges the accelerator alone, for
# HardwareManifests and deployments, whatever the engine.
# Missing port fields count as not true / not pinned / not inventoried.
package supportgate.port

import data.supportgate.lib.engines.engine
import data.supportgate.lib.engines.standing
import data.supportgate.lib.evidence.items as evidence_items
import data.supportgate.lib.evidence.passed as passed_items
import data.supportgate.lib.evidence.pins
import data.supportgate.lib.report.text
import data.supportgate.lib.subject.hardware
import data.supportgate.lib.subject.hardware_message
import data.supportgate.lib.subject.hardware_path
import data.supportgate.lib.subject.subject

# METADATA
# title: Production on an unlisted configuration
# description: >-
#   Stage production on an unlisted platform or model needs every evidence item passed
#   (build, numerical_parity, structured_output, long_context, distributed_stability,
#   performance, workload_improvement).
# custom:
#   id: port.production
#   severity: deny
#   remediation: >-
#     Keep the deployment at stage experimental or evaluation until every evidence item has
#     passed, or move it to an officially supported platform and model.
deny contains {"rule": "port.production", "path": "spec.stage", "message": message} if {
	applies
	input.manifest.spec.stage == "production"
	passed := passed_items
	not_passed := [item | some item in evidence_items; not item in passed]
	count(not_passed) > 0
	message := sprintf("stage production on unlisted %v needs every evidence item passed; not passed: %v", [
		standing.unlisted_text,
		concat(", ", not_passed),
	])
}

# METADATA
# title: Production stack unchanged
# description: An unlisted deployment must declare port.production_stack_unchanged true.
# custom:
#   id: port.production-stack
#   severity: deny
#   remediation: >-
#     Leave the production stack untouched while porting and declare it with
#     port.production_stack_unchanged: true.
deny contains {"rule": "port.production-stack", "path": "spec.port.production_stack_unchanged", "message": message} if {
	applies
	standing.port_discipline
	not input.manifest.spec.port.production_stack_unchanged == true
	message := sprintf(
		concat(" ", [
			"%v is unlisted, so the production model server must keep running unchanged;",
			"port.production_stack_unchanged is %v, not true",
		]),
		[
			standing.unlisted_text,
			text(input.manifest.spec, ["port", "production_stack_unchanged"]),
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
	standing.port_discipline
	not input.manifest.spec.port.isolated_branch == true
	message := sprintf("%v is unlisted, so the port belongs on an isolated branch; port.isolated_branch is %v, not true", [
		standing.unlisted_text,
		text(input.manifest.spec, ["port", "isolated_branch"]),
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
	standing.port_discipline
	some pin in pins
	not pin in _pinned
	message := sprintf("%v is unlisted, so the %v version must be pinned; port.pinned.%v is missing", [
		standing.unlisted_text,
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
	standing.port_discipline
	some dependency in engine.arch_dependencies
	not dependency in _inventoried
	path := sprintf("spec.port.arch_dependencies.%v", [dependency])
	message := sprintf(
		concat(" ", [
			"%v is unlisted, so the architecture-dependent dependency %v must be inventoried",
			"before compiling; its port status is %v",
		]),
		[
			standing.unlisted_text,
			dependency,
			text(input.manifest.spec, ["port", "arch_dependencies", dependency]),
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
warn contains {"rule": "port.consumer-card", "path": hardware_path("accelerator"), "message": message} if {
	subject.consumer_card
	message := hardware_message(sprintf(
		concat(" ", [
			"%v (%v) is a consumer card: no consumer card is listed, and a single card or a",
			"small pool does not replace the reference topology",
		]),
		[
			text(hardware.accelerator, ["model"]),
			subject.accelerator_text,
		],
	))
}

# applies: a deployment that is provably unlisted, so the port discipline applies. Every
# deny rule here starts with it, and the decision reads port.deny only when it holds.
applies if {
	subject.deployment
	standing.unlisted
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
