"""The journal of writes that touch operator files (save, remove, decide, restore).

Before any operator file changes, one entry names every path with its
pre-image and post-image hashes (post-image bytes are already stored as
objects) plus the staged change to apply.  Replay writes a path only while its
bytes still equal the pre-image or the post-image; any other bytes mean an
operator edited it: nothing is overwritten and the operation stops (E302).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.archive.clock import now
from evidence_tool.archive.objects import ObjectStore
from evidence_tool.errors import EvidenceError, IntegrityError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import AnyObject, Record, View, field
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.layout import Layout


def current_hash(path: Path) -> str | None:
    """sha256 of the file's bytes, or None when it does not exist.

    Streamed (a 100 MB file is not loaded), and never through a symbolic link: a link
    is "symlink", so it matches no pre-image and is reported as a change, not followed.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return "directory"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink"
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return "directory"
        if not stat.S_ISREG(mode):
            return "special"
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


class FileChange(Record, frozen=True):
    path: str  # workspace-relative
    pre: str | None  # hash before (None: absent)
    post: str | None  # hash after (None: removed); its bytes are an object


class JournalEntry(Record, frozen=True):
    """One journaled operation: its files' images and the staged change to apply.

    ``staged`` is a staged.json change (merged as it is); ``extra`` keeps any other key
    a layer above recorded, so an entry reads back exactly as it was written: its keys
    follow the others at the top level of the JSON, not under ``extra``."""

    op: str
    actor: str
    at: str
    files: tuple[FileChange, ...]
    staged: AnyObject = field(default_factory=dict)
    extra: AnyObject = field(default_factory=dict)
    _rest = "extra"


@dataclass(frozen=True, slots=True)
class Interrupted(View):
    """A pending journal entry as 'recover' shows it, with the files edited since."""

    name: str
    entry: JournalEntry
    conflicts: tuple[str, ...]
    _keys = (
        "entry=name",
        "op=entry.op",
        "actor=entry.actor",
        "at=entry.at",
        "files=entry.files",
        "conflicts",
    )


class Journal:
    def __init__(self, layout: Layout, objects: ObjectStore) -> None:
        self.layout = layout
        self.objects = objects
        self.folder = layout.journal

    def pending(self) -> list[tuple[Path, JournalEntry]]:
        if not self.folder.is_dir():
            return []
        out = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                # not an object, or a wrong field: msgspec's ValidationError, a ValueError
                out.append((path, JournalEntry.from_json(json.loads(path.read_bytes()))))
            except (ValueError, KeyError):
                raise IntegrityError(
                    f"journal entry {path.name} is unreadable; inspect it "
                    "with 'tht workspace evidence recover'",
                    path=self.layout.rel(path),
                ) from None
        return out

    def images(self) -> dict[str, set[str | None]]:
        """Per file a pending entry names (its absolute path): the hashes of the bytes the
        entry knows, its pre-image and post-image."""
        out: dict[str, set[str | None]] = {}
        for _path, entry in self.pending():
            for f in entry.files:
                where = os.fspath(self.layout.resolve_inside(f.path))
                out.setdefault(where, set()).update((f.pre, f.post))
        return out

    def settle_parked(self, parked: Path, target: Path, known: set[str | None]) -> str | None:
        """Recover the bytes a killed swap parked next to ``target`` (fsio.swap).

        Bytes the journal knows (``known``: a pending entry's images) or the file holds
        go.  Anything else is a save an editor made just before a swap took it out: put
        back where the file is missing, else kept under a visible name next to it.
        Returns the workspace-relative name it was kept under, or None.
        """
        data = parked.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        held = current_hash(target)
        if digest in known or digest == held:
            fsio.unlink(parked, missing_ok=True)
            return None
        if held is None:
            fsio.write_atomic(target, data, expected=None)  # replay then reports E302
            fsio.unlink(parked)
            return None
        kept = target.with_name(f"{target.name}.kept-{digest[:12]}")
        if current_hash(kept) != digest:
            fsio.write_atomic(kept, data, expected=None)
        fsio.unlink(parked)
        return self.layout.rel(kept)

    def begin(
        self,
        op: str,
        actor: str,
        changes: list[FileChange],
        staged: JsonObject,
        extra: JsonObject | None = None,
    ) -> tuple[Path, JournalEntry]:
        entry = JournalEntry(op, actor, now(), tuple(changes), staged, extra or {})
        name = f"{now().replace(':', '')}-{secrets.token_hex(4)}.json"
        path = self.folder / name
        # The commit point of a journaled change: from here the next run rolls it forward.
        fsio.write_atomic(path, canonical_json(entry.to_json()) + b"\n", commit=True)
        return path, entry

    def conflicts(self, entry: JournalEntry) -> list[str]:
        """Paths whose bytes are neither the pre-image nor the post-image."""
        out = []
        for f in entry.files:
            cur = current_hash(self.layout.resolve_inside(f.path))
            if cur not in (f.pre, f.post):
                out.append(f.path)
        return out

    def apply(
        self, path: Path, entry: JournalEntry, apply_staged: Callable[[JsonObject], None]
    ) -> None:
        """Bring every file to its post-image, apply the staged change, close the entry."""
        bad = self.conflicts(entry)
        if bad:
            raise self._conflict(bad)
        for f in entry.files:
            target = self.layout.resolve_inside(f.path)
            if current_hash(target) == f.post:
                continue
            # An editor may save the file between the check above and the rename: the
            # swap replaces only the pre-image, else it leaves their bytes (fsio._swap).
            try:
                if f.post is None:
                    fsio.unlink(target, missing_ok=True, expected=f.pre)
                else:
                    fsio.write_atomic(target, self.objects.get(f.post), expected=f.pre)
            except fsio.Changed:
                raise self._conflict([f.path], while_writing=True) from None
        apply_staged(entry.staged)
        fsio.unlink(path)

    def kept_conflict(self, kept: list[str]) -> EvidenceError:
        """E302 for saves a killed write had set aside and recovery kept beside their file."""
        return EvidenceError(
            "an interrupted write had set aside bytes an editor saved; they are kept as "
            + ", ".join(kept)
            + " (nothing was deleted). Compare each with the file it is named after, keep "
            "what you want in that file, delete the kept copy, then run the command again",
            code="E302",
            path=kept[0],
            details={"result": {"paths": [*kept]}},
        )

    @staticmethod
    def _conflict(paths: list[str], *, while_writing: bool = False) -> EvidenceError:
        what = (
            "a file was saved by someone else while this operation was writing it: "
            if while_writing
            else "an interrupted operation's journal names files edited since: "
        )
        return EvidenceError(
            what + ", ".join(paths) + "; nothing was overwritten. Inspect with 'tht workspace "
            "evidence recover' and abandon the journal with --abandon",
            code="E302",
            path=paths[0],
            details={"result": {"paths": [*paths]}},
        )

    def abandon(self, path: Path) -> None:
        fsio.unlink(path)
