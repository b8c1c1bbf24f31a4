"""The review page: one self-contained static HTML file about a workspace (issue 10).

A layer above sources, activation and gitflow, below the CLI: it reads the
workspace through their read-only views and writes one file inside the
workspace (SPEC 11), by default ``.evidence-cache/report.html``.  Nothing in
the page loads or runs anything but its own nonce'd filter script.
"""

from __future__ import annotations

import os
import secrets

from evidence_tool.report.collect import (
    ComparisonRef,
    ReportData,
    WrittenReport,
    collect,
    decide_commands,
)
from evidence_tool.report.page import render_page
from evidence_tool.workspace import outputs
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.outputs import Output

DEFAULT_NAME = "report.html"

__all__ = [
    "ReportData",
    "WrittenReport",
    "collect",
    "decide_commands",
    "output_path",
    "render_page",
    "write_report",
]


def output_path(root: str | os.PathLike[str], given: str | None, force: bool = False) -> Output:
    """Where the page goes: ``given`` under the output-path rule (workspace.outputs), by
    default the derived cache, whose page is always this command's own to replace."""
    layout = Layout.at(root)
    layout.require_contained()
    target = given or layout.cache / DEFAULT_NAME
    return outputs.claim(
        layout, target, command="report", option="--html", force=force or not given
    )


def write_report(
    root: str | os.PathLike[str],
    given: str | None = None,
    installation: str | None = None,
    *,
    force: bool = False,
) -> WrittenReport:
    """Collect, render and write the page; returns where it went and what it holds.
    ``force`` replaces an existing file this command did not write (never a protected one)."""
    out = output_path(root, given, force)
    data = collect(root, installation)
    page = render_page(data, secrets.token_urlsafe(18)).encode("utf-8")
    outputs.write(Layout.at(root), out, page)  # the cache's .gitignore comes with the record
    return WrittenReport(
        path=str(out.path),
        bytes=len(page),
        units=len(data.units),
        file_errors=len(data.errors),
        comparisons=tuple(
            ComparisonRef(c.comparison.source_id, c.comparison.revision) for c in data.comparisons
        ),
        initialized=data.initialized,
        active=data.state.active,
        pending=data.state.pending,
    )
