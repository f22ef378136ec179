# The host software the engine requires: operating system, compiler, python.
#
# Applies to HardwareManifests (against the matrix's default engine) and to the hardware
# a deployment runs on (against the deployment's engine). Quiet when the engine is not in
# the matrix (support.engine) or the hardware is unresolved (manifest.hardware-ref).
# A missing os, compiler or python fires: it cannot be shown to meet the requirement.
package supportgate.host

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
deny contains {
	"rule": "host.os",
	"path": data.supportgate.lib.hardware_path("os.name"),
	"message": message,
} if {
	_met.os == false
	text := sprintf("os %v is not among the operating systems %v supports (%v)", [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["os", "name"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.prepared.texts.os,
	])
	message := data.supportgate.lib.hardware_message(text)
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
deny contains {
	"rule": "host.python",
	"path": data.supportgate.lib.hardware_path("python"),
	"message": message,
} if {
	_met.python == false
	text := sprintf("python %v is outside the range %v supports (%v)", [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["python"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.prepared.texts.python_range,
	])
	message := data.supportgate.lib.hardware_message(text)
}

# _compiler_finding: the wrong name, or else, the name being right, the version out of range.
_compiler_finding := {"path": data.supportgate.lib.hardware_path("compiler.name"), "message": message} if {
	_met.compiler_name == false
	text := sprintf("compiler %v is not %v, which %v requires (%v %v)", [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["compiler", "name"]),
		data.supportgate.lib.engine.host.compiler.name,
		data.supportgate.lib.engine_name,
		data.supportgate.lib.engine.host.compiler.name,
		data.supportgate.lib.prepared.texts.compiler_range,
	])
	message := data.supportgate.lib.hardware_message(text)
} else := {"path": data.supportgate.lib.hardware_path("compiler.version"), "message": message} if {
	_met.compiler_version == false
	text := sprintf("compiler %v %v is outside the range %v supports (%v)", [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["compiler", "name"]),
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["compiler", "version"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.prepared.texts.compiler_range,
	])
	message := data.supportgate.lib.hardware_message(text)
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
	"os": [1 | hardware.os.name in host.os] != [],
	"python": true in [
		[1 | not host.python] != [],
		[1 | data.supportgate.lib.in_range(hardware.python, data.supportgate.lib.prepared.python)] != [],
	],
	"compiler_name": true in [
		[1 | not host.compiler] != [],
		[1 | hardware.compiler.name == host.compiler.name] != [],
	],
	"compiler_version": true in [
		[1 | not host.compiler] != [],
		[1 |
			data.supportgate.lib.in_range(hardware.compiler.version, data.supportgate.lib.prepared.compiler)
		] != [],
	],
} if {
	host := data.supportgate.lib.engine.host
	hardware := data.supportgate.lib.hardware
}
