package supportgate.host_test

import data.supportgate.fixtures_test as fx
import data.supportgate.host

# --- host.os --------------------------------------------------------------------------

test_host_os_fires_on_unlisted_os if {
	denied := host.deny with input as fx.hardware_input(object.union(fx.b200, {"os": {"name": "windows"}}))
	fx.paths(denied, "host.os") == {"spec.os.name"}
}

test_host_os_fires_when_os_missing if {
	"host.os" in fx.rules(host.deny) with input as fx.hardware_input(json.remove(fx.b200, ["os"]))
}

test_host_os_quiet_on_linux if {
	not "host.os" in fx.rules(host.deny) with input as fx.hardware_input(fx.b200)
}

test_host_os_fires_against_the_deployment_engine if {
	bsd := object.union(data.matrix.engines.deepinfer, {"host": {"os": ["freebsd"]}})
	matrix := object.union(data.matrix, {"engines": {"bsd-engine": bsd}})
	prepared_bsd := object.union(data.supportgate.prepared.engines.deepinfer, {"texts": {"os": "freebsd"}})
	prepared := object.union(data.supportgate.prepared, {"engines": {"bsd-engine": prepared_bsd}})
	spec := fx.with_spec({"engine": {"name": "bsd-engine"}})
	denied := host.deny with input as fx.inline_input(spec, fx.b200)
		with data.matrix as matrix
		with data.supportgate.prepared as prepared
	fx.paths(denied, "host.os") == {"spec.hardware.spec.os.name"}
}

test_host_os_quiet_when_engine_unknown if {
	spec := fx.with_spec({"engine": {"name": "ollama"}})
	count(host.deny) == 0 with input as fx.deployment_input(spec, object.union(fx.b200, {"os": {"name": "windows"}}))
}

# --- host.compiler ----------------------------------------------------------------------

test_host_compiler_fires_below_min if {
	denied := host.deny with input as fx.hardware_input(object.union(fx.b200, {"compiler": {"version": "12.2.0"}}))
	fx.paths(denied, "host.compiler") == {"spec.compiler.version"}
}

test_host_compiler_fires_on_other_compiler if {
	denied := host.deny
		with input as fx.hardware_input(object.union(fx.b200, {"compiler": {"name": "clang", "version": "18.1"}}))
	fx.paths(denied, "host.compiler") == {"spec.compiler.name"}
}

test_host_compiler_fires_when_compiler_missing if {
	denied := host.deny with input as fx.hardware_input(json.remove(fx.b200, ["compiler"]))
	fx.paths(denied, "host.compiler") == {"spec.compiler.name"}
}

test_host_compiler_fires_when_version_missing if {
	denied := host.deny with input as fx.hardware_input(json.remove(fx.b200, ["compiler/version"]))
	fx.paths(denied, "host.compiler") == {"spec.compiler.version"}
}

test_host_compiler_quiet_at_min if {
	not "host.compiler" in fx.rules(host.deny)
		with input as fx.hardware_input(object.union(fx.b200, {"compiler": {"version": "13"}}))
}

test_host_compiler_quiet_when_matrix_names_no_compiler if {
	matrix := json.remove(data.matrix, ["engines/deepinfer/host/compiler/name"])
	hardware := object.union(fx.b200, {"compiler": {"name": "clang", "version": "18.1"}})
	not "host.compiler" in fx.rules(host.deny) with input as fx.hardware_input(hardware) with data.matrix as matrix
}

# --- host.python -------------------------------------------------------------------------

test_host_python_fires_below_range if {
	denied := host.deny with input as fx.hardware_input(object.union(fx.b200, {"python": "3.11.2"}))
	fx.paths(denied, "host.python") == {"spec.python"}
}

test_host_python_fires_at_upper_bound if {
	"host.python" in fx.rules(host.deny) with input as fx.hardware_input(object.union(fx.b200, {"python": "3.13"}))
}

test_host_python_fires_when_missing if {
	"host.python" in fx.rules(host.deny) with input as fx.hardware_input(json.remove(fx.b200, ["python"]))
}

test_host_python_fires_on_unparsable_version if {
	"host.python" in fx.rules(host.deny) with input as fx.hardware_input(object.union(fx.b200, {"python": "3.12-rc1"}))
}

test_host_python_quiet_in_range if {
	not "host.python" in fx.rules(host.deny)
		with input as fx.hardware_input(object.union(fx.b200, {"python": "3.12.0"}))
}

test_host_python_path_names_the_ref if {
	hardware := object.union(fx.b200, {"python": "3.10"})
	denied := host.deny with input as fx.deployment_input(fx.deployment, hardware)
	fx.paths(denied, "host.python") == {"spec.hardware.ref"}
	some violation in denied
	contains(violation.message, "pool-a")
}

test_host_rules_quiet_when_hardware_unresolved if {
	count(host.deny) == 0 with input as fx.unresolved_input(fx.deployment)
}

test_host_warn_is_empty if {
	count(host.warn) == 0 with input as fx.hardware_input(fx.rtx4090)
}
