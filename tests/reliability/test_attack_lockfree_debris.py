"""Issue 27 G7: the lock-free writers (``tht workspace new``, ``tht evidence fmt``) killed
between writing a temp file and renaming it.

Each run is a real process SIGKILLed by itself right after its Nth temp file is complete
(the moment a kill leaves debris); no locked run sweeps the curated tree or the root
then.  After the kill: ``verify --strict`` names every temp file left (E108) instead of
passing, and ``git add -A`` in a Git work tree stages none of them (the generated
``.gitignore`` names the pattern).  The runs are counted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.workspace.scan import TEMP_GRACE_S

REPO = Path(__file__).resolve().parents[2]
# Runs the CLI and kills itself after the THT_KILL_AT-th complete temp file of a write.
KILLER = """
import os, signal, sys
from evidence_tool import fsio
from evidence_tool.cli.main import run
write_new, seen, at = fsio._write_new_file, [0], int(os.environ["THT_KILL_AT"])

def killed(tmp, data, *, sync=False):
    write_new(tmp, data, sync=sync)
    if fsio.TEMP_NAME.fullmatch(os.path.basename(os.fspath(tmp))):
        seen[0] += 1
        if seen[0] == at:
            os.kill(os.getpid(), signal.SIGKILL)

fsio._write_new_file = killed
sys.argv = ["tht", *sys.argv[1:]]
run()
"""


def tht(*args: str, kill_at: int = 0, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "THT_ACTOR": "killer", "THT_KILL_AT": str(kill_at)}
    env.pop("THT_INSTALLATION", None)
    return subprocess.run(
        [sys.executable, "-c", KILLER, *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def temps(root: Path) -> list[str]:
    """The temp files left, aged past the grace a write in flight has (found later, as an
    operator finds them: a fresh one may be a live write's and is not reported)."""
    found = [p for p in root.rglob("*") if fsio.TEMP_NAME.fullmatch(p.name)]
    old = time.time() - 2 * TEMP_GRACE_S
    for p in found:
        os.utime(p, (old, old), follow_symlinks=False)
    return sorted(p.relative_to(root).as_posix() for p in found)


def staged(root: Path) -> list[str]:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    out = subprocess.run(
        ["git", "-C", str(root), "diff", "--cached", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def strict_findings(root: Path) -> list[dict[str, object]]:
    result = tht(
        "workspace", "evidence", "verify", "--strict", "--workspace-root", str(root), "--json"
    )
    assert result.returncode != 70, result.stderr
    return [e for e in json.loads(result.stdout)["errors"] if e["code"] == "E108"]


def test_attack_workspace_new_killed_mid_write_leaves_no_silent_debris(tmp_path: Path) -> None:
    runs = 0
    for kill_at in (1, 3, 6):
        root = tmp_path / f"ws{kill_at}"
        killed = tht(
            "workspace",
            "new",
            str(root),
            "--id",
            "clin",
            "--name",
            "Clin",
            "--language",
            "en",
            "--example",
            kill_at=kill_at,
        )
        assert killed.returncode == -9, killed.stderr  # SIGKILL, as asked
        left = temps(root)
        assert left, f"the kill at temp file {kill_at} left nothing to find"
        # The same command completes the workspace; the debris stays until someone acts.
        again = tht(
            "workspace",
            "new",
            str(root),
            "--id",
            "clin",
            "--name",
            "Clin",
            "--language",
            "en",
            "--example",
        )
        assert again.returncode == 0, again.stderr
        assert temps(root) == left
        reported = sorted(str(e["path"]) for e in strict_findings(root))
        assert reported == left, reported
        status = tht("workspace", "evidence", "status", "--workspace-root", str(root), "--json")
        assert status.returncode == 0, status.stderr
        warned = sorted(w["path"] for w in json.loads(status.stdout)["warnings"])
        assert warned == left, warned
        assert not set(left) & set(staged(root)), staged(root)
        runs += 1
    assert runs == 3


def test_attack_fmt_killed_mid_write_is_reported_by_verify_strict(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    assert (
        tht(
            "workspace",
            "new",
            str(root),
            "--id",
            "clin",
            "--name",
            "Clin",
            "--language",
            "en",
            "--example",
        ).returncode
        == 0
    )
    units = sorted((root / "evidence/curated").rglob("*.md"))
    assert len(units) >= 2
    for unit in units[:2]:  # not canonical: a blank line too many at the end
        unit.write_bytes(unit.read_bytes() + b"\n\n")
    assert strict_findings(root) == []
    killed = tht("evidence", "fmt", str(root / "evidence/curated"), kill_at=2)
    assert killed.returncode == -9, killed.stderr
    left = temps(root)
    assert len(left) == 1 and left[0].startswith("evidence/curated/"), left
    assert [e["path"] for e in strict_findings(root)] == left
    assert left[0] not in staged(root)
    # Deleting it, as the message says, is all it takes.
    (root / left[0]).unlink()
    assert tht("evidence", "fmt", str(root / "evidence/curated")).returncode == 0
    assert strict_findings(root) == []
    shutil.rmtree(root / ".git")
