"""The ledger: the one owner of supportgate's verifiable log and of the state it leads to.
Every write that can change a verdict is a plain-data Batch applied by write.apply_batch in
one transaction, by one writer thread. Its modules: docs/ledger.md.
"""
