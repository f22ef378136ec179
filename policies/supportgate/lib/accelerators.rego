# The matrix's hardware catalogue (CONTRACT 10.3): which families an accelerator model
# belongs to, and so which arch it has.
package supportgate.lib.accelerators

# catalogued: the catalogue entries of the accelerator's vendor that its model matches, each
# {arch, consumer, patterns}; empty when none does, the matrix has no catalogue or the hardware
# is unresolved. Patterns are shell-style and matched without regard to case (Python
# lower-cases them once per matrix: supportgate/policy/prepared.py); null delimiters let "*"
# span dots as well ("NVIDIA H100 80GB HBM3", "nvidia.h100" alike).
catalogued(accelerator) := [entry |
	model := lower(accelerator.model)
	some entry in data.supportgate.prepared.accelerators[accelerator.vendor]
	_matches_any(entry.patterns, model)
]

_matches_any(patterns, model) if {
	some pattern in patterns
	glob.match(pattern, null, model)
}
