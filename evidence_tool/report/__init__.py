"""The review page: one self-contained static HTML file about a workspace (issue 10).

A layer above sources, activation and gitflow, below the CLI: it reads the
workspace through their read-only views and writes one file inside the
workspace (SPEC 11), by default ``.evidence-cache/report.html``.  Nothing in
the page loads or runs anything but its own nonce'd filter script.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from evidence_tool import fsio
from evidence_tool.errors import UsageError
from evidence_tool.report.collect import ReportData, collect, decide_commands
from evidence_tool.report.page import render_page
from evidence_tool.workspace.layout import Layout

DEFAULT_NAME = "report.html"

__all__ = ["ReportData", "collect", "decide_commands", "output_path", "render_page", "write_report"]


def output_path(root: str | os.PathLike[str], given: str | None) -> Path:
    """Where the page goes: ``given`` if it stays inside the workspace (and outside the
    managed ``evidence/`` tree), else a usage error; by default the derived cache."""
    layout = Layout.at(root)
    if not given:
        if not layout.inside(layout.cache):
            raise UsageError(
                f"{layout.cache} links outside the workspace; the page is written only inside "
                "it: pass --html FILE"
            )
        return layout.cache / DEFAULT_NAME
    path = Path(os.path.abspath(given))
    if not layout.inside(path.parent) or (path.exists() and not layout.inside(path)):
        raise UsageError(
            f"--html {given}: the page must be written inside the workspace {layout.root} "
            "(every write stays under the workspace root); omit FILE for "
            f".evidence-cache/{DEFAULT_NAME}"
        )
    if path.is_dir():
        raise UsageError(f"--html {given} is a folder; name a file")
    if Path(os.path.realpath(path.parent)).is_relative_to(os.path.realpath(layout.evidence)):
        raise UsageError(
            f"--html {given}: evidence/ holds only managed and curated files; write the page "
            f"elsewhere in the workspace, or omit FILE for .evidence-cache/{DEFAULT_NAME}"
        )
    return path


def write_report(
    root: str | os.PathLike[str], given: str | None = None, installation: str | None = None
) -> dict[str, Any]:
    """Collect, render and write the page; returns where it went and what it holds."""
    path = output_path(root, given)
    data = collect(root, installation)
    page = render_page(data, secrets.token_urlsafe(18)).encode("utf-8")
    if not given:
        from evidence_tool.activation.cache import ensure_cache

        ensure_cache(Layout.at(root))  # git-ignores the derived page with the index
    fsio.write_atomic(path, page)
    return {
        "path": str(path),
        "bytes": len(page),
        "units": len(data.units),
        "file_errors": len(data.errors),
        "comparisons": [
            {"source_id": c.comparison["source_id"], "revision": c.comparison["revision"]}
            for c in data.comparisons
        ],
        "initialized": data.initialized,
        "active": data.state.get("active"),
        "pending": data.state.get("pending"),
    }
