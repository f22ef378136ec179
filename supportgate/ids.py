"""Random identifiers for decisions and requests, without a system call per id.

Ids need to be unique, not secret, so they come from a generator seeded from the OS once per
process (and again in a forked child), not from os.urandom per id: under load the event
loop thread would give up the GIL to the decision writer on every urandom call and wait to
get it back (measured: ~0.6 ms per uuid4() with the writer busy).
"""

from __future__ import annotations

import os
import random
import uuid

_source = random.Random(random.SystemRandom().getrandbits(256))  # noqa: S311 - not secrets
os.register_at_fork(after_in_child=lambda: _source.seed(random.SystemRandom().getrandbits(256)))


def random_uuid() -> str:
    """A version 4 UUID as text."""
    return str(uuid.UUID(int=_source.getrandbits(128), version=4))


def random_hex() -> str:
    """128 random bits as 32 hex digits (request ids)."""
    return f"{_source.getrandbits(128):032x}"
