"""The stat cache: recognize unchanged curated files without reading them (SPEC.md 12).

As Git's index does, a file whose (size, mtime_ns, ctime_ns, inode) equal the
recorded ones is taken as unchanged, with its recorded hash and parse summary.
An edit that keeps size and mtime (``touch -d``) still changes ctime, and a
replaced file changes inode.  Entries whose mtime falls within a second of the
moment the cache was taken are "racily clean": the file could have changed
again within the timestamp's granularity, so they are re-hashed.  Only valid
units are recorded; the cache lives in ``.evidence-cache/`` (derived, never
committed) and is ignored whole when the tool version changes.
"""

from __future__ import annotations

import json
import os
import time
from typing import NamedTuple

from evidence_tool import __version__, fsio
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

FORMAT = 1
RACY_NS = 1_000_000_000
REWRITE_AFTER = 64
NAME = "stat-cache.json"


class StatEntry(NamedTuple):
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    file_hash: str
    unit_id: str
    kind: str
    content_hash: str
    id_line: int | None
    kind_line: int | None

    def matches(self, st: os.stat_result) -> bool:
        return (
            self.size == st.st_size
            and self.mtime_ns == st.st_mtime_ns
            and self.ctime_ns == st.st_ctime_ns
            and self.ino == st.st_ino
        )


class StatCache:
    def __init__(self, layout: Layout, entries: dict[str, StatEntry], stamp_ns: int) -> None:
        self.layout = layout
        self.path = layout.cache / NAME
        self.entries = entries
        self.stamp_ns = stamp_ns  # when the recorded scan started
        self.scan_started_ns = time.time_ns()
        self.fresh: dict[str, StatEntry] = {}
        self.promotable = 0
        self.dirty = False

    @classmethod
    def load(cls, layout: Layout) -> StatCache:
        path = layout.cache / NAME
        try:
            doc = json.loads(path.read_bytes())
            if doc.get("format") != FORMAT or doc.get("version") != __version__:
                raise ValueError("other version")
            entries = {rel: StatEntry(*row) for rel, row in doc["entries"].items()}
            return cls(layout, entries, int(doc["stamp_ns"]))
        except (OSError, ValueError, TypeError, KeyError):
            return cls(layout, {}, 0)

    def lookup(self, rel: str, st: os.stat_result) -> tuple[StatEntry | None, bool]:
        """(entry, trusted): trusted means no read is needed; an untrusted entry must be
        confirmed by hashing the file (racily clean)."""
        entry = self.entries.get(rel)
        if entry is None or not entry.matches(st):
            return None, False
        return entry, st.st_mtime_ns < self.stamp_ns - RACY_NS

    def keep(self, rel: str, entry: StatEntry, *, confirmed: bool = False) -> None:
        self.fresh[rel] = entry
        if confirmed and entry.mtime_ns < self.scan_started_ns - RACY_NS:
            # Racily clean last time, old enough now: a save with this scan's stamp
            # lets the next run trust it instead of re-reading it every time.
            self.promotable += 1

    def record(
        self,
        rel: str,
        st: os.stat_result,
        file_hash: str,
        unit_id: str,
        kind: str,
        content_hash: str,
        id_line: int | None,
        kind_line: int | None,
    ) -> None:
        entry = StatEntry(
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_ino,
            file_hash,
            unit_id,
            kind,
            content_hash,
            id_line,
            kind_line,
        )
        self.fresh[rel] = entry

    def save(self) -> bool:
        """Write the cache when the scan learned enough to be worth it.

        A no-op run writes nothing.  A few freshly parsed files are not worth
        rewriting a 10,000-entry cache for: the next run re-reads them (well under
        a millisecond each), so the cache is saved once REWRITE_AFTER files (or
        any removed ones, or a first scan) have accumulated.
        """
        if self.fresh == self.entries and not self.promotable:
            return False
        learned = self.promotable + sum(
            1 for rel, e in self.fresh.items() if self.entries.get(rel) != e
        )
        removed = len(self.entries.keys() - self.fresh.keys())
        if self.entries and learned < REWRITE_AFTER and not removed:
            return False
        doc = {
            "format": FORMAT,
            "version": __version__,
            "stamp_ns": self.scan_started_ns,
            "entries": {rel: list(e) for rel, e in sorted(self.fresh.items())},
        }
        ensure_cache(self.layout)
        fsio.write_atomic(self.path, json.dumps(doc, separators=(",", ":")).encode())
        self.entries, self.stamp_ns = dict(self.fresh), self.scan_started_ns
        return True
