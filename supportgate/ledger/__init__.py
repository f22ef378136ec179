"""The ledger: the one owner of supportgate's verifiable log and of the state it leads to.

Every write that can change a verdict (a decision, a matrix version published, a waiver
created or deleted, a manifest untracked) is a plain-data Batch applied by one function, in
one transaction, by one writer (in a thread of the service or in a process of its own); the
writer's result carries the events that other domains react to after the commit
(supportgate/events.py, registered in supportgate/runtime.py).

The write path:
    batches        the Batch and Applied Structs: what is asked and what was done, as data
    write          apply_batch: the one write, step by step (lock, admit, append, rows,
                   alerts, outbox, tracking, idempotency, sweep progress)
    writer         LedgerWriter: group commits in a writer thread; commit_group, apply_alone
    writer_process ProcessLedgerWriter: the same commits in a child process, over a socket
                   that carries only JSON

The log and its tree:
    entries        the canonical JSON entry of each event type
    log            the head lock and append_entries (rows, tree nodes, head), proofs' reads
    merkle         RFC 9162 section 2.1 tree hashing, inclusion and consistency proofs over a
                   node store, and their verification
    nodestore      the node store protocol ((level, index) -> hash) and its in-memory form
    rfc9162        the RFC's recursive definitions, word for word: the test oracle of merkle
    note           C2SP signed notes with Ed25519 keys in golang.org/x/mod/sumdb/note's encoding
    checkpoint     C2SP tlog-checkpoint bodies, signed and opened as notes

The state the log leads to, each table written by one module here (other domains read it):
    decisions      decisions, decision_rules, idempotency_keys
    rows           decision rows read back as the contract's Decision
    tracking       manifests (the tracked manifests)
    matrices       matrix_versions
    waivers        waivers
    sweeps         sweeps, sweep_memos (a sweep's progress commits with its decisions)
"""
