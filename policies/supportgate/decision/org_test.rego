package supportgate.decision_test

import data.supportgate.decision
import data.supportgate.fixtures_test as fx

# Organisation bundles (docs/organisation-policies.md): every deny and warn of a package
# under data.supportgate.org joins the decision, beside the built-in ones.
_org_packages := {"acme": {
	"deny": {{"rule": "org.test.deny", "message": "denied by the organisation", "path": "spec"}},
	"warn": {{"rule": "org.test.warn", "message": "warned by the organisation", "path": "spec"}},
}}

test_org_deny_and_warn_join_the_decision if {
	result := decision.result with input as fx.deployment_input(fx.deployment, fx.b200)
		with data.supportgate.org as _org_packages
	result.verdict == "rejected"
	_severities(result, "org.test.deny") == {"deny"}
	_severities(result, "org.test.warn") == {"warn"}
}

test_org_deny_is_waivable if {
	waiver := {"id": "w-1", "rule": "org.test.deny", "expires_at": "2027-01-01T00:00:00Z"}
	inp := _with_waivers(fx.deployment_input(fx.deployment, fx.b200), [waiver])
	result := decision.result with input as inp with data.supportgate.org as _org_packages
	result.verdict == "supported"
	_severities(result, "org.test.deny") == {"waived"}
}

# A malformed organisation finding is left out (its deny no longer rejects) and a warn names
# its rule; a failed organisation rule (input.organisation_failed, the engine's second try)
# leaves the built-in decision alone, with a warn.
test_org_malformed_finding_is_a_warn_naming_its_rule if {
	packages := {"acme": {"deny": {{"rule": "org.test.deny", "message": 7, "path": "spec"}}}}
	result := decision.result with input as fx.deployment_input(fx.deployment, fx.b200)
		with data.supportgate.org as packages
	result.verdict == "supported"
	_severities(result, "org.test.deny") == {"warn"}
}

test_org_finding_without_a_rule_is_a_warn_of_org if {
	packages := {"acme": {"warn": {{"message": "m", "path": "spec"}}}}
	result := decision.result with input as fx.deployment_input(fx.deployment, fx.b200)
		with data.supportgate.org as packages
	_severities(result, "org") == {"warn"}
}

test_org_failed_reads_no_org_rule if {
	inp := object.union(fx.deployment_input(fx.deployment, fx.b200), {"organisation_failed": true})
	result := decision.result with input as inp with data.supportgate.org as _org_packages
	result.verdict == "supported"
	_severities(result, "org") == {"warn"}
	_severities(result, "org.test.deny") == set()
}
