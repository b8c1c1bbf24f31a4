"""``tht workspace evidence report``: the review page as one static HTML file (issue 10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evidence_tool.cli.options import flag, force_option
from evidence_tool.cli.output import Report
from evidence_tool.cli.workspace_cmds import register

if TYPE_CHECKING:
    from evidence_tool.session import Session


def report_body(s: Session, html: str | None, open_page: bool, force: bool) -> Report:
    """Write the review page: units, file errors, changes, pending comparisons, sources, Git."""
    from pathlib import Path

    from msgspec.structs import replace

    from evidence_tool.report import write_report

    written = write_report(s.root, html or None, s.installation.path, force=force)
    lines = [
        f"wrote {written.path} ({written.units} unit(s), {written.file_errors} file error(s), "
        f"{len(written.comparisons)} pending comparison(s))"
    ]
    opened = False
    if open_page:
        import webbrowser

        opened = bool(webbrowser.open(Path(written.path).as_uri()))
        if not opened:
            lines.append("no browser could be started: open the file yourself")
    return Report(result=replace(written, opened=opened).to_json(), text=lines)


register(
    "report",
    report_body,
    click.option(
        "--html",
        "html",
        metavar="FILE",
        is_flag=False,
        flag_value="",
        default=None,
        help="Write the page to FILE inside the workspace (default: .evidence-cache/report.html).",
    ),
    flag("--open", "open_page", help="Open the written page in the default browser."),
    force_option,
)
