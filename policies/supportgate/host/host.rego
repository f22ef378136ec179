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
deny contains {"rule": "host.os", "path": subject.hardware_path("os.name"), "message": message} if {
	_met.os == false
	message := subject.hardware_message(sprintf("os %v is not among the operating systems %v supports (%v)", [
		report.text(subject.hardware, ["os", "name"]),
		engines.engine_name,
		engines.prepared.texts.os,
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
deny contains {"rule": "host.compiler", "path": finding.path, "message": finding.message} if {
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
deny contains {"rule": "host.python", "path": subject.hardware_path("python"), "message": message} if {
	_met.python == false
	message := subject.hardware_message(sprintf("python %v is outside the range %v supports (%v)", [
		report.text(subject.hardware, ["python"]),
		engines.engine_name,
		engines.prepared.texts.python_range,
	]))
}

# _compiler_finding: the wrong name, or else, the name being right, the version out of range.
_compiler_finding := {"path": subject.hardware_path("compiler.name"), "message": message} if {
	_met.compiler_name == false
	message := subject.hardware_message(sprintf("compiler %v is not %v, which %v requires (%v %v)", [
		report.text(subject.hardware, ["compiler", "name"]),
		engines.engine.host.compiler.name,
		engines.engine_name,
		engines.engine.host.compiler.name,
		engines.prepared.texts.compiler_range,
	]))
} else := {"path": subject.hardware_path("compiler.version"), "message": message} if {
	_met.compiler_version == false
	message := subject.hardware_message(sprintf("compiler %v %v is outside the range %v supports (%v)", [
		report.text(subject.hardware, ["compiler", "name"]),
		report.text(subject.hardware, ["compiler", "version"]),
		engines.engine_name,
		engines.prepared.texts.compiler_range,
	]))
}

# applies: some requirement is not met (every deny rule requires it: a requirement judged
# false, not one left undefined). The decision reads host.deny only then: a host that
# meets them all costs the deny rules nothing.
applies if false in _met

# _met: each host requirement, true when the hardware meets it (or the engine states none),
# all judged in one rule; defined only for a known engine and resolved hardware. A missing
# os, compiler or python fails its check: it cannot be shown to meet the requirement.
# (`[1 | x] != []` reads "x holds", false rather than undefined when x is; negating a check
# on a missing value would differ between OPA and regorus.)
_met := {
	"os": [1 | subject.hardware.os.name in host.os] != [],
	"python": true in [
		[1 | not host.python] != [],
		[1 | versions.in_range(subject.hardware.python, engines.prepared.python)] != [],
	],
	"compiler_name": true in [
		[1 | not host.compiler] != [],
		[1 | subject.hardware.compiler.name == host.compiler.name] != [],
	],
	"compiler_version": true in [
		[1 | not host.compiler] != [],
		[1 | versions.in_range(subject.hardware.compiler.version, engines.prepared.compiler)] != [],
	],
} if {
	host := engines.engine.host
	subject.hardware
}
