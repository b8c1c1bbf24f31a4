"""Standard output that cannot take the output (a full disk behind ``> file``, /dev/full).

``tht workspace evidence export --format jsonl > corpus.jsonl`` on a full disk left an
empty or cut file and exited 0, with a warning calling it a bug in evidence-tool: a
script went on to ship the cut corpus.  Now the write's failure is E604 on stderr, exit
6 (or the command's own failure code), naming standard output; the command's work, when
it did any, stays done.  A real process writes to the real /dev/full: no mock.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
THT = str(Path(sys.executable).with_name("tht"))

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _run(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "THT_ACTOR": "test-curator"}
    env.pop("THT_INSTALLATION", None)
    # The shell opens /dev/full, as '> file' does (tests open nothing outside their folder).
    return subprocess.run(
        ["sh", "-c", 'exec "$@" > /dev/full', "sh",
         THT, "workspace", "evidence", *args, "--workspace-root", str(ws)],
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env, timeout=300,
    )  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures/workspace", root)
    return root


@pytest.mark.parametrize(
    "args",
    [
        ("export", "--format", "jsonl"),
        ("sources", "list", "--json"),
        ("verify",),
        ("show", "evidence:clinical:drg", "--json"),
    ],
)
def test_output_that_cannot_be_written_fails_with_e604(ws: Path, args: tuple[str, ...]) -> None:
    ran = _run(ws, *args)
    assert "Traceback" not in ran.stderr and "Exception ignored" not in ran.stderr, ran.stderr
    assert ran.returncode == 6, ran.stderr
    assert "E604" in ran.stderr and "standard output" in ran.stderr, ran.stderr
    assert "bug in evidence-tool" not in ran.stderr, ran.stderr


def test_a_consolidation_whose_report_is_lost_is_still_recorded(ws: Path) -> None:
    unit = ws / "evidence/curated/glossary/drg.md"
    text = unit.read_text(encoding="utf-8")
    assert "\n# DRG\n" in text
    unit.write_text(text.replace("\n# DRG\n", "\n# DRG (diagnosis related group)\n"))
    ran = _run(ws, "consolidate", "--json")
    assert ran.returncode == 6 and "E604" in ran.stderr, ran.stderr
    assert "work is done" in ran.stderr, ran.stderr
    status = subprocess.run(
        [THT, "workspace", "evidence", "status", "--json", "--workspace-root", str(ws)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    state = json.loads(status.stdout)["result"]
    assert state["unconsolidated"]["modified"] == [], state["unconsolidated"]


@pytest.mark.parametrize("fmt", [(), ("--json",)], ids=["text", "json"])
def test_a_failing_command_keeps_its_own_code(ws: Path, fmt: tuple[str, ...]) -> None:
    # With --json the failure's envelope is what stdout refuses: its code must still be told.
    ran = _run(ws, "show", "evidence:clinical:no-such-unit", *fmt)
    assert ran.returncode == 2 and "E904" in ran.stderr, ran.stderr  # its own code, not 6
    assert "bug in evidence-tool" not in ran.stderr, ran.stderr


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_a_failure_that_is_not_stdouts_is_not_called_e604(tmp_path: Path, fmt: str) -> None:
    """The CI reporters read the current folder (os.getcwd); run from a deleted folder that
    raises FileNotFoundError while stdout is fine: not "standard output could not be
    written", and the command's own exit status (0: the units are valid) stays."""
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures/workspace", ws)
    gone = tmp_path / "gone"
    gone.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "THT_ACTOR": "test-curator"}
    env.pop("THT_INSTALLATION", None)
    ran = subprocess.run(
        ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone),
         THT, "workspace", "evidence", "validate", "--format", fmt, "--workspace-root", str(ws)],
        capture_output=True, stdin=subprocess.DEVNULL, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert not gone.exists()
    assert "E604" not in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
    assert ran.returncode == 0, ran.stderr


def _shell(ws: Path, redirect: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``tht workspace evidence ARGS --workspace-root WS`` behind a shell ``redirect``."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "THT_ACTOR": "test-curator"}
    env.pop("THT_INSTALLATION", None)
    return subprocess.run(
        ["sh", "-c", f'"$@" {redirect}', "sh",
         THT, "workspace", "evidence", *args, "--workspace-root", str(ws)],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        text=True, env=env, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "code", "named"),
    [
        (("sources", "list", "--json"), 6, ""),
        (("verify",), 6, ""),
        (("show", "evidence:clinical:no-such-unit", "--json"), 2, "E904"),
        (("status", "--no-such-option", "--json"), 2, "E901"),
    ],
)
def test_a_closed_stdout_is_e604_not_a_traceback(
    ws: Path, args: tuple[str, ...], code: int, named: str
) -> None:
    # '>&-' closes standard output: Python starts with sys.stdout None.
    ran = _shell(ws, ">&-", *args)
    assert "Traceback" not in ran.stderr and "bug in evidence-tool" not in ran.stderr, ran.stderr
    assert ran.returncode == code, ran.stderr
    assert "E604" in ran.stderr and "closed" in ran.stderr and named in ran.stderr, ran.stderr


@pytest.mark.parametrize("fmt", [("--json",), ()], ids=["json", "text"])
def test_a_usage_error_whose_reader_left_ends_quietly(ws: Path, fmt: tuple[str, ...]) -> None:
    # 'head -c0' reads nothing and leaves: the envelope meets a broken pipe.
    ran = _shell(ws, "| head -c0; exit ${PIPESTATUS:-0}", "status", "--no-such-option", *fmt)
    assert "Traceback" not in ran.stderr and "bug in evidence-tool" not in ran.stderr, ran.stderr
