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


def format_paths(paths: Iterable[str | os.PathLike[str]], *, check: bool) -> FormatReport:
    """Rewrite valid units canonically (or, with ``check``, only list those that would change).

    Invalid files are never rewritten: their diagnostics are returned instead.
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
        if check:
            report.errors.append(
                Diagnostic(
                    "E117",
                    "not in canonical form; run 'tht evidence fmt' on it",
                    f.rel,
                    None,
                    None,
                    f.unit.id,
                )
            )
        else:
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
                        None,
                        None,
                        f.unit.id,
                    )
                )
    report.errors.sort(key=Diagnostic.sort_key)
    return report
