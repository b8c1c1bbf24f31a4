"""The stat cache: recognize unchanged curated files without reading them (SPEC.md 12).

As Git's index does, a file whose (size, mtime_ns, ctime_ns, inode) equal the
recorded ones is taken as unchanged, with its recorded hash and parse summary.
An edit that keeps size and mtime (``touch -d``) still changes ctime, and a
replaced file changes inode.  Entries whose mtime falls within a second of the
moment the cache was taken are "racily clean": the file could have changed
again within the timestamp's granularity, so they are re-hashed.  Only valid
units are recorded; the cache lives in ``.evidence-cache/`` (derived, never
committed) and is ignored whole when the tool or Python version changes.

The file is the sha256 of the rest, a one-line JSON header and the entries in
``marshal`` format, which loads 10,000 entries in a third of the time JSON
takes.  marshal is not meant for damaged input, so nothing is unmarshalled
before the digest matches: a damaged cache is ignored and rebuilt, never
trusted and never a crash.  The digest guards against damage, not malice:
the cache is machine-local (ignored by Git); one received from elsewhere
should be deleted, like any cache.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import sys
import time
from typing import Any, Final

from evidence_tool import __version__, fsio
from evidence_tool.errors import EvidenceWarning
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

FORMAT = 2
RACY_NS = 1_000_000_000
REWRITE_AFTER = 64
NAME = "stat-cache.bin"
_PYTHON = "{}.{}".format(*sys.version_info[:2])  # marshal's format may change between versions

# An entry: (size, mtime_ns, ctime_ns, inode, file_hash, unit_id, kind, content_hash,
# id_line, kind_line).  Plain tuples, read by index: they load without conversion.
Facts = tuple[str, str, str, str, int | None, int | None]  # from file_hash on
StatEntry = tuple[int, int, int, int, str, str, str, str, int | None, int | None]
FILE_HASH: Final = 4
UNIT_ID: Final = 5
KIND: Final = 6
CONTENT_HASH: Final = 7
ID_LINE: Final = 8
KIND_LINE: Final = 9


def encode(stamp_ns: int, entries: dict[str, StatEntry]) -> bytes:
    """The cache file: the sha256 of the rest, a JSON header line, the marshalled entries."""
    payload = marshal.dumps({rel: tuple(e) for rel, e in sorted(entries.items())})
    header = {"format": FORMAT, "version": __version__, "python": _PYTHON, "stamp_ns": stamp_ns}
    body = json.dumps(header, separators=(",", ":")).encode() + b"\n" + payload
    return hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def decode(data: bytes) -> tuple[int, dict[str, StatEntry]]:
    """(stamp_ns, entries); ValueError for anything this version did not write intact.

    The digest covers the header too: a damaged stamp could otherwise make racily clean
    entries look old enough to trust."""
    digest, _, body = data.partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != digest:
        raise ValueError("damaged")
    line, _, payload = body.partition(b"\n")
    header = json.loads(line)
    if not isinstance(header, dict) or (
        header.get("format"),
        header.get("version"),
        header.get("python"),
    ) != (FORMAT, __version__, _PYTHON):
        raise ValueError("written by another version")
    stamp_ns = header.get("stamp_ns")
    if type(stamp_ns) is not int:
        raise ValueError("no stamp")
    entries: Any = marshal.loads(payload)
    if not isinstance(entries, dict) or not all(
        type(e) is tuple and len(e) == 10 for e in entries.values()
    ):
        raise ValueError("not a stat cache")
    return stamp_ns, entries


class StatCache:
    def __init__(self, layout: Layout, entries: dict[str, StatEntry], stamp_ns: int) -> None:
        self.layout = layout
        self.path = layout.cache / NAME
        self.entries = entries
        self.stamp_ns = stamp_ns  # when the recorded scan started
        self.scan_started_ns = time.time_ns()
        self.fresh: dict[str, StatEntry] = {}
        self.promotable = 0
        self.learned = 0  # entries recorded afresh by this scan
        self.new_keys = 0  # of which for files the cache did not know
        self.unsaved: str | None = None  # why save() could not write, if it could not

    @classmethod
    def load(cls, layout: Layout) -> StatCache:
        try:
            stamp_ns, entries = decode((layout.cache / NAME).read_bytes())
        except Exception:
            return cls(layout, {}, 0)
        return cls(layout, entries, stamp_ns)

    def lookup(self, rel: str, st: os.stat_result) -> tuple[StatEntry | None, bool]:
        """(entry, trusted): trusted means no read is needed; an untrusted entry must be
        confirmed by hashing the file (racily clean)."""
        entry = self.entries.get(rel)
        if entry is None or entry[:4] != (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino):
            return None, False
        return entry, st.st_mtime_ns < self.stamp_ns - RACY_NS

    def trusted(self, rel: str, st: os.stat_result) -> StatEntry | None:
        """The entry if the file is unchanged and not racily clean (kept for the next save)."""
        entry = self.entries.get(rel)
        if (
            entry is not None
            # lookup()'s test, inlined: this runs once per curated file in every scan
            and entry[:4] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            and st.st_mtime_ns < self.stamp_ns - RACY_NS
        ):
            self.fresh[rel] = entry
            return entry
        return None

    def keep(self, rel: str, entry: StatEntry, *, confirmed: bool = False) -> None:
        self.fresh[rel] = entry
        if confirmed and entry[1] < self.scan_started_ns - RACY_NS:
            # Racily clean last time, old enough now: a save with this scan's stamp
            # lets the next run trust it instead of re-reading it every time.
            self.promotable += 1

    def record(self, rel: str, st: os.stat_result, facts: Facts) -> None:
        """Record a valid unit file as read now: its stat and ``facts`` about it."""
        entry: StatEntry = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, *facts)
        if rel not in self.entries and rel not in self.fresh:
            self.new_keys += 1
        self.fresh[rel] = entry
        self.learned += 1

    def save(self) -> bool:
        """Write the cache when the scan learned enough to be worth it.

        A no-op run writes nothing.  A few freshly parsed files are not worth
        rewriting a 10,000-entry cache for: the next run re-reads them (well under
        a millisecond each), so the cache is saved once REWRITE_AFTER files (or
        any removed ones, or a first scan) have accumulated.
        """
        if not self.learned and not self.promotable and len(self.fresh) == len(self.entries):
            return False  # every entry was kept as it was (kept entries are old keys)
        # Kept entries and re-recorded ones use old keys; only new keys add to fresh.
        removed = len(self.entries) - (len(self.fresh) - self.new_keys)
        if self.entries and self.learned + self.promotable < REWRITE_AFTER and not removed:
            return False
        # The folder as any derived writer makes it (its failure is the command's: the
        # other caches need it too); only the cache file's own write may be refused.
        ensure_cache(self.layout)
        try:
            # Derived data guarded by its digest: a torn write is ignored on load, no fsync.
            fsio.write_atomic(self.path, encode(self.scan_started_ns, self.fresh), durable=False)
        except OSError as exc:
            # A cache that cannot be written (a full disk) costs the next run a re-read,
            # never this command: it goes on and says so (``unsaved``).
            self.unsaved = exc.strerror or type(exc).__name__
            return False
        self.entries, self.stamp_ns = dict(self.fresh), self.scan_started_ns
        return True

    def unsaved_warning(self) -> EvidenceWarning | None:
        """What to tell the user when ``save`` could not write the cache."""
        if self.unsaved is None:
            return None
        rel = self.layout.rel(self.path)
        return EvidenceWarning(
            f"the derived stat cache could not be written ({self.unsaved}); nothing is "
            "lost, the next run reads every unit file again: free disk space",
            rel,
        )
