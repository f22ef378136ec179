# Hardware identity (CONTRACT 10.3): the arch a manifest declares must be the arch the matrix's
# hardware catalogue gives its accelerator model. A typed arch is not trusted: every support
# rule reads it, so an H100 declared sm100 would pass as a listed platform.
#
# Applies to HardwareManifests and to the hardware a deployment runs on; quiet when the
# model matches no catalogue entry of its vendor (nothing to compare with) or the hardware is
# unresolved (manifest.hardware-ref rejects instead).
package supportgate.hardware

# METADATA
# title: Accelerator arch
# description: >-
#   The accelerator's model belongs to a family of the matrix's hardware catalogue whose
#   arch differs from the declared accelerator.arch.
# custom:
#   id: hardware.accelerator-arch
#   severity: deny
#   remediation: >-
#     Set accelerator.arch to the arch the catalogue gives this model, or correct
#     accelerator.model if it names the wrong card.
deny contains {
	"rule": "hardware.accelerator-arch",
	"path": data.supportgate.lib.hardware_path("accelerator.arch"),
	"message": message,
} if {
	archs := data.supportgate.lib.facts.catalogued_archs
	count(archs) > 0
	not _base_arch(data.supportgate.lib.hardware.accelerator.arch) in archs
	text := sprintf("accelerator %v (%v) is declared arch %v, but the catalogue gives it %v", [
		data.supportgate.lib.hardware.accelerator.model,
		data.supportgate.lib.hardware.accelerator.vendor,
		data.supportgate.lib.hardware.accelerator.arch,
		data.supportgate.lib.list_text(sort(archs)),
	])
	message := data.supportgate.lib.hardware_message(text)
}

# applies: the model is catalogued and its arch, as written, is not among the catalogue's.
# The deny rule requires it (a base arch in the catalogue is one as written, or sm90a's sm90),
# and the decision reads hardware.deny only when it holds.
applies if {
	data.supportgate.lib.facts.catalogued_archs != set()
	not data.supportgate.lib.facts.arch_catalogued
}

# _base_arch: NVIDIA's arch-specific and family-specific compile targets (sm90a, sm100f) name
# the hardware of their base arch (sm90, sm100); other archs are their own base.
_base_arch(arch) := regex.replace(arch, `^(sm[0-9]+)[af]$`, "$1")

# The hardware concern has no warn rules; the empty set keeps the concern interface uniform.
warn := set()
