"""``--format github``: one GitHub Actions workflow command per finding.

``::error file=F,line=L,col=C,title=E111::message``, escaped as the Actions toolkit
does (data: ``%`` ``\\r`` ``\\n``; properties also ``:`` and ``,``), and every other
control character too (ESC, BEL, C1: the log viewer would act on them), as ``%1B``...
The lines for people go to stderr, so stdout holds only the annotations.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evidence_tool.cli.reporters import Reporter, display_path
from evidence_tool.errors import CONTROL_CHARACTERS, Diagnostic, EvidenceWarning, printable

if TYPE_CHECKING:
    from evidence_tool.cli.context import Context, Report


def _percent(match: re.Match[str]) -> str:
    return "".join(f"%{b:02X}" for b in match.group().encode("utf-8"))


def escape_data(text: str) -> str:
    # Every control character, the toolkit's CR and LF included, as its UTF-8 bytes.
    return CONTROL_CHARACTERS.sub(_percent, text.replace("%", "%25"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(kind: str, message: str, **properties: str | int | None) -> str:
    """``::kind key=value,...::message`` with None-valued properties left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{kind}{' ' + props if props else ''}::{escape_data(message)}"


def github(
    errors: Sequence[Diagnostic], warnings: Sequence[EvidenceWarning], workspace: str | None
) -> str:
    found: list[tuple[str, Diagnostic | EvidenceWarning, str]] = [
        ("error", d, d.message + (f"\nFix: {d.hint}" if d.hint else "")) for d in errors
    ]
    found += [("warning", w, w.message) for w in warnings]
    lines = [
        workflow_command(
            kind,
            message,
            file=display_path(f.path, workspace),
            line=f.line,
            col=f.column if f.line else None,
            title=f.code,
        )
        for kind, f, message in found
    ]
    return "".join(line + "\n" for line in lines)


class GithubReporter(Reporter):
    def report(self, ctx: Context, report: Report, exit_code: int) -> None:
        sys.stdout.write(github(report.errors, report.warnings, ctx.workspace))
        for line in report.text:
            print(printable(line), file=sys.stderr)


REPORTER = GithubReporter()
