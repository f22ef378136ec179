package supportgate.lib.versions_test

import data.supportgate.lib.versions

test_key_strips_leading_zeros if {
	versions.key("560.35.03") == [[3, "560"], [2, "35"], [1, "3"]]
	versions.key("0.00.10") == [[0, ""], [0, ""], [2, "10"]]
}

test_keys_compare_as_versions if {
	versions.key("12.8") < versions.key("13")
	versions.key("13.0.1") > versions.key("13")
	versions.key("3.12.10") > versions.key("3.12.9")
	versions.key("9.10") > versions.key("9.9")
}

# The bounds as supportgate/policy/prepared.py writes them: trailing zero parts dropped.
test_in_range_bounds if {
	thirteen := {"min": versions.key("13"), "below": versions.key("14")}
	versions.in_range("13.0", thirteen)
	versions.in_range("13.9.9", thirteen)
	not versions.in_range("14", thirteen)
	not versions.in_range("12.8", thirteen)
	versions.in_range("99", {"min": versions.key("13")})
	versions.in_range("1", {"below": versions.key("2")})
	not versions.in_range("2", {"below": versions.key("2")})
	versions.in_range("7", {})
	versions.in_range("560.35.03", {"min": versions.key("560.35.3"), "below": versions.key("560.35.4")})
}

test_in_range_reads_missing_parts_as_zero if {
	thirteen := {"min": [[2, "13"]], "below": [[2, "14"]]}
	versions.in_range("13.0.0.0", thirteen)
	not versions.in_range("14.0.0", thirteen)
	not versions.in_range("12.99.0", thirteen)
	versions.in_range("13.0.1.0", {"min": [[2, "13"], [0, ""], [1, "1"]]})
	not versions.in_range("13.0.0.1", {"min": [[2, "13"], [0, ""], [1, "1"]]})
	versions.in_range("13.0.0.9", {"below": [[2, "13"], [0, ""], [1, "1"]]})
	not versions.in_range("13.0.1.0", {"below": [[2, "13"], [0, ""], [1, "1"]]})
}
