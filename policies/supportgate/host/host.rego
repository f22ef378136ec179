# The host software the engine requires: operating system, compiler, python.
#
# Applies to HardwareManifests (against the matrix's default engine) and to the hardware
# a deployment runs on (against the deployment's engine). Quiet when the engine is not in
# the matrix (support.engine) or the hardware is unresolved (manifest.hardware-ref).
# A missing os, compiler or python fires: it cannot be shown to meet the requirement.
package supportgate.host

import data.supportgate.lib.engines
import data.supportgate.lib.report
import data.supportgate.lib.subject
import data.supportgate.lib.versions

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
deny contains report.violation("host.os", subject.hardware_path("os.name"), message) if {
	allowed := engines.engine.host.os
	subject.hardware_known

	# Not `not os.name in allowed`: with the name missing OPA leaves that undefined where
	# regorus makes it true. The comprehension is empty then on both engines.
	[1 | subject.hardware.os.name in allowed] == []
	message := subject.hardware_message(sprintf(_messages.os, [
		report.text(subject.hardware, ["os", "name"]),
		engines.engine_name,
		report.list_text(allowed),
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
deny contains report.violation("host.compiler", finding.path, finding.message) if {
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
deny contains report.violation("host.python", subject.hardware_path("python"), message) if {
	required := engines.engine.host.python
	subject.hardware_known
	not _python_in_range
	message := subject.hardware_message(sprintf(_messages.python, [
		report.text(subject.hardware, ["python"]),
		engines.engine_name,
		report.range_text(required),
	]))
}

# _compiler_finding: the wrong name (a required name the hardware's compiler does not have),
# or else, the name being right, the version out of range.
_compiler_finding := {"path": subject.hardware_path("compiler.name"), "message": message} if {
	required := engines.engine.host.compiler
	subject.hardware_known
	required.name
	not subject.hardware.compiler.name == required.name
	message := subject.hardware_message(sprintf(_messages.compiler_name, [
		report.text(subject.hardware, ["compiler", "name"]),
		required.name,
		engines.engine_name,
		required.name,
		report.range_text(required),
	]))
} else := {"path": subject.hardware_path("compiler.version"), "message": message} if {
	required := engines.engine.host.compiler
	subject.hardware_known
	not _compiler_in_range
	message := subject.hardware_message(sprintf(_messages.compiler_version, [
		report.text(subject.hardware, ["compiler", "name"]),
		report.text(subject.hardware, ["compiler", "version"]),
		engines.engine_name,
		report.range_text(required),
	]))
}

# Helpers negated whole (a missing version fails its check, so the rule fires: it cannot be
# shown to meet the requirement; `not in_range(undefined, ...)` would differ between OPA and
# regorus).
_python_in_range if versions.in_range(subject.hardware.python, engines.engine.host.python)

_compiler_in_range if versions.in_range(subject.hardware.compiler.version, engines.engine.host.compiler)
