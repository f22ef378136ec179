package supportgate.lib.versions_test

import data.supportgate.lib.versions

# Keys as supportgate/policy/prepared.py version_key writes them: leading zeros and trailing
# zero parts dropped.
thirteen := {"min": [[2, "13"]], "below": [[2, "14"]]}

test_in_range_compares_numbers_not_texts if {
	versions.in_range("13.0", thirteen)
	versions.in_range("13.9.9", thirteen)
	versions.in_range("13.10", thirteen)
	not versions.in_range("14", thirteen)
	not versions.in_range("12.8", thirteen)
	not versions.in_range("9", thirteen)
	versions.in_range("3.12.10", {"min": [[1, "3"], [2, "12"], [1, "9"]], "below": versions.open_below})
}

test_in_range_drops_leading_zeros if {
	versions.in_range("560.35.03", {"min": [[3, "560"], [2, "35"], [1, "3"]], "below": [[3, "560"], [2, "35"], [1, "4"]]})
	versions.in_range("0.00.10", {"min": [[0, ""], [0, ""], [2, "10"]], "below": [[1, "1"]]})
	versions.in_range("013", thirteen)
}

test_in_range_leaves_an_open_side_open if {
	versions.in_range("99", {"min": [[2, "13"]], "below": versions.open_below})
	versions.in_range("99999999999999999999", {"min": [[2, "13"]], "below": versions.open_below})
	versions.in_range("1", {"min": versions.open_min, "below": [[1, "2"]]})
	versions.in_range("0", {"min": versions.open_min, "below": [[1, "2"]]})
	not versions.in_range("2", {"min": versions.open_min, "below": [[1, "2"]]})
	versions.in_range("7", {"min": versions.open_min, "below": versions.open_below})
}

test_in_range_reads_missing_parts_as_zero if {
	versions.in_range("13.0.0.0", thirteen)
	not versions.in_range("14.0.0", thirteen)
	not versions.in_range("12.99.0", thirteen)
	versions.in_range("13.0.1.0", {"min": [[2, "13"], [0, ""], [1, "1"]], "below": versions.open_below})
	not versions.in_range("13.0.0.1", {"min": [[2, "13"], [0, ""], [1, "1"]], "below": versions.open_below})
	versions.in_range("13.0.0.9", {"min": versions.open_min, "below": [[2, "13"], [0, ""], [1, "1"]]})
	not versions.in_range("13.0.1.0", {"min": versions.open_min, "below": [[2, "13"], [0, ""], [1, "1"]]})
}
