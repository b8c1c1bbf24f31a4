"""``validate`` with the archive's rule too: an id a deletion record reserves is E121
(SPEC.md 5.2) before ``consolidate`` refuses it, so a CI pre-check agrees with the step
it guards.  The workspace scan below knows files, not the archive; this adds the one
rule that needs the newest snapshot."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from evidence_tool.archive import staged as staging
from evidence_tool.errors import Diagnostic, EvidenceError
from evidence_tool.workspace import scan
from evidence_tool.workspace.curated import CuratedFile
from evidence_tool.workspace.layout import Layout, enclosing_workspace
from evidence_tool.workspace.scan import Progress, ValidationReport

if TYPE_CHECKING:
    from evidence_tool.archive.local import LocalEvidenceArchive


def reserved_ids(archive: LocalEvidenceArchive) -> set[str]:
    """The ids the newest snapshot's deletion records reserve, less those whose restore
    is staged (or journaled: committed, its file may be back before staged.json says
    so).  Empty before ``init``; an unreadable archive reserves nothing here (``verify``
    reports it)."""
    try:
        newest = archive.newest_snapshot()
    except (EvidenceError, ValueError, OSError):
        return set()
    reserved = newest.view.deleted_ids() if newest is not None else set()
    if not reserved:
        return reserved
    try:
        staged = archive.staged()
        for _path, entry in archive.journal.pending():
            staged = staging.merge(staged, entry.staged)
    except EvidenceError:
        return reserved
    return {uid for uid in reserved if staging.restoration(staged, uid) is None}


def reserved_uses(archive: LocalEvidenceArchive, files: Iterable[CuratedFile]) -> list[Diagnostic]:
    """E121 for each file whose id a deletion record reserves."""
    from evidence_tool.archive.derive import reserved_error

    reserved = reserved_ids(archive)
    if not reserved:
        return []
    return [reserved_error(f, uid) for f in files if (uid := f.unit_id) in reserved]


def validate_workspace(
    root: str | os.PathLike[str], progress: Progress | None = None
) -> ValidationReport:
    """Every curated file with the workspace rules and the archive's reserved ids."""
    report = scan.validate_workspace(root, progress)
    return _with(report, _reserved_in(Layout.at(root), report.files))


def validate_paths(
    paths: Sequence[str | os.PathLike[str]], progress: Progress | None = None
) -> ValidationReport:
    """Files and folders as ``scan.validate_paths`` does; a file in a workspace's curated
    tree is also checked against that workspace's reserved ids."""
    report = scan.validate_paths(paths, progress)
    roots = {ws.root for p in paths if (ws := enclosing_workspace(p)) is not None}
    found: list[Diagnostic] = []
    for root in sorted(roots):
        curated = str(Layout(root).curated) + os.sep
        mine = [f for f in report.files if os.path.abspath(f.location).startswith(curated)]
        found += _reserved_in(Layout(root), mine)
    return _with(report, found)


def _reserved_in(layout: Layout, files: list[CuratedFile]) -> list[Diagnostic]:
    """E121 of ``files`` in the workspace at ``layout``; a folder never initialized has
    no archive to open (and validate outside one stays as light as it was)."""
    if not files or not layout.state.exists():
        return []
    from evidence_tool.archive.local import LocalEvidenceArchive

    return reserved_uses(LocalEvidenceArchive(layout.root), files)


def _with(report: ValidationReport, found: list[Diagnostic]) -> ValidationReport:
    if found:
        report.errors = sorted([*report.errors, *found], key=Diagnostic.sort_key)
    return report
