"""``.evidence-archive.lock``: fail fast naming the holder, --wait, SIGKILL, odd files (5.4)."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from archive_helpers import PYTHON, managed, retitle
from helpers import codes

from evidence_tool.archive.local import LocalEvidenceArchive

HOLDER = textwrap.dedent(
    """\
    import sys, time
    from pathlib import Path
    from evidence_tool.archive.lock import ArchiveLock

    lock = ArchiveLock(Path(sys.argv[1]) / ".evidence-archive.lock", "holder").acquire()
    print("ready", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def hold_lock(root: Path, seconds: float = 60.0) -> subprocess.Popen[str]:
    """A second process that holds the archive lock; returns once it says so on its pipe."""
    proc = subprocess.Popen(
        [PYTHON, "-c", HOLDER, str(root), str(seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"the holder did not start: {line!r} {proc.stderr.read()!r}")
    return proc


@pytest.fixture
def holders() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_a_held_lock_fails_fast_naming_the_holder(consolidated: Path, holders, tht) -> None:
    retitle(consolidated / "evidence/curated/glossary/drg.md")
    before = managed(consolidated)
    holder = hold_lock(consolidated)
    holders.append(holder)

    result = tht("consolidate", root=consolidated)

    # Fails fast: it returned while the holder still holds the lock (no waiting).
    assert holder.poll() is None
    assert result.exit_code == 3
    assert codes(result) == ["E303"]
    error = result.json["errors"][0]
    assert f"pid {holder.pid}" in error["message"]
    assert "holder" in error["message"]  # the holder's command
    assert error["path"] == ".evidence-archive.lock"  # workspace-relative, as every path
    assert result.json["result"]["holder"].startswith(f"pid {holder.pid} ")
    assert managed(consolidated) == before


def test_wait_succeeds_once_the_holder_exits(consolidated: Path, holders, tht) -> None:
    retitle(consolidated / "evidence/curated/glossary/drg.md")
    holder = hold_lock(consolidated, seconds=1.0)
    holders.append(holder)
    result = tht("consolidate", "--wait", "30", root=consolidated)
    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["changes"]["modified"] == ["evidence:clinical:drg"]
    # It waited for the holder rather than slipping past it: the holder is gone by now.
    assert holder.poll() is not None


def test_sigkill_of_the_holder_releases_the_lock_at_once(consolidated: Path, holders, tht) -> None:
    holder = hold_lock(consolidated)
    holders.append(holder)
    assert tht("consolidate", root=consolidated).exit_code == 3
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    result = tht("consolidate", root=consolidated)  # no --wait: the lock is free at once
    assert result.exit_code == 0, result.stdout


RAW_HOLDER = textwrap.dedent(
    """\
    import fcntl, os, sys, time

    fd = os.open(sys.argv[1], os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # like flock(1): no holder note of its own
    print("ready", flush=True)
    time.sleep(60)
    """
)


def test_a_stale_holder_note_is_not_named(consolidated: Path, holders, tht) -> None:
    """Regression: a lock held by another tool was blamed on the pid of an earlier holder."""
    lock = consolidated / ".evidence-archive.lock"
    dead = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True)
    dead_pid = int(dead.stdout)
    lock.write_text(f'{{"pid": {dead_pid}, "command": "consolidate", "since": "earlier"}}')
    proc = subprocess.Popen(
        [PYTHON, "-c", RAW_HOLDER, str(lock)], stdout=subprocess.PIPE, text=True
    )
    holders.append(proc)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"

    result = tht("consolidate", root=consolidated)

    assert result.exit_code == 3 and codes(result) == ["E303"]
    assert f"pid {dead_pid}" not in result.json["errors"][0]["message"]
    assert "another process" in result.json["errors"][0]["message"]


def test_readers_take_no_lock(consolidated: Path, holders, tht) -> None:
    holders.append(hold_lock(consolidated))
    for command in (("status",), ("log",), ("diff",), ("show", "evidence:clinical:drg")):
        assert tht(*command, root=consolidated).exit_code == 0, command
    assert tht("consolidate", "--dry-run", root=consolidated).exit_code == 0


def _occupy(lock: Path, what: str, tmp_path: Path) -> Path | None:
    lock.unlink(missing_ok=True)
    if what == "symlink":
        target = tmp_path / "elsewhere.txt"
        lock.symlink_to(target)
        return target
    if what == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    return None


@pytest.mark.parametrize("what", ["symlink", "fifo", "folder"])
def test_a_lock_path_that_is_not_a_regular_file_is_refused(
    consolidated: Path, tmp_path: Path, tht, what: str
) -> None:
    lock = consolidated / ".evidence-archive.lock"
    target = _occupy(lock, what, tmp_path)
    retitle(consolidated / "evidence/curated/glossary/drg.md")
    before = managed(consolidated)

    result = tht("consolidate", root=consolidated)

    assert result.exit_code == 3
    assert codes(result) == ["E303"]
    assert ".evidence-archive.lock" in result.json["errors"][0]["message"]
    assert managed(consolidated) == before
    if target is not None:
        assert not target.exists(), "the symlink was followed"
    assert LocalEvidenceArchive(consolidated).state().newest is not None
