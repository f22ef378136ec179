# Hardware identity (CONTRACT 10.3): the arch a manifest declares must be the arch the matrix's
# hardware catalogue gives its accelerator model. A typed arch is not trusted: every support
# rule reads it, so an H100 declared sm100 would pass as a listed platform.
#
# Applies to HardwareManifests and to the hardware a deployment runs on; quiet when the
# model matches no catalogue entry of its vendor (nothing to compare with) or the hardware is
# unresolved (manifest.hardware-ref rejects instead).
package supportgate.hardware

import data.supportgate.lib.report.list_text
import data.supportgate.lib.subject.hardware
import data.supportgate.lib.subject.hardware_message
import data.supportgate.lib.subject.hardware_path
import data.supportgate.lib.subject.subject

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
deny contains {"rule": "hardware.accelerator-arch", "path": hardware_path("accelerator.arch"), "message": message} if {
	archs := subject.catalogued_archs
	count(archs) > 0
	not _base_arch(hardware.accelerator.arch) in archs
	message := hardware_message(sprintf("accelerator %v (%v) is declared arch %v, but the catalogue gives it %v", [
		hardware.accelerator.model,
		hardware.accelerator.vendor,
		hardware.accelerator.arch,
		list_text(sort(archs)),
	]))
}

# _base_arch: NVIDIA's arch-specific and family-specific compile targets (sm90a, sm100f) name
# the hardware of their base arch (sm90, sm100); other archs are their own base.
_base_arch(arch) := regex.replace(arch, `^(sm[0-9]+)[af]$`, "$1")

# The hardware concern has no warn rules; the empty set keeps the concern interface uniform.
warn := set()
