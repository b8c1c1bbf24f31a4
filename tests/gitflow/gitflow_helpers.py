"""Helpers: real temporary Git repositories holding a copy of the fixture workspace.

Tests may write Git (init, add, commit, clone); the library under test may not.
Git runs without the machine's global or system configuration, so a signing
or hook setting on the test machine cannot change the outcome.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cli_runner import CliResult, invoke  # noqa: F401  (re-exported to the tests)

REPO = Path(__file__).resolve().parents[2]
FIXTURE_WORKSPACE = REPO / "fixtures" / "workspace"
BIN = Path(sys.executable).parent
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Test Curator",
    "GIT_AUTHOR_EMAIL": "curator@example.org",
    "GIT_COMMITTER_NAME": "Test Curator",
    "GIT_COMMITTER_EMAIL": "curator@example.org",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", "-c", "core.quotePath=false", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def shell_env(tmp: Path) -> dict[str, str]:
    """The environment of a shell example: this tree's ``tht`` first on PATH."""
    return {
        **os.environ,
        **GIT_ENV,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
        "THT_ACTOR": "test-curator",
        "TMPDIR": str(tmp),
    }


@dataclass
class Checkout:
    """A repository at ``top`` whose workspace lives at ``top / prefix``."""

    top: Path
    prefix: str

    @property
    def ws(self) -> Path:
        return self.top / self.prefix if self.prefix else self.top

    def rel(self, ws_rel: str) -> str:
        return f"{self.prefix}/{ws_rel}" if self.prefix else ws_rel

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.top, *args, check=check)

    def commit_all(self, message: str = "evidence") -> None:
        self.git("add", "--all")
        self.git("commit", "-q", "-m", message)


def make_checkout(top: Path, prefix: str = "", *, ignore_file: bool = True) -> Checkout:
    """A fresh repository holding the fixture workspace, everything committed."""
    top.mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    co = Checkout(top, prefix)
    shutil.copytree(
        FIXTURE_WORKSPACE,
        co.ws,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(".evidence-cache", ".evidence-archive.lock"),
    )
    if not ignore_file:
        (co.ws / ".gitignore").unlink()
    co.commit_all("fixture workspace")
    return co


def edit_unit(ws: Path, rel: str = "evidence/curated/domain/admission-date.md") -> str:
    """A visible edit of one unit (its rule text gains a sentence)."""
    path = ws / rel
    text = path.read_text(encoding="utf-8").rstrip("\n")
    path.write_text(text + " Checked by the test.\n", encoding="utf-8")
    return rel
