"""The ledger: the one owner of supportgate's verifiable log and of the state it leads to, written
in plain-data Batches by one writer thread (docs/ledger.md maps its modules)."""
