"""Put a format's files at ``--output`` under the output-path rule (workspace.outputs),
or, with ``--dry-run``, only say what would change.  Both run the same plan: a dry run
refuses what the real run would refuse.

A one-file format (cortex, vanna, jsonl) writes ``--output`` itself; a tree format
(wrenai, dbt) fills the folder ``--output``.  A file that already holds the bytes is left
alone (never rewritten); an earlier publish's file the new one no longer has is removed,
but only while it still holds the bytes publish wrote (the operator's files are theirs).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from evidence_tool.errors import UsageError
from evidence_tool.publish.model import NotExported, Published
from evidence_tool.record import Record
from evidence_tool.workspace import outputs
from evidence_tool.workspace.layout import Layout

COMMAND = "publish"


class Changes(Record, frozen=True):
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    restamped: int = 0  # only the revision they name changes (written again, not listed)
    unchanged: int = 0


class PublishResult(Record, frozen=True):
    format: str
    revision: str
    output: str  # workspace-relative
    dry_run: bool
    units: int  # units the output holds
    files: Changes
    entries: Changes | None  # by unit id, for the one-file JSON lines formats
    not_exported: tuple[NotExported, ...]


# Entry keys of a JSON lines file: the unit id each line carries.
EntryKeys = Callable[[bytes], dict[str, bytes]]


def jsonl_entries(key: str) -> EntryKeys:
    def entries(data: bytes) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for line in data.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue  # not ours, or damaged: the file-level change still says so
            if isinstance(value, dict) and isinstance(value.get(key), str):
                found[value[key]] = line
        return found

    return entries


_HEX64 = re.compile(rb"\b[0-9a-f]{64}\b")


def restamper(layout: Layout, revision: str) -> Callable[[bytes], bytes]:
    """Tells a file whose only difference is the revision it names (every entry carries
    the snapshot revision, so each new revision touches every entry) from a real change:
    the old bytes with each earlier revision of the archive read as the new one."""
    new = revision.encode()
    try:
        names = os.listdir(layout.snapshots)
    except OSError:
        names = []
    known = {n.encode() for n in names if len(n) == 64} - {new}
    if not known:
        return lambda old: old
    return lambda old: _HEX64.sub(lambda m: new if m.group() in known else m.group(), old)


def _compare(
    old: dict[str, bytes], new: dict[str, bytes], restamp: Callable[[bytes], bytes]
) -> Changes:
    added: list[str] = []
    changed: list[str] = []
    restamped = unchanged = 0
    for key in sorted(new):
        if key not in old:
            added.append(key)
        elif old[key] == new[key]:
            unchanged += 1
        elif restamp(old[key]) == new[key]:
            restamped += 1
        else:
            changed.append(key)
    removed = tuple(sorted(k for k in old if k not in new))
    return Changes(tuple(added), tuple(changed), removed, restamped, unchanged)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def put(
    layout: Layout,
    published: Published,
    given: str,
    *,
    force: bool,
    dry_run: bool,
    revision: str,
    entry_keys: EntryKeys | None = None,
) -> tuple[str, Changes, Changes | None]:
    """Claim every path, compare with what is there, write unless ``dry_run``: the output's
    workspace-relative path, the file changes and (one-file JSON lines formats) the
    entry changes."""
    layout.require_contained()
    base = Path(os.path.abspath(given))
    tree = "" not in published.files
    if tree and base.exists() and not base.is_dir():
        raise UsageError(f"--output {given} is a file; this format writes a folder: name one")
    claims: list[tuple[outputs.Output, bytes]] = []
    old_files: dict[str, bytes] = {}
    names = sorted(published.files)
    targets = [base / rel if rel else base for rel in names]
    claimed = outputs.claim_many(layout, targets, command=COMMAND, option="--output", force=force)
    for rel, out in zip(names, claimed, strict=True):
        claims.append((out, published.files[rel]))
        before = _read(out.path) if out.expected is not None else None
        if before is not None:
            old_files[out.rel] = before
    shown = os.path.relpath(base, layout.root)
    removed: list[outputs.Output] = []
    if tree:
        new_rels = {out.rel for out, _ in claims}
        folder = os.path.relpath(os.path.realpath(base), os.path.realpath(layout.root))
        for rel, digest in sorted(outputs.recorded_under(layout, folder, COMMAND).items()):
            if rel not in new_rels:
                removed.append(outputs.Output(layout.root / rel, rel, COMMAND, digest))
                old_files[rel] = b""
    restamp = restamper(layout, revision)
    files = _compare(old_files, {out.rel: data for out, data in claims}, restamp)
    entries = None
    if entry_keys is not None and not tree:
        old = old_files.get(claims[0][0].rel, b"")
        entries = _compare(entry_keys(old), entry_keys(claims[0][1]), restamp)
    if not dry_run:
        todo = [(out, data) for out, data in claims if old_files.get(out.rel) != data]
        outputs.write_all(layout, todo, removed)
    return shown, files, entries
