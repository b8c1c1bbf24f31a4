"""``verify``: the integrity checks of SPEC.md 9 that need no Git."""

from __future__ import annotations

import hashlib
import json
import os

from evidence_tool.archive import staged as staging
from evidence_tool.archive.local import LocalEvidenceArchive, unfinished_snapshots
from evidence_tool.archive.manifest import load_local_manifest
from evidence_tool.archive.mirror import check_mirror
from evidence_tool.archive.objects import HEX64
from evidence_tool.archive.snapshot import Snapshot, load_snapshot
from evidence_tool.archive.state import read_state
from evidence_tool.archive.validation import reserved_uses
from evidence_tool.errors import Diagnostic, EvidenceError
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import left_temp_files, stray_files

_AGAIN = (
    "run 'tht workspace evidence consolidate' to write it again from the snapshot, "
    "or restore it from Git"
)


def _e(message: str, path: str, unit_id: str | None = None) -> Diagnostic:
    return Diagnostic("E701", message, path, None, None, unit_id)


def verify(archive: LocalEvidenceArchive) -> tuple[list[Diagnostic], dict[str, int]]:
    """Every integrity problem found (E701, each naming its path) and counts of what was checked."""
    problems: list[Diagnostic] = []
    counts = {"objects": 0, "snapshots": 0, "acquired_sources": 0}
    present = _check_objects(archive, problems, counts)
    snapshots = _check_snapshots(archive, present, problems, counts)
    _check_state(archive, snapshots, problems)
    _check_acquired(archive.layout, problems, counts)
    # A unit saved under a name that is not a unit file is invisible to the archive: the
    # next consolidate would refuse it (E108), so a checkout holding one is not "ok".
    problems += stray_files(archive.layout)
    # A lock-free writer (fmt, workspace new) killed mid-write leaves its temp file there.
    problems += left_temp_files(archive.layout)
    _check_local_files(archive.layout, problems)
    return sorted(problems, key=Diagnostic.sort_key), counts


def _check_objects(
    archive: LocalEvidenceArchive, problems: list[Diagnostic], counts: dict[str, int]
) -> set[str]:
    """Which objects are present; each must hash to its name.

    Found by one walk of the store: snapshots are checked against this set, not with a
    file lookup per entry of every snapshot (snapshots x units)."""
    rel = archive.layout.rel
    present: set[str] = set()
    for digest, path in archive.objects.iter_digests():
        counts["objects"] += 1
        if path.is_dir() or not HEX64.fullmatch(digest):
            problems.append(_e("unexpected entry in the object store", rel(path)))
            continue
        present.add(digest)  # a corrupted object is reported as such, not also as missing
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(_e("object does not match its name (corrupted)", rel(path)))
    return present


def _check_snapshots(
    archive: LocalEvidenceArchive,
    present: set[str],
    problems: list[Diagnostic],
    counts: dict[str, int],
) -> dict[str, Snapshot]:
    """Which snapshots load (their manifest hashes to their name), by revision."""
    layout = archive.layout
    snapshots: dict[str, Snapshot] = {}
    if not layout.snapshots.is_dir():
        return snapshots
    unfinished = set(unfinished_snapshots(layout))
    for name in sorted(os.listdir(layout.snapshots)):
        folder = layout.snapshots / name
        if folder in unfinished:
            # A consolidation killed before its manifest landed: no snapshot, only
            # a folder (and its temp file, reported on its own) that the next locked
            # operation removes.  A state.yaml naming it is still reported below.
            for temp in sorted(folder.iterdir()):
                problems.append(_e("temp file of an interrupted write", layout.rel(temp)))
            continue
        counts["snapshots"] += 1
        try:
            snap = load_snapshot(layout.snapshots, archive.objects, name)
        except (EvidenceError, ValueError) as exc:
            # Name the damaged file itself, so the operator knows what to restore.
            manifest = folder / "manifest.json"
            problems.append(_e(str(exc), layout.rel(manifest if manifest.exists() else folder)))
            continue
        snapshots[name] = snap
        problems += _missing_objects(archive, snap, present)
    return snapshots


def _missing_objects(
    archive: LocalEvidenceArchive, snap: Snapshot, present: set[str]
) -> list[Diagnostic]:
    """Which objects the snapshot names (units, sources, catalog fingerprint) are absent."""
    rel, where = archive.layout.rel, archive.objects.path_for
    head = f"snapshot {snap.revision[:12]}… names a missing"
    out = [
        _e(f"{head} object for {entry.id}", rel(where(entry.file_hash)), entry.id)
        for entry in snap.entries()
        if entry.file_hash not in present
    ]
    out += [
        _e(f"{head} source object", rel(where(source.blob)))
        for source in snap.view.sources()
        if source.blob not in present
    ]
    fingerprint = snap.view.catalog_fingerprint()
    if fingerprint and fingerprint not in present:
        out.append(_e(f"{head} catalog fingerprint object", rel(where(fingerprint))))
    return out


def _check_state(
    archive: LocalEvidenceArchive, snapshots: dict[str, Snapshot], problems: list[Diagnostic]
) -> None:
    """Whether state.yaml names loadable snapshots, and what the newest one implies."""
    layout = archive.layout
    try:
        state = read_state(layout.state)
    except EvidenceError as exc:
        problems.append(_e(exc.message, layout.rel(layout.state)))
        return
    for key in ("baseline", "active", "pending"):
        rev = getattr(state, key)
        if rev and rev not in snapshots:
            problems.append(
                _e(
                    f"state.yaml: {key} names snapshot {rev[:12]}…, which is missing or broken",
                    layout.rel(layout.state),
                )
            )
    newest = state.newest
    if newest and newest in snapshots:
        _check_local_manifest(archive, snapshots[newest], snapshots, problems)
        _check_reserved(archive, snapshots[newest], problems)
    elif newest is None and layout.local_manifest.exists():
        _check_local_manifest(archive, None, snapshots, problems)


def _check_acquired(layout: Layout, problems: list[Diagnostic], counts: dict[str, int]) -> None:
    """Whether every acquired source still hashes to its name (they are never edited)."""
    if not layout.acquired.is_dir():
        return
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
                    layout.rel(path),
                )
            )


def _check_local_files(layout: Layout, problems: list[Diagnostic]) -> None:
    """Whether staged.json and the journal entries can be read."""
    path = layout.local / "staged.json"
    try:
        staging.read(path)
    except EvidenceError:
        problems.append(_e("staged.json is unreadable", layout.rel(path)))
    if layout.journal.is_dir():
        for path in sorted(layout.journal.glob("*.json")):
            try:
                json.loads(path.read_bytes())
            except ValueError:
                problems.append(_e("journal entry is unreadable", layout.rel(path)))


def _check_local_manifest(
    archive: LocalEvidenceArchive,
    snap: Snapshot | None,
    snapshots: dict[str, Snapshot],
    problems: list[Diagnostic],
) -> None:
    """local-manifest.yaml must be the newest snapshot's (``snap``; None: there is none)."""
    layout = archive.layout
    where = layout.rel(layout.local_manifest)

    def bad(message: str) -> None:
        problems.append(_e(message, where))

    try:
        revision, manifest = load_local_manifest(layout.local_manifest.read_bytes())
    except FileNotFoundError:
        return bad("local-manifest.yaml is missing")
    except (ValueError, UnicodeDecodeError, EvidenceError, Exception) as exc:
        message = f"local-manifest.yaml cannot be read: {exc}"
        if snap is not None:
            found = check_mirror(layout.local_manifest, snap, snapshots.get)
            message = f"{found.explain(snap.revision)}; {_AGAIN}"
        return bad(message)
    current = snap.revision if snap is not None else None
    ahead = snapshots.get(revision) if revision != current else None
    if ahead is not None and manifest == ahead.manifest:
        # Written just before state.yaml (SPEC 5 step 4) by a run killed in between.
        bad(
            f"local-manifest.yaml names snapshot {revision[:12]}…, ahead of state.yaml "
            f"({(current or 'no snapshot')[:12]}…): a consolidation was interrupted; run "
            "'tht workspace evidence consolidate' to finish it"
        )
    elif snap is None:
        bad("local-manifest.yaml exists but the archive has no snapshot")
    elif revision != snap.revision or manifest != snap.manifest:
        # The same finding consolidate acts on (it writes the file again, W701).
        found = check_mirror(layout.local_manifest, snap, snapshots.get)
        bad(f"{found.explain(snap.revision)}; {_AGAIN}")


def _check_reserved(
    archive: LocalEvidenceArchive, snap: Snapshot, problems: list[Diagnostic]
) -> None:
    """No live unit may use an id a deletion reserves, unless its restore is staged."""
    if not snap.view.deleted_ids():
        return
    try:
        report = archive.scan()
    except EvidenceError:
        return
    # The ids and restorations validate and consolidate use (archive.validation).
    for found in reserved_uses(archive, report.files):
        uid = found.unit_id
        problems.append(_e(f"live unit uses the reserved id '{uid}'", found.path or "", uid))
