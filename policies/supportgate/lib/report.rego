# How findings are written: the violation every concern's deny and warn sets hold, and the
# texts messages quote.
package supportgate.lib.report

# violation is the element of every concern's deny and warn set.
violation(rule, path, message) := {"rule": rule, "path": path, "message": message}

# text renders the value at `keys` below `doc` for a message ("not stated" if absent).
text(doc, keys) := sprintf("%v", [object.get(doc, keys, "not stated")])

# list_text renders a list of values for a message.
list_text(values) := concat(", ", [sprintf("%v", [v]) | some v in values])

# range_text renders a version range of the matrix: ">= 13, < 14", ">= 13", "< 14" or
# "any version".
range_text(range) := sprintf(">= %v, < %v", [range.min, range.below]) if {
	range.min
	range.below
} else := sprintf(">= %v", [range.min]) if {
	range.min
} else := sprintf("< %v", [range.below]) if {
	range.below
} else := "any version"
