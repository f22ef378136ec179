"""The ledger: the future single owner of supportgate's verifiable audit log.

Issue 11 builds it in steps. This first step holds the parts that need no database and are
proven on their own; nothing in the service calls them yet (docs/ledger.md says what the next
step wires):

    merkle      RFC 9162 section 2.1 tree hashing, inclusion and consistency proofs over a
                node store, and their verification
    nodestore   the node store protocol ((level, index) -> hash) and its in-memory form
    rfc9162     the RFC's recursive definitions, word for word: the test oracle of merkle
    note        C2SP signed notes with Ed25519 keys in golang.org/x/mod/sumdb/note's encoding
    checkpoint  C2SP tlog-checkpoint bodies, signed and opened as notes
    errors      what these modules raise
"""
