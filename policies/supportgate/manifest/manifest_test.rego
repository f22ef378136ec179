package supportgate.manifest_test

import data.supportgate.fixtures_test as fx
import data.supportgate.manifest

test_manifest_hardware_ref_fires_when_ref_unresolved if {
	denied := manifest.deny with input as fx.unresolved_input(fx.deployment)
	fx.paths(denied, "manifest.hardware-ref") == {"spec.hardware.ref"}
}

test_manifest_hardware_ref_fires_without_any_hardware if {
	spec := json.remove(fx.deployment, ["hardware/ref"])
	denied := manifest.deny with input as fx.unresolved_input(spec)
	fx.paths(denied, "manifest.hardware-ref") == {"spec.hardware"}
}

test_manifest_hardware_ref_quiet_when_ref_resolved if {
	not "manifest.hardware-ref" in fx.rules(manifest.deny) with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_manifest_hardware_ref_quiet_with_inline_hardware if {
	inline := json.remove(fx.inline_input(fx.deployment, fx.h100), ["hardware"])
	not "manifest.hardware-ref" in fx.rules(manifest.deny) with input as inline
}

test_manifest_hardware_ref_quiet_for_hardware_manifest if {
	not "manifest.hardware-ref" in fx.rules(manifest.deny) with input as fx.hardware_input(fx.h100)
}

test_manifest_warn_is_empty if {
	count(manifest.warn) == 0 with input as fx.unresolved_input(fx.deployment)
}
