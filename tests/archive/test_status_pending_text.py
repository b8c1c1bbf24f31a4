"""``status`` while a revision is recorded but not active (a consolidate interrupted
between its record and its activation, ``--no-activate``, a failed activation).

A Ctrl-C at that moment left ``status`` saying "unconsolidated modified (1500)" under a
``pending:`` line: the curator's edits read as not recorded, though they were.  The lines
now say what differs from the active revision is "not active", and one line says the
pending revision is recorded and how it becomes active.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from cli_runner import invoke

REPO = Path(__file__).resolve().parents[2]


def _status(ws: Path) -> str:
    ran = invoke(["workspace", "evidence", "status", "--workspace-root", str(ws)])
    assert ran.exit_code in (0, 1), ran.stdout + ran.stderr
    return ran.stdout


def _retitle(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    title = re.search(r"^# .+$", text, re.M)
    assert title is not None, path
    path.write_text(text.replace(title.group(0), title.group(0) + " (revised)", 1))


def test_a_recorded_revision_not_yet_active_is_said_as_such(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures/workspace", ws)
    curated = ws / "evidence/curated"
    for rel in ("enum/triage-code.md", "domain/admission-date.md", "enum/diagnosis-role.md"):
        _retitle(curated / rel)
    ran = invoke(["workspace", "evidence", "consolidate", "--no-activate", "--workspace-root",
                  str(ws)])  # fmt: skip
    assert ran.exit_code == 0, ran.stdout + ran.stderr

    text = _status(ws)
    pending = re.search(r"^pending: ([0-9a-f]{64})$", text, re.M)
    assert pending is not None, text
    assert "unconsolidated" not in text, text
    assert re.search(r"^not active modified \(3\): ", text, re.M), text
    (line,) = [x for x in text.splitlines() if x.startswith(f"pending revision {pending[1][:12]}")]
    assert "recorded" in line and "tht workspace evidence consolidate" in line, line

    # A later edit is both: not active, and not recorded either; consolidate takes it all.
    _retitle(curated / "example/admissions-per-month.md")
    assert re.search(r"^not active modified \(4\): ", _status(ws), re.M)
    ran = invoke(["workspace", "evidence", "consolidate", "--workspace-root", str(ws)])
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    text = _status(ws)
    assert re.search(r"^pending: -$", text, re.M), text
    assert "not active" not in text and "pending revision" not in text, text


def test_status_without_a_pending_revision_is_unchanged(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures/workspace", ws)
    _retitle(ws / "evidence/curated/enum/lab-result-flag.md")
    text = _status(ws)
    assert re.search(r"^unconsolidated modified \(1\): ", text, re.M), text
    assert "not active" not in text and "pending revision" not in text, text
