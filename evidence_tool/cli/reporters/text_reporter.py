"""``--format text`` (the default): lines for people on stdout, hints and warnings on stderr.

Every line is written through ``errors.printable``: a title, a body line or a file name
holding ESC, BEL, CR, a newline or another control character is shown escaped, never
acted on by the terminal or read as a line of its own by a CI log."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from evidence_tool import errors as E

if TYPE_CHECKING:
    from evidence_tool.cli.context import Context, Report


class TextReporter:
    def report(self, ctx: Context, report: Report, exit_code: int) -> None:
        for line in report.text:
            print(E.printable(line))
        for d in report.errors:
            print(str(d))  # Diagnostic.__str__ escapes
        for code in list(dict.fromkeys(d.code for d in report.errors))[:5]:
            fix = E.CODES[code].fix if code in E.CODES else ""
            print(E.printable(f"  fix {code}: {fix}"), file=sys.stderr)
        for w in report.warnings:
            where = ":".join(str(part) for part in (w.path, w.line, w.column) if part)
            head = " ".join(part for part in (f"{where}:" if where else "", w.code or "") if part)
            print(E.printable(f"warning: {head + ' ' if head else ''}{w.message}"), file=sys.stderr)

    def failure(self, ctx: Context, report: Report, exc: E.EvidenceError) -> None:
        for d in report.errors:
            print(f"error: {d}", file=sys.stderr)
        info = E.CODES.get(exc.code)
        if info:
            print(E.printable(f"hint: {info.fix}"), file=sys.stderr)


REPORTER = TextReporter()
