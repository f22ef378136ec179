package supportgate.lib.evidence_test

import data.supportgate.fixtures_test as fx
import data.supportgate.lib
import data.supportgate.lib.evidence

test_evaluated_at_ns_from_input if {
	lib.evaluated_at_ns == 1795996800000000000 with input as fx.hardware_input(fx.b200)
}

test_status_of_missing_items_is_absent if {
	evidence.status("build") == "passed" with input as fx.deployment_input(fx.deployment, fx.b200)
	no_evidence := json.remove(fx.deployment, ["evidence"])
	evidence.status("build") == "absent" with input as fx.deployment_input(no_evidence, fx.b200)
}

test_sources_default_to_missing if {
	lib.sources.kv_cache == "missing" with input as fx.deployment_input(fx.deployment, fx.b200)
	external := fx.with_spec({"service": {"kv_cache": {"source": "external"}}})
	lib.sources.kv_cache == "external" with input as fx.deployment_input(external, fx.b200)
}
