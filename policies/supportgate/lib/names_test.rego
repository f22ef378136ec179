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
