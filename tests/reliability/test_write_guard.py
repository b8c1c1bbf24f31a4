"""The audit hook of ``tests/write_guard.py`` refuses what it should and lets reads pass.

Each refused write here is expected, so the test clears the recorded violation
afterwards (otherwise the report hook would fail it, as it fails any test
that swallowed one).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import write_guard

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def refused() -> Iterator[Callable[[Callable[[], object]], str]]:
    """``refused(action)`` runs it, asserts the guard stopped it, and forgets the violation."""
    guard = write_guard._active
    assert guard is not None, "the audit hook is not active during tests"

    def check(action: Callable[[], object]) -> str:
        with pytest.raises(write_guard.WriteOutsideWorkspace) as info:
            action()
        assert guard.violations, "refused but not recorded"
        guard.violations.clear()
        return str(info.value)

    yield check
    assert not guard.violations


def test_writes_outside_the_workspace_are_refused(refused, tmp_path: Path) -> None:
    outside = REPO / "written-by-a-test.txt"
    assert "written-by-a-test.txt" in refused(lambda: open(outside, "w"))  # noqa: SIM115
    refused(lambda: open(outside, "ab"))  # noqa: SIM115
    refused(lambda: os.open(outside, os.O_WRONLY | os.O_CREAT))
    refused(lambda: os.mkdir(REPO / "made-by-a-test"))
    refused(lambda: os.replace(tmp_path, REPO / "moved-by-a-test"))
    refused(lambda: os.remove(REPO / "pyproject.toml"))
    refused(lambda: os.rmdir(REPO / "docs"))
    refused(lambda: shutil.copyfile(REPO / "pyproject.toml", REPO / "copied-by-a-test"))
    refused(lambda: sqlite3.connect(REPO / "made-by-a-test.sqlite"))
    assert not outside.exists()
    assert (REPO / "pyproject.toml").exists()


def test_reads_descriptors_and_the_workspace_pass(refused, tmp_path: Path) -> None:
    assert (REPO / "pyproject.toml").read_bytes()
    fd = os.open(REPO / "pyproject.toml", os.O_RDONLY)
    os.close(fd)
    sqlite3.connect(tmp_path / "db.sqlite").close()
    sqlite3.connect(f"file:{tmp_path / 'db.sqlite'}?mode=ro", uri=True).close()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f").write_text("x")
    os.replace(tmp_path / "sub" / "f", tmp_path / "g")
    with open(os.devnull, "w") as fh:
        fh.write("discarded")
    with tempfile.TemporaryFile() as fh:  # anonymous (O_TMPFILE): nothing is left behind
        fh.write(b"x")


def test_a_symlink_out_of_the_workspace_is_followed_by_the_check(refused, tmp_path: Path) -> None:
    link = tmp_path / "escape"
    link.symlink_to(REPO / "escaped-by-a-test.txt")
    refused(lambda: open(link, "w"))  # noqa: SIM115
    link.unlink()  # removing the link itself stays inside


def test_the_system_temp_dir_needs_the_marker(refused) -> None:
    refused(lambda: tempfile.mkstemp(prefix="evidence-guard-"))


@pytest.mark.allow_system_temp
def test_the_marker_allows_the_system_temp_dir() -> None:
    fd, name = tempfile.mkstemp(prefix="evidence-guard-")
    os.close(fd)
    os.unlink(name)


def test_a_swallowed_refusal_still_fails_the_test(tmp_path: Path) -> None:
    """The report hook fails a test whose code caught the refusal (a child pytest run)."""
    (tmp_path / "conftest.py").write_text(
        f"exec(compile(open({str(REPO / 'tests/conftest.py')!r}).read(), 'conftest', 'exec'))\n"
    )
    (tmp_path / "test_swallow.py").write_text(
        textwrap.dedent(
            f"""\
            def test_swallows():
                try:
                    open({str(REPO / "swallowed-by-a-test.txt")!r}, "w")
                except BaseException:
                    pass
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp",
         str(tmp_path / "basetemp"), "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "writes outside the test's temporary folder" in proc.stdout
    assert not (REPO / "swallowed-by-a-test.txt").exists()
