package supportgate.lib.report_test

import data.supportgate.lib.report

test_text_of_absent_values if {
	report.text({"a": {"b": 3}}, ["a", "b"]) == "3"
	report.text({}, ["a", "b"]) == "not stated"
}

test_list_text_renders_values if {
	report.list_text(["a", "b"]) == "a, b"
	report.list_text([1, true]) == "1, true"
	report.list_text([]) == ""
}
