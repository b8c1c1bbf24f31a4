"""Workspaces for review-page tests (and the docs screenshot), and the headless browser.

``pending_workspace`` is the shipped fixture after one refresh: two pending
comparisons, every proposed unit new.  ``rich_workspace`` adds what a real
review holds: a comparison against local units (a changed wording and a unit
the source dropped), a modified, a deleted and an invalid curated file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from cli_runner import CliResult, decide, invoke, record, tht  # noqa: F401 -- re-exported

REPO = Path(__file__).resolve().parents[2]
FIXTURE_WORKSPACE = REPO / "fixtures" / "workspace"
LAB = "fs:evidence/source/lab-handbook.md"
WARD = "fs:evidence/incoming/ward-codes.md"
CHROMIUM = "/usr/bin/chromium"
# No sandbox: CI runs as root in a container; the rest keeps Chromium off the network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ok(result: CliResult) -> dict[str, Any]:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.stdout}\n{result.stderr}"
    return result.json["result"]  # type: ignore[no-any-return]


def copy_fixture(dest: Path) -> Path:
    shutil.copytree(FIXTURE_WORKSPACE, dest, ignore=shutil.ignore_patterns(".evidence-cache"))
    return dest


def pending_workspace(dest: Path) -> Path:
    ws = copy_fixture(dest)
    ok(tht(ws, "refresh"))
    return ws


def rich_workspace(dest: Path) -> Path:
    ws = pending_workspace(dest)
    ok(decide(ws, LAB, "replace"))
    handbook = ws / "evidence/source/lab-handbook.md"
    text = handbook.read_text(encoding="utf-8")
    text = text.replace("are falsely high", "are falsely increased")
    text = text[: text.index("---\nschema_version: 4\nid: evidence:lab:turnaround-minutes")]
    handbook.write_text(text, encoding="utf-8")
    ok(tht(ws, "refresh"))
    curated = ws / "evidence/curated"
    rule = curated / "domain/admission-date.md"
    rule.write_text(
        rule.read_text(encoding="utf-8").replace("night shift", "night shift or a weekend"),
        encoding="utf-8",
    )
    (curated / "domain/patient-merge.md").unlink()
    (curated / "glossary/broken.md").write_text(
        "---\nschema_version: 4\nid: evidence:broken\nkind: glossary\nlanguage: en\n"
        "purposes: [disambiguation]\ncolour: red\n---\n\n# Broken\n",
        encoding="utf-8",
    )
    return ws


def chromium_available() -> bool:
    return os.path.exists(CHROMIUM)
