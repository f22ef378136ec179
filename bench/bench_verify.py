"""`supportgate audit verify` of a large log: entries per second.

Run: python -m bench.bench_verify [--entries 1000000] [--chunk 2000] [--repeats 2]

1. A scratch SQLite file gets a valid, signed log of --entries leaves, filled directly
   (bench/verify_data.py: decisions from real evaluations of the examples, a few waivers,
   the tracked-manifest table, the tree's nodes, the head and one stored checkpoint).
2. verify_log checks it against the stored checkpoint and its verifier key, --repeats
   times, each timed as a whole (the file in the page cache after the first); the table
   shows the best and the median, as entries/s.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import _duration
from bench.verify_data import fill
from supportgate.audit.verify import CHUNK, verify_log
from supportgate.db import create_db_engine, session_factory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=CHUNK)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as directory:
        path = Path(directory) / "supportgate.db"
        start = time.perf_counter()
        verifier = fill(path, args.entries)
        filled = time.perf_counter() - start
        size = path.stat().st_size
        print(f"filled {args.entries:,} entries in {_duration(filled)} ({size / 2**20:,.0f} MiB)")
        engine = create_db_engine(f"sqlite:///{path}")
        try:
            samples = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                report = verify_log(session_factory(engine), verifier=verifier, chunk=args.chunk)
                samples.append(time.perf_counter() - start)
                assert report.intact, report.summary()
        finally:
            engine.dispose()
    print(report.summary())
    print(f"| audit verify, {args.entries:,} entries (chunk {args.chunk}) | seconds | entries/s |")
    print("|---|---|---|")
    for label, seconds in (("best", min(samples)), ("median", statistics.median(samples))):
        print(f"| {label} of {args.repeats} | {seconds:.1f} | {args.entries / seconds:,.0f} |")


if __name__ == "__main__":
    main()
