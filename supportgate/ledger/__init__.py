"""The ledger: the one owner of supportgate's verifiable log and of the state it leads to.

Every write that can change a verdict is a plain-data Batch applied by one function
(write.apply_batch), in one transaction, by one writer thread; the writer's result carries the
events other domains react to after the commit. Its modules: docs/ledger.md.
"""
