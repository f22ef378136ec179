package supportgate.lib.report_test

import data.supportgate.lib.report

test_violation_fields if {
	report.violation("r", "p", "m") == {"rule": "r", "path": "p", "message": "m"}
}

test_text_of_absent_values if {
	report.text({"a": {"b": 3}}, ["a", "b"]) == "3"
	report.text({}, ["a", "b"]) == "not stated"
}

test_list_text_renders_values if {
	report.list_text(["a", "b"]) == "a, b"
	report.list_text([1, true]) == "1, true"
	report.list_text([]) == ""
}

test_range_text_forms if {
	report.range_text({"min": "3.12", "below": "3.13"}) == ">= 3.12, < 3.13"
	report.range_text({"min": "13"}) == ">= 13"
	report.range_text({"below": "14"}) == "< 14"
	report.range_text({}) == "any version"
}
