"""``fmt``: rewrite unit files into canonical form (SPEC.md 3.4)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from evidence_tool import fsio
from evidence_tool.errors import Diagnostic, EvidenceWarning
from evidence_tool.unit import render
from evidence_tool.workspace.scan import validate_paths


@dataclass
class FormatReport:
    checked: int = 0
    changed: list[str] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)  # path -> unified diff (``diff``)


def format_paths(
    paths: Iterable[str | os.PathLike[str]], *, check: bool, diff: bool = False
) -> FormatReport:
    """Rewrite valid units canonically (or, with ``check``, only list those that would change).

    With ``diff`` nothing is written either, and each change is kept as a unified diff
    (as formatters print it), from the file as it is to its canonical form.  Invalid
    files are never rewritten: their diagnostics are returned instead.
    """
    scanned = validate_paths(paths)
    report = FormatReport(errors=list(scanned.errors), warnings=list(scanned.warnings))
    for f in scanned.files:
        if f.unit is None:
            continue
        report.checked += 1
        canonical = render(f.unit).encode("utf-8")
        if canonical == f.data:
            continue
        report.changed.append(f.rel)
        if diff:
            report.diffs[f.rel] = unified_diff(f.rel, f.data, canonical)
        if check:
            report.errors.append(
                Diagnostic(
                    "E117",
                    "not in canonical form; run 'tht evidence fmt' on it",
                    f.rel,
                    unit_id=f.unit.id,
                )
            )
        elif not diff:
            try:
                # Only over the bytes just read: an editor's save since then is theirs.
                fsio.write_atomic(f.path, canonical, make_parents=False, expected=f.file_hash)
            except fsio.Changed:
                report.changed.remove(f.rel)
                report.errors.append(
                    Diagnostic(
                        "E301",
                        "changed while fmt was formatting it (an editor saved it?); it was "
                        "left as saved: run 'tht evidence fmt' on it again",
                        f.rel,
                        unit_id=f.unit.id,
                    )
                )
    report.errors.sort(key=Diagnostic.sort_key)
    return report


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    """The change from ``before`` to ``after`` as a unified diff whose headers name
    ``path`` (on both sides, as ``patch -p0`` applies it); undecodable bytes show as
    U+FFFD, which the canonical side never holds."""
    import difflib

    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, path, path)
    # A last line without its newline gets the marker diff(1) prints.
    return "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in lines)
