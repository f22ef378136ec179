# Version ranges: a version is in a range when min <= version < below, either bound optional.
#
# Versions are dotted numbers of 1 to 4 parts (Python validates every version of the input
# and the matrix), compared part by part with missing parts read as 0:
# "12.8" < "13" == "13.0" < "13.0.1".
package supportgate.lib.versions

# key: each part as [digit count, digits] with leading zeros dropped, padded to four parts.
# A number with more digits is larger, and among equal counts the digits compare as text,
# so the arrays compare as the versions do without parsing a number (regorus refuses
# to_number("03")). The matrix's bounds are keys already (supportgate/policy/prepared.py).
key(version) := array.concat(parts, array.slice([[0, ""], [0, ""], [0, ""]], 0, 4 - count(parts))) if {
	parts := [[count(digits), digits] | some part in split(version, "."); digits := trim_left(part, "0")]
}

# in_range: min <= version < below, for bounds given as keys; an absent bound leaves that side
# open: [] precedes every key, and the key followed by anything follows it (arrays compare
# part by part, then by length).
in_range(version, bounds) if {
	version_key := key(version)
	object.get(bounds, "min", []) <= version_key
	version_key < object.get(bounds, "below", array.concat(version_key, [[0, ""]]))
}
