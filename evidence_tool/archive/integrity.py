"""``verify``: the integrity checks of SPEC.md 9 that need no Git."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from evidence_tool.archive import staged as staging
from evidence_tool.archive.local import LocalEvidenceArchive, unfinished_snapshots
from evidence_tool.archive.manifest import load_local_manifest
from evidence_tool.archive.mirror import check_mirror
from evidence_tool.archive.objects import HEX64
from evidence_tool.archive.snapshot import load_snapshot
from evidence_tool.archive.state import read_state
from evidence_tool.errors import Diagnostic, EvidenceError
from evidence_tool.workspace.scan import stray_files

_AGAIN = (
    "run 'tht workspace evidence consolidate' to write it again from the snapshot, "
    "or restore it from Git"
)


def _e(message: str, path: str, unit_id: str | None = None) -> Diagnostic:
    return Diagnostic("E701", message, path, None, None, unit_id)


def verify(archive: LocalEvidenceArchive) -> tuple[list[Diagnostic], dict[str, Any]]:
    """Every integrity problem found (E701, each naming its path) and counts of what was checked."""
    layout = archive.layout
    rel = layout.rel
    problems: list[Diagnostic] = []
    counts = {"objects": 0, "snapshots": 0, "acquired_sources": 0}

    # Objects found by the one walk of the store: snapshots are checked against this set,
    # not with a file lookup per entry of every snapshot (snapshots x units).
    present: set[str] = set()
    for digest, path in archive.objects.iter_digests():
        counts["objects"] += 1
        if path.is_dir() or not HEX64.fullmatch(digest):
            problems.append(_e("unexpected entry in the object store", rel(path)))
            continue
        present.add(digest)  # a corrupted object is reported as such, not also as missing
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(_e("object does not match its name (corrupted)", rel(path)))

    snapshots: dict[str, Any] = {}
    if layout.snapshots.is_dir():
        unfinished = set(unfinished_snapshots(layout))
        for name in sorted(os.listdir(layout.snapshots)):
            folder = layout.snapshots / name
            if folder in unfinished:
                # A consolidation killed before its manifest landed: no snapshot, only
                # a folder (and its temp file, reported on its own) that the next locked
                # operation removes.  A state.yaml naming it is still reported below.
                for temp in sorted(folder.iterdir()):
                    problems.append(_e("temp file of an interrupted write", rel(temp)))
                continue
            counts["snapshots"] += 1
            try:
                snap = load_snapshot(layout.snapshots, archive.objects, name)
            except (EvidenceError, ValueError) as exc:
                # Name the damaged file itself, so the operator knows what to restore.
                where = layout.snapshots / name
                manifest = where / "manifest.json"
                problems.append(_e(str(exc), rel(manifest if manifest.exists() else where)))
                continue
            snapshots[name] = snap
            for entry in snap.manifest["units"]:
                if entry["file_hash"] not in present:
                    problems.append(
                        _e(
                            f"snapshot {name[:12]}… names a missing object for {entry['id']}",
                            rel(archive.objects.path_for(entry["file_hash"])),
                            entry["id"],
                        )
                    )
            for source in snap.manifest.get("sources", []):
                if source["blob"] not in present:
                    problems.append(
                        _e(
                            f"snapshot {name[:12]}… names a missing source object",
                            rel(archive.objects.path_for(source["blob"])),
                        )
                    )
            catalog = snap.manifest.get("catalog") or {}
            if catalog.get("fingerprint") and catalog["fingerprint"] not in present:
                problems.append(
                    _e(
                        f"snapshot {name[:12]}… names a missing catalog fingerprint object",
                        rel(archive.objects.path_for(catalog["fingerprint"])),
                    )
                )

    try:
        state = read_state(layout.state)
    except EvidenceError as exc:
        problems.append(_e(exc.message, rel(layout.state)))
        state = None
    if state is not None:
        for key in ("baseline", "active", "pending"):
            rev = getattr(state, key)
            if rev and rev not in snapshots:
                problems.append(
                    _e(
                        f"state.yaml: {key} names snapshot {rev[:12]}…, which is missing or broken",
                        rel(layout.state),
                    )
                )
        newest = state.newest
        if newest and newest in snapshots:
            _check_local_manifest(archive, snapshots[newest], snapshots, problems)
            _check_reserved(archive, snapshots[newest], problems)
        elif newest is None and layout.local_manifest.exists():
            _check_local_manifest(archive, None, snapshots, problems)

    if layout.acquired.is_dir():
        for path in sorted(layout.acquired.rglob("*")):
            if path.is_dir():
                continue
            counts["acquired_sources"] += 1
            name = path.name[:-3] if path.name.endswith(".md") else ""
            if not HEX64.fullmatch(name) or hashlib.sha256(path.read_bytes()).hexdigest() != name:
                problems.append(
                    _e(
                        "acquired source does not match its content-hash name; "
                        "acquired versions are managed, never edited",
                        rel(path),
                    )
                )

    # A unit saved under a name that is not a unit file is invisible to the archive: the
    # next consolidate would refuse it (E108), so a checkout holding one is not "ok".
    problems += stray_files(layout)

    for what, path in (("staged.json", layout.local / "staged.json"),):
        try:
            staging.read(path)
        except EvidenceError:
            problems.append(_e(f"{what} is unreadable", rel(path)))
    if layout.journal.is_dir():
        for path in sorted(layout.journal.glob("*.json")):
            try:
                json.loads(path.read_bytes())
            except ValueError:
                problems.append(_e("journal entry is unreadable", rel(path)))
    return sorted(problems, key=Diagnostic.sort_key), counts


def _check_local_manifest(
    archive: LocalEvidenceArchive,
    snap: Any | None,
    snapshots: dict[str, Any],
    problems: list[Diagnostic],
) -> None:
    """local-manifest.yaml must be the newest snapshot's (``snap``; None: there is none)."""
    layout = archive.layout
    try:
        revision, manifest = load_local_manifest(layout.local_manifest.read_bytes())
    except FileNotFoundError:
        problems.append(_e("local-manifest.yaml is missing", layout.rel(layout.local_manifest)))
        return
    except (ValueError, UnicodeDecodeError, EvidenceError, Exception) as exc:
        message = f"local-manifest.yaml cannot be read: {exc}"
        if snap is not None:
            found = check_mirror(layout.local_manifest, snap, snapshots.get)
            message = f"{found.explain(snap.revision)}; {_AGAIN}"
        problems.append(_e(message, layout.rel(layout.local_manifest)))
        return
    current = snap.revision if snap is not None else None
    ahead = snapshots.get(revision) if revision != current else None
    if ahead is not None and manifest == ahead.manifest:
        # Written just before state.yaml (SPEC 5 step 4) by a run killed in between.
        problems.append(
            _e(
                f"local-manifest.yaml names snapshot {revision[:12]}…, ahead of state.yaml "
                f"({(current or 'no snapshot')[:12]}…): a consolidation was interrupted; run "
                "'tht workspace evidence consolidate' to finish it",
                layout.rel(layout.local_manifest),
            )
        )
    elif snap is None:
        problems.append(
            _e(
                "local-manifest.yaml exists but the archive has no snapshot",
                layout.rel(layout.local_manifest),
            )
        )
    elif revision != snap.revision or manifest != snap.manifest:
        # The same finding consolidate acts on (it writes the file again, W701).
        found = check_mirror(layout.local_manifest, snap, snapshots.get)
        problems.append(
            _e(
                f"{found.explain(snap.revision)}; {_AGAIN}",
                layout.rel(layout.local_manifest),
            )
        )


def _check_reserved(archive: LocalEvidenceArchive, snap: Any, problems: list[Diagnostic]) -> None:
    reserved = {d["id"] for d in snap.manifest["deletions"]}
    try:
        staged = archive.staged()
        for _path, entry in archive.journal.pending():
            # A journaled restore is committed: its file may be back before staged.json
            # says so (an unreadable entry or staged.json is reported on its own).
            staged = staging.merge(staged, entry.get("staged", {}))
    except EvidenceError:
        return
    if not reserved:
        return
    try:
        report = archive.scan()
    except EvidenceError:
        return
    for f in report.files:
        uid = f.unit_id
        if uid in reserved and uid not in staged["restorations"]:
            problems.append(_e(f"live unit uses the reserved id '{uid}'", f.rel, uid))
