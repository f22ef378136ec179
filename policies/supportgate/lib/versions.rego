# Version ranges: a version is in a range when min <= version < below, either bound optional.
#
# Versions are dotted numbers of 1 to 4 parts (Python validates every version of the input
# and the matrix), compared part by part with missing parts read as 0:
# "12.8" < "13" == "13.0" < "13.0.1".
package supportgate.lib.versions

# key: the parts as an array of four numbers, which Rego compares as the versions compare.
# Leading zeros are stripped first: regorus refuses to_number("03"), OPA accepts it.
key(version) := array.concat(parts, array.slice([0, 0, 0], 0, 4 - count(parts))) if {
	parts := [_number(part) | some part in split(version, ".")]
}

_number(part) := to_number(digits) if {
	digits := trim_left(part, "0")
	digits != ""
} else := 0

in_range(version, range) if {
	version_key := key(version)
	_at_least(version_key, range)
	_below(version_key, range)
}

_at_least(_, range) if not range.min

_at_least(version_key, range) if version_key >= key(range.min)

_below(_, range) if not range.below

_below(version_key, range) if version_key < key(range.below)
