# Version ranges: a version is in a range when min <= version < below, either bound optional.
#
# Versions are dotted numbers of 1 to 4 parts (Python validates every version of the input
# and the matrix), compared part by part with missing parts read as 0:
# "12.8" < "13" == "13.0" < "13.0.1".
package supportgate.lib.versions

# in_range: min <= version < below, for bounds given as keys (supportgate/policy/prepared.py
# version_key) with their trailing zero parts dropped.
#
# A key is each part as [digit count, digits] with leading zeros dropped. A number with more
# digits is larger, and among equal counts the digits compare as text, so the arrays compare as
# the versions do without parsing a number (regorus refuses to_number("03")). The version's key
# is worked out in the body: a function of its own cost regorus a quarter of the call.
#
# Arrays compare part by part, and a shorter one first when it is the other's start, so a
# version's key compares with such a bound as the versions do: "13.0" (two parts) >= "13"
# (one), and "13.0" < "13.0.1" (three). Both bounds are always given (reading an absent one
# with a default cost another quarter): a side the range leaves open is open_min or open_below.
in_range(version, bounds) if {
	version_key := [[count(digits), digits] | some part in split(version, "."); digits := trim_left(part, "0")]
	bounds.min <= version_key
	version_key < bounds.below
}

# open_min precedes every key. open_below follows every key: both engines order a text after
# every number, so its first part follows every [digit count, digits].
open_min := []

open_below := [["open"]]
