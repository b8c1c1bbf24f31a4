"""Reporters: one module per output format, separate from the results they render.

A command body returns a ``Report`` (its result, findings and lines for people); the
reporter of the format ``--format``/``--json`` chose writes it: ``text_reporter``,
``json_reporter`` (the one envelope builder), ``github_reporter`` and
``sarif_reporter``.  A format's module is imported only when it is used.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from evidence_tool.cli.context import Context, Report
    from evidence_tool.errors import EvidenceError

FORMATS = ("text", "json", "github", "sarif")


@runtime_checkable
class Reporter(Protocol):
    """Writes a command's outcome on stdout/stderr in one format."""

    def report(self, ctx: Context, report: Report, exit_code: int) -> None:
        """The outcome of a command body that returned (findings included)."""

    def failure(self, ctx: Context, report: Report, exc: EvidenceError) -> None:
        """A coded error the body raised; ``report`` holds its diagnostics (by default
        written as any other findings, for a reporter that subclasses this)."""
        self.report(ctx, report, report.code())


def reporter_for(fmt: str) -> Reporter:
    """The reporter of ``fmt`` (one of ``FORMATS``)."""
    if fmt not in FORMATS:
        raise ValueError(f"no reporter for format {fmt!r}")
    module = importlib.import_module(f"{__name__}.{fmt}_reporter")
    reporter: Reporter = module.REPORTER
    return reporter


def display_path(path: str | None, workspace: str | None) -> str | None:
    """A finding's file, the same for every CI format: relative to the current folder when
    under it, else absolute (CI runs from the repository root, which GitHub and SARIF
    resolve against)."""
    if not path:
        return None
    full = os.path.abspath(os.path.join(workspace or os.getcwd(), path))
    rel = os.path.relpath(full, os.getcwd())
    return full if rel == ".." or rel.startswith("../") else Path(rel).as_posix()
