# Times the policies compare: RFC 3339 texts as nanoseconds since 1970.
#
# Python writes every time of the input in UTC and in the years whose nanoseconds fit in
# 64 bits (supportgate/manifests/common.py, FIRST_YEAR to LAST_YEAR), so both engines parse
# each one alike. The evaluation time is input.evaluated_at, never time.now_ns(): a decision
# can be replayed from its stored input.
package supportgate.lib.times

evaluated_at_ns := time.parse_rfc3339_ns(input.evaluated_at)

day_ns := ((24 * 60) * 60) * 1000000000
