# Version ranges: a version is in a range when min <= version < below, either bound optional.
#
# Versions are dotted numbers of 1 to 4 parts (Python validates every version of the input
# and the matrix), compared part by part with missing parts read as 0:
# "12.8" < "13" == "13.0" < "13.0.1".
package supportgate.lib.versions

# key: each part as [digit count, digits] with leading zeros dropped. A number with more digits
# is larger, and among equal counts the digits compare as text, so the arrays compare as the
# versions do without parsing a number (regorus refuses to_number("03")).
key(version) := [[count(digits), digits] | some part in split(version, "."); digits := trim_left(part, "0")]

# in_range: min <= version < below, for bounds given as keys (supportgate/policy/prepared.py)
# with their trailing zero parts dropped. Arrays compare part by part, and a shorter one first
# when it is the other's start, so a version's key compares with such a bound as the versions
# do: "13.0" (two parts) >= "13" (one), and "13.0" < "13.0.1" (three). An absent bound leaves
# that side open: [] precedes every key, and the key followed by anything follows it.
in_range(version, bounds) if {
	version_key := key(version)
	object.get(bounds, "min", []) <= version_key
	version_key < object.get(bounds, "below", array.concat(version_key, [[0, ""]]))
}
