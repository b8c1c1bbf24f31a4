"""A consolidate killed mid-write leaves temp files; ``recover`` (which shows the journal
and may abandon entries) must not hide them from the next locked run's sweep.

Found by session 7's review: recover took the lock and released it as a clean run, so
the next consolidate did not sweep and ``verify`` kept failing with E701 on a temp file
in the object store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_runner import tht

KILLER = """
import os, signal, sys
from evidence_tool import fsio
count = [0]
def hook(op, path, phase):
    if phase == "before":
        count[0] += 1
        if count[0] == int(os.environ["KILL_AT"]):
            os.kill(os.getpid(), signal.SIGKILL)
fsio.set_hook(hook)
from evidence_tool.cli.main import main
main(sys.argv[1:])
"""


def _killed_consolidate(ws: Path, at: int) -> int:
    env = {**os.environ, "KILL_AT": str(at)}
    args = ["workspace", "evidence", "consolidate", "--workspace-root", str(ws)]
    done = subprocess.run(
        [sys.executable, "-c", KILLER, *args], env=env, capture_output=True, check=False
    )
    return done.returncode


def _temp_files(ws: Path) -> list[str]:
    return [str(p.relative_to(ws)) for p in ws.rglob("*.tmp")]


def test_recover_after_a_killed_consolidate_leaves_the_temp_files_to_the_next_sweep(
    workspace: Path, tmp_path: Path
) -> None:
    assert tht(workspace, "consolidate").exit_code == 0
    unit = workspace / "evidence" / "curated" / "enum" / "triage-code.md"
    unit.write_text(unit.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    template = tmp_path / "template"
    os.rename(workspace, template)
    left = swept = 0
    for at in range(2, 62, 4):
        ws = tmp_path / f"run-{at}"
        subprocess.run(["cp", "-a", str(template), str(ws)], check=True)
        if _killed_consolidate(ws, at) != -9:
            continue  # the run had fewer writes than that
        if not _temp_files(ws):
            continue
        left += 1
        assert tht(ws, "recover").exit_code == 0
        assert tht(ws, "consolidate").exit_code == 0
        assert _temp_files(ws) == [], at
        result = tht(ws, "verify")
        assert result.exit_code == 0, (at, result.stdout)
        swept += 1
    assert left >= 3 and swept == left
