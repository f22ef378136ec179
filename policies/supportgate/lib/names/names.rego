# Names as identities (CONTRACT section 10.5): engine names, model names and service
# providers compare without regard to case, with "-", "_" and spaces alike.
package supportgate.lib.names

# identity is the form two names are compared in: lower case, each run of "-", "_" and
# spaces one "-", none at either end ("DeepSeek Recipe", "deepseek_recipe" and
# "deepseek-recipe" are one identity). Split and joined rather than by regex.replace, which
# regorus compiles anew at every call (docs/performance.md, issue 21's figures).
identity(name) := concat("-", [part |
	some part in split(replace(replace(lower(name), "_", " "), "-", " "), " ")
	part != ""
])

# suggestion is " (did you mean X?)" naming each spelling in candidates (an object of
# identity: name as the matrix writes it) whose identity is within two edits of name's, or ""
# when none is (CONTRACT 10.5).
suggestion(name, candidates) := sprintf(" (did you mean %v?)", [concat(" or ", close)]) if {
	own := identity(name)
	close := sort([spelled | some key, spelled in candidates; within_two_edits(own, key)])
	close != []
} else := ""

# within_two_edits: a and b differ, by a Levenshtein distance of at most 2. Neither OPA nor
# regorus has an edit-distance builtin, so it is decided exactly without one, on the names'
# characters (an array index costs the engines far less than a substring call):
#
# - Removing the common prefix, then the common suffix of what remains, keeps the distance.
#   The remainders x and y then differ in their first and in their last character (or one
#   is empty).
# - An optimal edit script therefore starts with an operation on x's and y's first
#   characters and ends with one on their last: substitute (1, 1), delete from x (1, 0) or
#   insert from y (0, 1). If that is one operation, x and y have at most one character each.
#   If they are two and the distance is 2, nothing lies between them but equal text.
within_two_edits(a, b) if {
	a != b
	abs(count(a) - count(b)) <= 2 # each edit changes the length by at most one: a cheap filter
	x := split(a, "")
	y := split(b, "")
	prefix := _common_prefix_length(x, y)
	x_rest := array.slice(x, prefix, count(x))
	y_rest := array.slice(y, prefix, count(y))
	suffix := _common_prefix_length(array.reverse(x_rest), array.reverse(y_rest))
	_edits_at_ends(
		array.slice(x_rest, 0, count(x_rest) - suffix),
		array.slice(y_rest, 0, count(y_rest) - suffix),
	)
}

# One operation at most.
_edits_at_ends(x, y) if {
	count(x) <= 1
	count(y) <= 1
}

# One at the start (i characters of x, k of y) and one at the end (j of x, l of y).
_edits_at_ends(x, y) if {
	some [i, k, j, l] in _operation_pairs[count(x) - count(y)]
	count(x) >= i + j
	count(y) >= k + l
	array.slice(x, i, count(x) - j) == array.slice(y, k, count(y) - l)
}

# _operation_pairs: the pairs of operations, [i, k, j, l], by the difference in length they
# make (i + j characters of x against k + l of y).
_operation_pairs := {
	-2: [[0, 1, 0, 1]],
	-1: [[1, 1, 0, 1], [0, 1, 1, 1]],
	0: [[1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0]],
	1: [[1, 1, 1, 0], [1, 0, 1, 1]],
	2: [[1, 0, 1, 0]],
}

# _common_prefix_length: the length of the longest common prefix of two arrays: the first
# index where they differ, or the shorter one's length.
_common_prefix_length(x, y) := min(array.concat([i | some i, c in x; c != y[i]], [min([count(x), count(y)])]))
