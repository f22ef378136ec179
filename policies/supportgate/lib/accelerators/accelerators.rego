# The matrix's hardware catalogue (CONTRACT 10.3): which families an accelerator model
# belongs to, and so which arch it has.
package supportgate.lib.accelerators

# catalogued: the catalogue entries of the accelerator's vendor that its model matches, each
# {arch, consumer, patterns, glob, literal}; empty when none does, the matrix has no
# catalogue or the hardware is unresolved. Patterns are shell-style and matched without
# regard to case: Python lower-cases them once per matrix and joins an entry's patterns into
# one glob, {p1,p2} (supportgate/policy/prepared.py). Null delimiters let "*" span dots as
# well ("NVIDIA H100 80GB HBM3", "nvidia.h100" alike). A glob costs the engines tens of
# microseconds, so an entry's glob is tried only when the model contains the literal text all
# of its patterns require ("h100" for "*h100" and "*h100[- ]*"). The families are read once
# a decision, so straight from data (a rule holding them cost more than the lookup it
# spares), by path: a `data.` reference indexed by a variable costs regorus a search of
# every module.
catalogued(accelerator) := [entry |
	model := lower(accelerator.model)
	some entry in object.get(data.supportgate.prepared.accelerators, accelerator.vendor, [])
	contains(model, entry.literal)
	glob.match(entry.glob, null, model)
]
