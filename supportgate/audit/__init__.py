"""The audit history: append-only decisions in a sha256 hash chain, queries and verification."""
