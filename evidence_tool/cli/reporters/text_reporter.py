"""``--format text`` (the default): lines for people on stdout, hints and warnings on stderr."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from evidence_tool import errors as E

if TYPE_CHECKING:
    from evidence_tool.cli.output import Context, Report


class TextReporter:
    def report(self, ctx: Context, report: Report, exit_code: int) -> None:
        for line in report.text:
            print(line)
        for d in report.errors:
            print(str(d))
        seen: list[str] = []
        for d in report.errors:
            if d.code not in seen:
                seen.append(d.code)
        for code in seen[:5]:
            print(f"  fix {code}: {E.CODES[code].fix if code in E.CODES else ''}", file=sys.stderr)
        for w in report.warnings:
            where = ":".join(str(part) for part in (w.path, w.line, w.column) if part)
            head = " ".join(part for part in (f"{where}:" if where else "", w.code or "") if part)
            print(f"warning: {head + ' ' if head else ''}{w.message}", file=sys.stderr)

    def failure(self, ctx: Context, report: Report, exc: E.EvidenceError) -> None:
        for d in report.errors:
            print(f"error: {d}", file=sys.stderr)
        info = E.CODES.get(exc.code)
        if info:
            print(f"hint: {info.fix}", file=sys.stderr)


REPORTER = TextReporter()
