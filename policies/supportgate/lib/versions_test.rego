package supportgate.lib.versions_test

import data.supportgate.lib.versions

test_key_strips_leading_zeros_and_pads_to_four_parts if {
	versions.key("560.35.03") == [560, 35, 3, 0]
	versions.key("0.00.10") == [0, 0, 10, 0]
	versions.key("13") == versions.key("13.0.0.0")
}

test_keys_compare_as_versions if {
	versions.key("12.8") < versions.key("13")
	versions.key("13.0.1") > versions.key("13")
	versions.key("3.12.10") > versions.key("3.12.9")
}

test_in_range_bounds if {
	versions.in_range("13.0", {"min": [13, 0, 0, 0], "below": [14, 0, 0, 0]})
	versions.in_range("13.9.9", {"min": [13, 0, 0, 0], "below": [14, 0, 0, 0]})
	not versions.in_range("14", {"min": [13, 0, 0, 0], "below": [14, 0, 0, 0]})
	not versions.in_range("12.8", {"min": [13, 0, 0, 0], "below": [14, 0, 0, 0]})
	versions.in_range("99", {"min": [13, 0, 0, 0]})
	versions.in_range("1", {"below": [2, 0, 0, 0]})
	not versions.in_range("2", {"below": [2, 0, 0, 0]})
	versions.in_range("7", {})
	versions.in_range("560.35.03", {"min": [560, 35, 3, 0], "below": [560, 35, 4, 0]})
}
