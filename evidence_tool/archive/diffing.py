"""``diff``: added / modified / deleted ids between revisions or against the working files."""

from __future__ import annotations

from dataclasses import dataclass, field

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import UnknownNameError
from evidence_tool.jsonvalue import View


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


def compare(
    old: dict[str, tuple[str, str, str]], new: dict[str, tuple[str, str, str]]
) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {
        "added": sorted(new.keys() - old.keys()),
        "modified": [],
        "deleted": sorted(old.keys() - new.keys()),
        "reformatted": [],
        "renamed": [],
    }
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


@dataclass(frozen=True, slots=True)
class Diff(View):
    """The ids that differ between two revisions, or a revision and the working files."""

    source: str | None  # the revision compared from (None: the archive has none)
    target: str  # a revision, or "working files"
    classes: dict[str, list[str]]  # added / modified / deleted / reformatted / renamed
    invalid: list[str] = field(default_factory=list)  # working files that do not validate
    _keys = ("from=source", "to=target", "*classes", "invalid")

    def ids(self, cls: str) -> list[str]:
        """The ids of one class ("invalid": the paths of files that do not validate)."""
        return self.invalid if cls == "invalid" else self.classes[cls]


def diff(archive: LocalEvidenceArchive, rev_a: str | None = None, rev_b: str | None = None) -> Diff:
    """No revision: the active snapshot (else the newest) against the working files."""
    if rev_a is None:
        state = archive.state()
        a = state.active or state.newest
    else:
        a = resolve_revision(archive, rev_a)
    old = archive.snapshot(a).view.identities() if a else {}
    if rev_a is None or rev_b is None:
        new, invalid = working_entries(archive)
        return Diff(a, "working files", compare(old, new), invalid)
    b = resolve_revision(archive, rev_b)
    return Diff(a, b, compare(old, archive.snapshot(b).view.identities()))
