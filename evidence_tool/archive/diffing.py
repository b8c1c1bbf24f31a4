"""``diff``: added / modified / deleted ids between revisions or against the working files."""

from __future__ import annotations

from typing import Any

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import UnknownNameError


def resolve_revision(archive: LocalEvidenceArchive, name: str) -> str:
    """A full revision from 'active', 'pending', 'baseline' or a unique hex prefix (>= 4)."""
    state = archive.state()
    if name in ("active", "pending", "baseline"):
        rev = getattr(state, name)
        if rev is None:
            raise UnknownNameError(
                f"the archive has no {name} revision; 'tht workspace evidence log' lists revisions"
            )
        return str(rev)
    folder = archive.layout.snapshots
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    hits = [n for n in names if n.startswith(name.lower())] if len(name) >= 4 else []
    if len(hits) != 1:
        raise UnknownNameError(
            f"revision {name!r} is {'ambiguous' if hits else 'unknown'}; "
            "'tht workspace evidence log' lists revisions"
        )
    return hits[0]


def _entries(snapshot: Snapshot) -> dict[str, tuple[str, str, str]]:
    return snapshot.view.identities()


def compare(
    old: dict[str, tuple[str, str, str]], new: dict[str, tuple[str, str, str]]
) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {
        "added": [],
        "modified": [],
        "deleted": [],
        "reformatted": [],
        "renamed": [],
    }
    for uid in sorted(new.keys() - old.keys()):
        out["added"].append(uid)
    for uid in sorted(old.keys() - new.keys()):
        out["deleted"].append(uid)
    for uid in sorted(old.keys() & new.keys()):
        (oc, of, op), (nc, nf, np) = old[uid], new[uid]
        if oc != nc:
            out["modified"].append(uid)
        elif op != np:
            out["renamed"].append(uid)
        elif of != nf:
            out["reformatted"].append(uid)
    return out


def working_entries(
    archive: LocalEvidenceArchive,
) -> tuple[dict[str, tuple[str, str, str]], list[str]]:
    """Entries of the working files, and the paths of files that do not validate."""
    report = archive.scan()
    ids = [(f, f.identity()) for f in report.files]
    entries = {i[0]: i[1:] for _, i in ids if i is not None}
    # A file not read as a unit (E108: wrong name) is invalid too, not silently absent.
    stray = {d.path for d in report.errors if d.code == "E108" and d.path}
    invalid = sorted({f.rel for f, i in ids if i is None} | stray)
    return entries, invalid


def diff(
    archive: LocalEvidenceArchive, rev_a: str | None = None, rev_b: str | None = None
) -> dict[str, Any]:
    """No revision: the active snapshot (else the newest) against the working files."""
    if rev_a is None:
        state = archive.state()
        base = state.active or state.newest
        old = _entries(archive.snapshot(base)) if base else {}
        new, invalid = working_entries(archive)
        return {"from": base, "to": "working files", **compare(old, new), "invalid": invalid}
    a = resolve_revision(archive, rev_a)
    old = _entries(archive.snapshot(a))
    if rev_b is None:
        new, invalid = working_entries(archive)
        return {"from": a, "to": "working files", **compare(old, new), "invalid": invalid}
    b = resolve_revision(archive, rev_b)
    return {
        "from": a,
        "to": b,
        **compare(old, _entries(archive.snapshot(b))),
        "invalid": [],
    }
