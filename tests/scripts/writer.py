"""A writer process for the multi-process tests (`tests.helpers.run_writers` starts
several at once): `python writer.py STORE NAME COUNT [PACE [SHARED]]`.

STORE is a directory or a store URL. Writes COUNT records of sizes from 100 bytes to
100 KB (so that both SQLite rows and diskcache's separate files are exercised) and
prints each id as soon as it is stored. With SHARED, each write is followed by one of
SHARED calls that every writer makes alike (the same id in all of them), so that
writers add sightings of the same records at once, each in its own session.
"""

from __future__ import annotations

import sys
import time

import addressable as ad


def main() -> None:
    store_dir, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pace = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0  # seconds between writes
    shared = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    kit = ad.Toolkit(ad.open_store(store_dir), session=name)
    for i in range(count):
        size = (100, 5_000, 40_000, 100_000)[i % 4]
        payload = f"{name}:{i}:".encode() * (size // 8)
        res = kit.record(
            "write",
            {"writer": name, "i": i},
            payload[:size],
            determinism="deterministic",
            key=f"{name}/{i}",
        )
        print(res.id, flush=True)
        if shared:
            n = i % shared
            kit.record(
                "shared",
                {"n": n},
                f"shared {n}".encode(),
                determinism="deterministic",
                key=f"s/{n}",
            )
        if pace:
            time.sleep(pace)


if __name__ == "__main__":
    main()
