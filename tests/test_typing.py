"""mypy --strict passes on the package, so the suite (and CI) enforces the types.

mypy runs as a subprocess with its cache in the test's temp folder (nothing is
written in the checkout); a cold strict run takes tens of seconds, hence heavy.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MYPY = [sys.executable, "-m", "mypy"]


def _mypy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MYPY, "--cache-dir", str(tmp_path / "mypy-cache"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_package_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    done = _mypy(tmp_path, "--strict", "evidence_tool")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout


def test_pyproject_makes_plain_mypy_strict() -> None:
    # CONTRIBUTING's `mypy evidence_tool` must check what this test checks.
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]
    assert config.get("strict") is True


def test_strict_run_reports_an_untyped_function(tmp_path: Path) -> None:
    # The check can fail: the same invocation refuses an unannotated function.
    bad = tmp_path / "untyped_probe.py"
    bad.write_text("def f(x):\n    return x\n", encoding="utf-8")
    done = _mypy(tmp_path, "--strict", str(bad))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "[no-untyped-def]" in done.stdout
