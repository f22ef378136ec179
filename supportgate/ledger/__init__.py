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

The log, built on supportgate.tlog (the transparency log itself: hashing, proofs, signed
notes, checkpoints, receipts), kept in the database:
    entries        the canonical JSON entry of each event type
    log            the head lock and append_entries (rows, tree nodes, head), the SQL node
                   store, proofs' reads
    keys           the signing key: its file, its settings, `audit keygen`
    checkpointer   signs the head as a checkpoint while entries arrive, at stop, after a sweep
    witness        appends each signed checkpoint to the witness file

The state the log leads to, each table written by one module here (other domains read it):
    decisions      decisions, decision_rules, idempotency_keys
    rows           decision rows read back as the contract's Decision
    tracking       manifests (the tracked manifests)
    matrices       matrix_versions
    waivers        waivers
    sweeps         sweeps, sweep_memos (a sweep's progress commits with its decisions)
"""
