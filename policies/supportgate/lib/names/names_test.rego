package supportgate.lib.names_test

import data.supportgate.lib.names

test_identity_ignores_case_and_separators if {
	names.identity("DeepSeek Recipe") == "deepseek-recipe"
	names.identity("deepseek_recipe") == "deepseek-recipe"
	names.identity(" deepseek - recipe ") == "deepseek-recipe"
	names.identity("deepseek-v4.1-flash") == names.identity("DeepSeek-V4.1-Flash")
}

test_identity_keeps_other_characters if {
	names.identity("v4.1") == "v4.1"
	names.identity("vllm") != names.identity("v-llm")
}

test_within_two_edits_counts_substitutions_insertions_and_deletions if {
	names.within_two_edits("deepinfer", "deepinfr") # one deletion
	names.within_two_edits("deepinfer", "deep-infer") # one insertion
	names.within_two_edits("deepinfer", "deapinfar") # two substitutions
	names.within_two_edits("vllm", "vlm") # a deletion inside a run
	names.within_two_edits("ab", "") # two deletions, one side empty
	names.within_two_edits("x", "yz") # a substitution and an insertion
	names.within_two_edits("deepseek-v4.1-flash", "deepseek-v4-flash")
}

# One edit at each end, for every pair of operations _operation_pairs lists by length
# difference (the middle is equal text).
test_within_two_edits_at_both_ends if {
	names.within_two_edits("abcd", "xbcy") # substitute, substitute
	names.within_two_edits("abcde", "bcdez") # delete, insert
	names.within_two_edits("abcd", "xabc") # insert, delete
	names.within_two_edits("abcd", "xbc") # substitute, delete
	names.within_two_edits("abcd", "bcx") # delete, substitute
	names.within_two_edits("abc", "xbcd") # substitute, insert
	names.within_two_edits("abc", "xabd") # insert, substitute
	names.within_two_edits("abcd", "bc") # delete, delete
	names.within_two_edits("bc", "abcd") # insert, insert
	not names.within_two_edits("abcdef", "xbcdyz") # three substitutions
}

test_within_two_edits_refuses_three_and_the_same if {
	not names.within_two_edits("deepinfer", "deepinfer")
	not names.within_two_edits("deepinfer", "depnfr")
	not names.within_two_edits("abc", "")
	not names.within_two_edits("sglang", "vllm")
	not names.within_two_edits("abcdef", "badcfe") # three swaps of neighbours: distance 3
}

test_suggestion_names_close_spellings_as_written if {
	names.suggestion("DeepInfr", {"deepinfer": "DeepInfer"}) == " (did you mean DeepInfer?)"
	names.suggestion("vlm", {"vllm": "vllm", "vlx": "vlx", "sglang": "sglang"}) == " (did you mean vllm or vlx?)"
	names.suggestion("llama", {"deepinfer": "deepinfer"}) == ""
}
