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

# in_range: min <= version < below, for bounds given as keys (engines.ranges); an absent
# bound leaves that side open.
in_range(version, bounds) if {
	version_key := key(version)
	_at_least(version_key, bounds)
	_below(version_key, bounds)
}

_at_least(_, bounds) if not bounds.min

_at_least(version_key, bounds) if version_key >= bounds.min

_below(_, bounds) if not bounds.below

_below(version_key, bounds) if version_key < bounds.below
