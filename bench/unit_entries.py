"""Why a manifest's unit entries are views, not records (issue 32, CONTRIBUTING.md).

    python bench/unit_entries.py [--n 50000] [--repeat 7]

Builds a manifest of ``--n`` manual entries, then prints the CPU medians of what a no-op
consolidate would pay either way: ``UnitEntry`` views over the parsed objects (what the
archive does) against ``msgspec.convert`` into records, and the records turned back into
objects (the splice, the YAML mirror and the comparison with the previous manifest work
on objects).  The cyclic GC is paused, as the consolidate pauses it (``gcpause``).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import msgspec

from evidence_tool.archive.manifest import FORMAT, UnitEntry, manifest_bytes
from evidence_tool.record import AnyObject, Record


class EntryRecord(Record, frozen=True):
    """A unit entry as a record: its fields in the manifest's key order."""

    id: str
    path: str
    kind: str
    content_hash: str
    file_hash: str
    provenance: AnyObject
    review_items: list[AnyObject]


def _ms(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    units: list[Any] = [
        {
            "id": f"evidence:u{i:06d}",
            "path": f"evidence/curated/domain/u{i:06d}.md",
            "kind": "domain",
            "content_hash": "a" * 64,
            "file_hash": f"{i:064x}",
            "provenance": {
                "kind": "manual",
                "curator": "alice",
                "declared_at": "2030-01-01T00:00:00Z",
            },
            "review_items": [],
        }
        for i in range(args.n)
    ]
    data = manifest_bytes(
        {
            "format": FORMAT,
            "units": units,
            "deletions": [],
            "suppressed_sources": [],
            "sources": [],
        }
    )
    parsed = json.loads(data)["units"]
    records = msgspec.convert(parsed, list[EntryRecord])
    gc.disable()
    rows = {
        "views (UnitEntry)": lambda: [UnitEntry(e) for e in parsed],
        "records (msgspec.convert)": lambda: msgspec.convert(parsed, list[EntryRecord]),
        "records back to objects": lambda: [r.to_json() for r in records],
    }
    for label, work in rows.items():
        print(f"{label:28} {_ms(work, args.repeat):8.1f} ms CPU ({args.n} entries)")


if __name__ == "__main__":
    main()
