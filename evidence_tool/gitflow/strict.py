"""``verify --strict``: the checks a CI job runs on a checkout (SPEC.md 9).

Strict adds to the archive's integrity checks (``archive.integrity.verify``):

- invalid unit files, one E704 per file (with the first finding's line);
- unconsolidated edits (E703): every unit whose working file differs from the
  newest snapshot (added, modified, reformatted, renamed, deleted);
- with Git: managed files that only ever get written once (objects,
  snapshots, acquired sources) and differ from HEAD, and an event log whose
  committed lines were rewritten rather than appended to.

Every finding names its path and exits 7; each cause has its own code, so that its
hint fits: consolidate (E703), correct the file (E704), restore from Git (E704).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import evidence_tool.gitflow.roles as roles
from evidence_tool.archive.diffing import compare
from evidence_tool.archive.integrity import verify
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.objects import HEX64
from evidence_tool.errors import Diagnostic, EvidenceError, EvidenceWarning
from evidence_tool.gitflow.repository import EvidenceRepo, Unavailable, open_repo
from evidence_tool.workspace.scan import ValidationReport

_UNCONSOLIDATED = {
    "added": "added since revision {rev}: not consolidated",
    "modified": "modified since revision {rev}: not consolidated",
    "reformatted": "reformatted since revision {rev} (same content, new bytes): not consolidated",
    "renamed": "moved since revision {rev}: not consolidated",
}


@dataclass
class StrictReport:
    problems: list[Diagnostic]
    checked: dict[str, int | bool]  # the integrity counts, unit_files, strict and git
    notes: list[str] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)  # the unit files' own (W111...)


def verify_strict(archive: LocalEvidenceArchive) -> StrictReport:
    """Integrity, plus invalid files, unconsolidated edits and hand-edited managed files."""
    problems, counts = verify(archive)
    checked: dict[str, int | bool] = {**counts, "strict": True}
    notes: list[str] = []
    # Every file read: strict means no timestamp is taken for the bytes.  A missing
    # curated tree is E601, never "everything deleted".
    report = archive.scan(cached=False)
    checked["unit_files"] = len(report.files)
    invalid = _invalid_files(report)
    # The plain checks' E108 for a stray file is reported here as an invalid file (E704).
    problems = [d for d in problems if d.code != "E108" or d.path not in invalid]
    problems += invalid.values()
    problems += _unconsolidated(archive, report, set(invalid), notes)
    with open_repo(archive.layout.root) as repo:
        if isinstance(repo, Unavailable):
            notes.append(repo.note)
            checked["git"] = False
        else:
            reported = {d.path for d in problems}
            problems += [d for d in _managed_edits(repo, notes) if d.path not in reported]
            checked["git"] = repo.head is not None
    return StrictReport(
        sorted(problems, key=Diagnostic.sort_key), checked, notes, list(report.warnings)
    )


def _invalid_files(report: ValidationReport) -> dict[str, Diagnostic]:
    by_path: dict[str, list[Diagnostic]] = {}
    for d in report.errors:
        by_path.setdefault(d.path or "evidence/curated", []).append(d)
    out = {}
    for path, found in sorted(by_path.items()):
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        out[path] = Diagnostic(
            "E704",
            f"invalid unit file: {first.code} {first.message}{more}; "
            "run 'tht workspace evidence validate'",
            path,
            first.line,
            first.column,
            first.unit_id,
        )
    return out


def _unconsolidated(
    archive: LocalEvidenceArchive, report: ValidationReport, invalid: set[str], notes: list[str]
) -> list[Diagnostic]:
    state = archive.state()
    if not state.initialized:
        if report.files:
            return [
                Diagnostic(
                    "E703",
                    "the archive is not initialized: no unit is consolidated; run "
                    "'tht workspace evidence init' and 'consolidate'",
                    archive.layout.rel(archive.layout.state),
                )
            ]
        return []
    newest = state.newest
    assert newest is not None
    try:
        snap = archive.snapshot(newest)
    except (EvidenceError, ValueError):  # a missing or broken snapshot: an integrity finding
        return []
    if state.pending:
        notes.append(f"revision {state.pending} is consolidated but pending activation")
    old = snap.view.identities()
    new = {
        i[0]: i[1:]
        for f in report.files
        if f.rel not in invalid and (i := f.identity()) is not None
    }
    deleted = [(d.id, d.last_revision) for d in snap.deletions]
    out = _missing_last_revisions(archive, deleted)
    changes = compare(old, new)
    rev = newest[:12] + "…"
    for kind, template in _UNCONSOLIDATED.items():
        for uid in changes[kind]:
            message = f"{uid} {template.format(rev=rev)}; run consolidate"
            out.append(Diagnostic("E703", message, new[uid][2], unit_id=uid))
    for uid in changes["deleted"]:
        path = old[uid][2]
        if path not in invalid:  # an invalid file is reported as invalid, not as a deletion
            out.append(
                Diagnostic(
                    "E703",
                    f"{uid} deleted since revision {rev}: the deletion is not consolidated; "
                    "run consolidate",
                    path,
                    unit_id=uid,
                )
            )
    return out


def _managed_edits(repo: EvidenceRepo, notes: list[str]) -> list[Diagnostic]:
    """Write-once managed files changed since HEAD, and a rewritten event log."""
    if repo.head is None:
        notes.append("the repository has no commit yet: managed files are not compared with HEAD")
        return []
    out = []
    folders = sorted({p.rstrip("/") for p in roles.IMMUTABLE_PREFIXES})
    for e in sorted(repo.status(folders).values(), key=lambda e: e.rel):
        changed = {e.index, e.worktree} & {"M", "D", "T"}
        if changed and roles.is_immutable(e.rel):
            verb = "deleted" if "D" in changed else "changed"
            out.append(
                Diagnostic(
                    "E701",
                    f"managed file {verb} since the last commit; snapshots, objects and "
                    "acquired sources are written once and never edited: restore it with "
                    "'git checkout HEAD -- PATH'",
                    e.rel,
                )
            )
    for rel in roles.APPEND_ONLY:
        committed = repo.head_blob(rel)
        if committed is None:
            continue
        path = repo.top / repo.to_repo(rel)
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            current = b""
        if not current.startswith(committed):
            out.append(
                Diagnostic(
                    "E701",
                    "the event log lost or changed committed lines (it is append-only); "
                    "restore it from Git",
                    rel,
                )
            )
    return out


def _missing_last_revisions(
    archive: LocalEvidenceArchive, deletions: list[tuple[str, str]]
) -> list[Diagnostic]:
    """Deletion records name the last snapshot holding the unit: show and restore read it."""
    out = []
    for uid, rev in deletions:  # (unit id, last revision) of each deletion record
        if not HEX64.fullmatch(rev):
            continue  # the snapshot's own manifest check owns malformed records
        folder = archive.layout.snapshots / rev
        if not (folder / "manifest.json").is_file():
            out.append(
                Diagnostic(
                    "E701",
                    f"snapshot {rev[:12]}…, the last revision of deleted unit "
                    f"{uid}, is missing; restore the folder from Git",
                    archive.layout.rel(folder),
                    unit_id=uid,
                )
            )
    return out
