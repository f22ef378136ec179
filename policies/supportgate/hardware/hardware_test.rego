package supportgate.hardware_test

import data.supportgate.fixtures_test as fx
import data.supportgate.hardware

test_hardware_accelerator_arch_fires_on_h100_declared_sm100 if {
	h100 := object.union(fx.h100, {"accelerator": {"arch": "sm100"}})
	denied := hardware.deny with input as fx.hardware_input(h100)
	fx.paths(denied, "hardware.accelerator-arch") == {"spec.accelerator.arch"}
	inline := hardware.deny with input as fx.inline_input(fx.deployment, h100)
	fx.paths(inline, "hardware.accelerator-arch") == {"spec.hardware.spec.accelerator.arch"}
	pooled := hardware.deny with input as fx.deployment_input(fx.deployment, h100)
	fx.paths(pooled, "hardware.accelerator-arch") == {"spec.hardware.ref"}
}

test_hardware_accelerator_arch_fires_on_ascend_family if {
	ascend := object.union(fx.ascend950, {"accelerator": {"model": "Ascend 910B3"}})
	"hardware.accelerator-arch" in fx.rules(hardware.deny) with input as fx.hardware_input(ascend)
}

test_hardware_accelerator_arch_quiet_on_catalogued_arch if {
	count(hardware.deny) == 0 with input as fx.hardware_input(fx.h100)
	count(hardware.deny) == 0 with input as fx.hardware_input(fx.b200)
	count(hardware.deny) == 0 with input as fx.hardware_input(fx.ascend950)
	count(hardware.deny) == 0 with input as fx.hardware_input(fx.rtx4090)
}

test_hardware_accelerator_arch_quiet_on_uncatalogued_model if {
	mystery := object.union(fx.h100, {"accelerator": {"model": "Mystery X1", "arch": "sm100"}})
	count(hardware.deny) == 0 with input as fx.hardware_input(mystery)
}

test_hardware_accelerator_arch_quiet_on_other_vendor if {
	# the catalogue's H100 is NVIDIA's: a vendor's models are matched against its own entries
	other := object.union(fx.h100, {"accelerator": {"vendor": "amd", "arch": "gfx942"}})
	count(hardware.deny) == 0 with input as fx.hardware_input(other)
}

test_hardware_accelerator_arch_quiet_without_catalogue if {
	h100 := object.union(fx.h100, {"accelerator": {"arch": "sm100"}})
	count(hardware.deny) == 0 with input as fx.hardware_input(h100)
		with data.supportgate.prepared.accelerators as {}
}

test_hardware_accelerator_arch_quiet_when_hardware_unresolved if {
	count(hardware.deny) == 0 with input as fx.unresolved_input(fx.deployment)
}

test_hardware_accelerator_arch_quiet_on_arch_specific_target if {
	h100 := object.union(fx.h100, {"accelerator": {"arch": "sm90a"}})
	count(hardware.deny) == 0 with input as fx.hardware_input(h100)
	h100f := object.union(fx.h100, {"accelerator": {"arch": "sm100f"}})
	count(hardware.deny) == 1 with input as fx.hardware_input(h100f)
}
