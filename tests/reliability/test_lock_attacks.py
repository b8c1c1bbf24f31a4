"""Attacks on the archive lock by real processes (issue 14, items 1 and 2).

- A consolidation SIGKILLed while its parse workers run: no worker may keep the lock,
  and none may outlive the killed run (they used to block forever, holding it).
- The lock file renamed over, or deleted, under a holder by another process: a second
  writer must still be refused, and a lock taken while the path is being replaced must
  end up on the file the path names.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_tool import fsio
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.lock import ArchiveLock
from evidence_tool.errors import LockHeldError
from evidence_tool.workspace._speed.parallel import PARALLEL_MIN

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

REPO = Path(__file__).resolve().parents[2]
ENV = {"THT_ACTOR": "mallory", "THT_NOW": "2026-12-01T09:00:00Z"}
LOCK = ".evidence-archive.lock"


def _env() -> dict[str, str]:
    env = {**os.environ, **ENV, "PYTHONPATH": str(REPO)}
    env.pop("THT_INSTALLATION", None)
    env.pop("THT_SERIAL", None)
    return env


def tht(ws: Path, *args: str, **kw: object) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "evidence_tool.cli.main", "workspace", "evidence", *args]
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kw}
    return subprocess.Popen(
        [*argv, "--workspace-root", str(ws), "--json"],
        text=True,
        env=_env(),
        **streams,  # type: ignore[call-overload]
    )


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()  # fields from "state" on


def living(pids: set[int] | None = None, *, group: int | None = None) -> set[int]:
    """Processes of ``pids`` or of process group ``group`` still running (zombies are dead)."""
    out = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        fields = _stat(pid)
        if fields is None or fields[0] in ("Z", "X"):
            continue
        if (pids is not None and pid in pids) or (group is not None and int(fields[2]) == group):
            out.add(pid)
    return out


def children(pid: int) -> set[int]:
    out = set()
    for name in os.listdir("/proc"):
        fields = _stat(int(name)) if name.isdigit() else None
        if fields is not None and int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            out.add(int(name))
    return out


def wait_until(check, timeout: float, step: float = 0.05):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(step)


UNIT = """---
schema_version: 4
id: evidence:attack:term-{n:04d}
kind: glossary
language: en
purposes: [disambiguation]
---

# Term {n}

## Definition

{body}
"""


@pytest.fixture
def ws(workspace: Path) -> Path:
    LocalEvidenceArchive(workspace).initialize("mallory")
    return workspace


def add_units(ws: Path, count: int) -> None:
    """``count`` new units: new files, so the stat cache knows none and all are parsed."""
    folder = ws / "evidence/curated/glossary"
    body = " ".join(f"word{n}" for n in range(400))  # enough text that parsing takes a while
    for n in range(count):
        (folder / f"attack-term-{n:04d}.md").write_text(UNIT.format(n=n, body=body))


# -- item 1: parse workers of a killed run -----------------------------------------------


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the parallel parse needs two cores")
@pytest.mark.parametrize("count", [PARALLEL_MIN + 450])
def test_attack_sigkill_during_the_parallel_parse_leaves_no_lock_holder(
    ws: Path, tmp_path: Path, count: int
) -> None:
    add_units(ws, count)
    # Output to a file, not a pipe: a surviving worker would hold a pipe open forever.
    with open(tmp_path / "victim.out", "w") as sink:
        victim = tht(ws, "consolidate", start_new_session=True, stdout=sink, stderr=sink)
    try:
        workers = wait_until(lambda: children(victim.pid), timeout=60, step=0.005)
        assert workers, "the consolidation never started its parse workers"
        time.sleep(0.05)  # the workers are parsing now
        still_parsing = children(victim.pid)
        os.kill(victim.pid, signal.SIGKILL)
        assert victim.wait(timeout=30) == -signal.SIGKILL
        assert still_parsing, "the kill landed after the parse: nothing was tested"
        _rerun_and_check(ws, victim.pid, count)
    finally:
        for pid in living(group=victim.pid):  # never leave a stray worker behind
            os.kill(pid, signal.SIGKILL)


def _rerun_and_check(ws: Path, killed: int, count: int) -> None:

    # The next writer runs at once, without --wait ...
    code, out = finish(tht(ws, "consolidate"))
    assert code == 0, out
    assert '"E303"' not in out
    # ... and nothing of the killed run survives it.
    left = wait_until(lambda: not living(group=killed), timeout=30)
    assert left, f"processes of the killed run still alive: {living(group=killed)}"
    snapshot = LocalEvidenceArchive(ws).newest_snapshot()
    assert snapshot is not None
    ids = {e.id for e in snapshot.entries()}
    assert sum(i.startswith("evidence:attack:term-") for i in ids) == count


def test_a_forked_child_never_holds_the_lock(ws: Path) -> None:
    """Any fork of a holder (a pool worker, a helper): killing the parent frees the lock."""
    script = textwrap.dedent(
        """\
        import os, sys, time
        from pathlib import Path
        from evidence_tool.archive.lock import ArchiveLock

        ArchiveLock(Path(sys.argv[1]), "forker").acquire()
        running, started = os.pipe()
        if os.fork() == 0:
            os.write(started, b"x")  # past the fork hooks: the lock is closed here
            time.sleep(120)  # a child that never exits by itself
            os._exit(0)
        os.read(running, 1)
        print("ready", flush=True)
        time.sleep(120)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(ws / LOCK)],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        lock = ArchiveLock(ws / LOCK, "after", wait=0.0)
        lock.acquire()  # raises E303 while the forked child keeps the descriptor
        lock.release()
    finally:
        with_group = living(group=proc.pid)
        for pid in with_group:
            os.kill(pid, signal.SIGKILL)
        if proc.stdout is not None:
            proc.stdout.close()


# -- item 2: the lock file replaced under a holder -----------------------------------------

HOLDER = textwrap.dedent(
    """\
    import sys, time
    from pathlib import Path
    from evidence_tool.archive.lock import ArchiveLock

    lock = ArchiveLock(Path(sys.argv[1]), "first-writer").acquire()
    print("ready", flush=True)
    sys.stdin.readline()  # hold until the test says so
    lock.release()
    print("released", flush=True)
    """
)


@pytest.fixture
def holder(ws: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws / LOCK)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)


REPLACE = {
    # what a command writing its output "atomically" onto the lock path does
    "renamed-over": "import os, sys; open(sys.argv[1] + '.new', 'w').write('<html>'); "
    "os.replace(sys.argv[1] + '.new', sys.argv[1])",
    "deleted": "import os, sys; os.unlink(sys.argv[1])",
    "deleted-then-recreated": "import os, sys; os.unlink(sys.argv[1]); "
    "open(sys.argv[1], 'w').close()",
}


@pytest.mark.parametrize("how", sorted(REPLACE))
def test_attack_lock_file_replaced_under_a_holder_lets_no_second_writer_in(
    ws: Path, holder: subprocess.Popen[str], how: str
) -> None:
    subprocess.run([sys.executable, "-c", REPLACE[how], str(ws / LOCK)], check=True)
    before = {p: p.read_bytes() for p in (ws / "evidence/.local").rglob("*") if p.is_file()}
    (ws / "evidence/curated/glossary/drg.md").write_text(
        (ws / "evidence/curated/glossary/drg.md").read_text().replace("\n# ", "\n# Now: ", 1)
    )

    code, out = finish(tht(ws, "consolidate"))

    assert code == 3 and '"E303"' in out, out
    after = {p: p.read_bytes() for p in (ws / "evidence/.local").rglob("*") if p.is_file()}
    assert after == before, "the second writer wrote while the first held the lock"
    with pytest.raises(LockHeldError):
        ArchiveLock(ws / LOCK, "third", wait=0.0).acquire()

    # Once the first writer is done, the next one runs (no lock is left stuck).
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"
    code, out = finish(tht(ws, "consolidate"))
    assert code == 0, out


def test_a_lock_taken_while_the_path_is_replaced_is_on_the_file_the_path_names(
    ws: Path,
) -> None:
    """The path is replaced (by another process) between the open and the flock: the
    descriptor locked must still be the file at the path, or the holder note and any later
    writer would be on another file."""
    path = ws / LOCK
    replaced = []

    def replace_once(op: str, where: str, phase: str) -> None:
        if op == "open" and where == str(path) and phase == "after" and not replaced:
            replaced.append(where)
            subprocess.run([sys.executable, "-c", REPLACE["renamed-over"], where], check=True)

    fsio.set_hook(replace_once)
    try:
        lock = ArchiveLock(path, "racer").acquire()
    finally:
        fsio.set_hook(None)
    try:
        assert replaced == [str(path)]
        assert lock.fd is not None
        held, named = os.fstat(lock.fd), os.stat(path, follow_symlinks=False)
        assert (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)
        assert b'"racer"' in path.read_bytes()  # the holder note is on the file at the path
    finally:
        lock.release()


ORPHAN = textwrap.dedent(
    """\
    import os, sys, time
    from evidence_tool.workspace import children

    if os.fork() == 0:  # the worker, as the pool starts it
        sys.platform = sys.argv[1]  # "darwin": no PDEATHSIG, the pid watchdog must do
        children.die_with(os.getppid())
        print(os.getpid(), flush=True)
        time.sleep(120)
        os._exit(0)
    time.sleep(120)
    """
)


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_an_orphaned_parse_worker_exits(platform: str) -> None:
    """The pool's worker start-up, on Linux (PDEATHSIG) and elsewhere (pid watchdog)."""
    if platform == "linux" and not sys.platform.startswith("linux"):
        pytest.skip("PDEATHSIG is Linux's")
    parent = subprocess.Popen(
        [sys.executable, "-c", ORPHAN, platform],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert living({worker}) == {worker}
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=30)
        assert wait_until(lambda: not living({worker}), timeout=30), "the orphan lives on"
    finally:
        for pid in living(group=parent.pid):
            os.kill(pid, signal.SIGKILL)
        if parent.stdout is not None:
            parent.stdout.close()
