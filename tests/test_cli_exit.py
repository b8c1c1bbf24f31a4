"""The ``tht`` program leaves without tearing its interpreter down (issue 20).

Tearing the interpreter down (every module, every object) was 0.03-0.05 s of each
command, a sixth of ``tht --help`` and of a small no-op consolidate.  The program
(``evidence_tool.cli.main:run``, the console script) now flushes its streams, runs
the exit handlers and ends the process; what it printed and its exit status must
not change.  Tests that call ``main`` in-process keep their interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.generate import generate

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import atexit, sys
class Marker:
    def __del__(self):
        sys.stderr.write("torn down\\n")
kept = Marker()
atexit.register(lambda: sys.stderr.write("exit handler ran\\n"))
sys.argv = ["tht", *sys.argv[1:]]
from evidence_tool.cli.main import {entry}
{entry}()
"""


def _probe(entry: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "THT_INSTALLATION"}
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(entry=entry), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_program_runs_exit_handlers_but_frees_nothing() -> None:
    program = _probe("run", "--version")
    assert program.returncode == 0, program.stderr
    assert "tht" in program.stdout
    assert "exit handler ran" in program.stderr
    assert "torn down" not in program.stderr
    # The control: the same probe through main() tears its interpreter down.
    library = _probe("main", "--version")
    assert library.returncode == 0
    assert "torn down" in library.stderr and "exit handler ran" in library.stderr


def _piped(entry: str, args: str, reader: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The probe's ``tht ARGS | READER`` in bash; stdout is the probe's exit status."""
    script = PROBE.format(entry=entry).replace('"', '\\"')
    cmd = f'"{sys.executable}" -c "{script}" {args} | {reader}; echo "${{PIPESTATUS[0]}}"'
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,237 units: an export of several megabytes, more than any pipe buffer."""
    root = generate(1237, tmp_path_factory.mktemp("exit") / "ws", seed=13)
    consolidated = _probe("main", "workspace", "evidence", "consolidate", "--json", cwd=root)
    assert consolidated.returncode == 0, consolidated.stdout + consolidated.stderr
    return root


CASES = {
    "validate --json": ("workspace", "evidence", "validate", "--json"),
    "export": ("workspace", "evidence", "export"),
    "usage error": ("workspace", "evidence", "consolidate", "--no-such-option"),
    "usage error --json": ("workspace", "evidence", "consolidate", "--no-such-option", "--json"),
    "unknown unit": ("workspace", "evidence", "show", "evidence:no:such-unit", "--json"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_and_status_are_the_ones_main_gives(workspace: Path, case: str) -> None:
    args = CASES[case]
    program, library = _probe("run", *args, cwd=workspace), _probe("main", *args, cwd=workspace)
    assert program.returncode == library.returncode
    assert program.stdout == library.stdout
    assert program.stderr.replace("exit handler ran\n", "") == library.stderr.replace(
        "exit handler ran\n", ""
    ).replace("torn down\n", "")
    if case == "export":
        lines = program.stdout.splitlines()
        assert len(program.stdout) > 1 << 20 and len(lines) >= 1237
        json.loads(lines[-1])  # the last line arrived whole


def test_a_reader_that_stops_early_ends_the_command_quietly(workspace: Path) -> None:
    """``tht ... export | head -c 100``: no traceback, no "internal error" (it was one,
    exit 70), the status a shell gives a writer ended by SIGPIPE, either way."""
    endings = {}
    for entry in ("run", "main"):
        done = _piped(entry, "workspace evidence export", "head -c 100 >/dev/null", workspace)
        assert "Traceback" not in done.stderr, done.stderr
        endings[entry] = done.stdout.strip()
    assert endings["run"] == endings["main"] == "141"  # as cat ended by SIGPIPE


def test_a_long_report_to_a_reader_that_leaves_ends_quietly(tmp_path: Path) -> None:
    """The report itself (``validate --json`` of 900 broken units, far over a pipe's
    buffer) written to a reader that has already left (``| true``: one write of the
    whole report may otherwise be taken by the pipe before ``head`` leaves): 141, no
    traceback, no internal error."""
    root = generate(900, tmp_path / "ws", seed=17)
    for path in (root / "evidence" / "curated").rglob("*.md"):
        path.write_text(path.read_text(encoding="utf-8").replace("schema_version: 4", "x: 1"))
    done = _piped("run", "workspace evidence validate --json", "true", root)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.stdout.strip() == "141"
    whole = _probe("run", "workspace", "evidence", "validate", "--json", cwd=root)
    assert whole.returncode == 1 and len(whole.stdout) > 1 << 17  # the case is a long report
    assert len(json.loads(whole.stdout)["errors"]) >= 900


def test_the_console_script_is_the_program() -> None:
    scripts = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'tht = "evidence_tool.cli.main:run"' in scripts


def test_a_broken_pipe_that_is_not_stdouts_is_still_a_defect(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Only a reader of stdout that left ends quietly: a pipe of the command's own (a
    refiner's stdin, say) breaking is a defect, reported as any other (exit 70)."""
    from evidence_tool.cli.output import Context, run

    def body() -> object:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(SystemExit) as ended:
        run(Context(False, "workspace evidence refresh"), body)  # type: ignore[arg-type]
    assert ended.value.code == 70
    assert "internal error (BrokenPipeError" in capfd.readouterr().err
