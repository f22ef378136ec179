# The host software the engine requires: operating system, compiler, python.
#
# Applies to HardwareManifests (against the matrix's default engine) and to the hardware
# a deployment runs on (against the deployment's engine). Quiet when the engine is not in
# the matrix (support.engine) or the hardware is unresolved (manifest.hardware-ref).
# A missing os, compiler or python fires: it cannot be shown to meet the requirement.
package supportgate.host

import data.supportgate.lib.engines.engine
import data.supportgate.lib.engines.engine_name
import data.supportgate.lib.engines.prepared
import data.supportgate.lib.report.text
import data.supportgate.lib.report.violation
import data.supportgate.lib.subject.hardware
import data.supportgate.lib.subject.hardware_known
import data.supportgate.lib.subject.hardware_message
import data.supportgate.lib.subject.hardware_path
import data.supportgate.lib.versions.in_range

_messages := {
	"os": "os %v is not among the operating systems %v supports (%v)",
	"compiler_name": "compiler %v is not %v, which %v requires (%v %v)",
	"compiler_version": "compiler %v %v is outside the range %v supports (%v)",
	"python": "python %v is outside the range %v supports (%v)",
}

# The host concern has no warn rules; the empty set keeps the concern interface uniform.
warn := set()

# METADATA
# title: Host operating system
# description: The hardware's os.name must be one of the engine's host.os entries.
# custom:
#   id: host.os
#   severity: deny
#   remediation: >-
#     Run the pool on an operating system the engine supports (the matrix's host.os for the
#     engine), or set os.name to what the hardware really runs if it is wrong.
deny contains violation("host.os", hardware_path("os.name"), message) if {
	allowed := engine.host.os
	hardware_known

	# Not `not os.name in allowed`: with the name missing OPA leaves that undefined where
	# regorus makes it true. The comprehension is empty then on both engines.
	[1 | hardware.os.name in allowed] == []
	message := hardware_message(sprintf(_messages.os, [
		text(hardware, ["os", "name"]),
		engine_name,
		prepared.texts.os,
	]))
}

# METADATA
# title: Host compiler
# description: >-
#   The hardware's compiler must have the name the engine requires and a version in its
#   range (at least min).
# custom:
#   id: host.compiler
#   severity: deny
#   remediation: >-
#     Install the compiler the engine requires (the matrix's host.compiler name, at least its
#     min version) and record it in compiler.name and compiler.version.
deny contains violation("host.compiler", finding.path, finding.message) if {
	finding := _compiler_finding
}

# METADATA
# title: Host python
# description: The hardware's python version must lie in the engine's host.python range.
# custom:
#   id: host.python
#   severity: deny
#   remediation: >-
#     Install a python version in the engine's host.python range (min <= v < below) and record
#     it in python, quoted ("3.12.7").
deny contains violation("host.python", hardware_path("python"), message) if {
	engine.host.python
	hardware_known
	not _python_in_range
	message := hardware_message(sprintf(_messages.python, [
		text(hardware, ["python"]),
		engine_name,
		prepared.texts.python_range,
	]))
}

# _compiler_finding: the wrong name (a required name the hardware's compiler does not have),
# or else, the name being right, the version out of range.
_compiler_finding := {"path": hardware_path("compiler.name"), "message": message} if {
	required := engine.host.compiler
	hardware_known
	not hardware.compiler.name == required.name
	message := hardware_message(sprintf(_messages.compiler_name, [
		text(hardware, ["compiler", "name"]),
		required.name,
		engine_name,
		required.name,
		prepared.texts.compiler_range,
	]))
} else := {"path": hardware_path("compiler.version"), "message": message} if {
	engine.host.compiler
	hardware_known
	not _compiler_in_range
	message := hardware_message(sprintf(_messages.compiler_version, [
		text(hardware, ["compiler", "name"]),
		text(hardware, ["compiler", "version"]),
		engine_name,
		prepared.texts.compiler_range,
	]))
}

# Helpers negated whole (a missing version fails its check, so the rule fires: it cannot be
# shown to meet the requirement; `not in_range(undefined, ...)` would differ between OPA and
# regorus).
_python_in_range if in_range(hardware.python, prepared.python)

_compiler_in_range if in_range(hardware.compiler.version, prepared.compiler)
