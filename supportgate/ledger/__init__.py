"""The ledger: the one owner of supportgate's verifiable log and of the state it leads to.

Every write that can change a verdict (a decision, a matrix version published, a waiver
created or deleted, a manifest untracked) is a plain-data Batch applied by one function, in
one transaction, by one writer (a thread of the service); the writer's result carries the
events that other domains react to after the commit (supportgate/events.py, registered in
supportgate/runtime.py).

The write path:
    batches        the Batch and Applied Structs: what is asked and what was done, as data
    write          apply_batch: the one write, step by step (lock, admit, append, rows,
                   alerts, outbox, tracking, idempotency, sweep progress)
    writer         LedgerWriter: the writer thread, its group commits

The log, built on supportgate.tlog and kept in the database (docs/ledger.md): entries, log,
keys, checkpointer, witness. The state the log leads to, each table written by one module
here (other domains read it): decisions (with decision_rules and idempotency_keys; rows reads
them back as the contract's Decision), tracking (manifests), matrices, waivers, sweeps.
"""
