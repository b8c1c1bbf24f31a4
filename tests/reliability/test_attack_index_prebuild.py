"""The first consolidate builds its index in a forked child while the parent writes the
snapshot (activation/_speed/prebuild.py, issue 20).  The child must never outlive the run, never
leave its file behind, and never change what is published or which error is reported."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from evidence_tool import fsio
from evidence_tool.activation import sqlite_index
from evidence_tool.activation._speed import prebuild
from evidence_tool.activation.sqlite_index import SqliteBackend, build_index
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceError
from evidence_tool.workspace.layout import Layout

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from bench.generate import generate  # noqa: E402

CACHE = Path(".evidence-cache")


def _rows(path: Path) -> list[list[tuple[Any, ...]]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [
            con.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
            for t in ("units", "unit_purposes", "unit_tables", "meta")
        ] + [con.execute("SELECT id, title, body, applies_to FROM fts ORDER BY id").fetchall()]
    finally:
        con.close()


def _in_process_rows(root: Path, tmp: Path) -> list[list[tuple[Any, ...]]]:
    snap = LocalEvidenceArchive(root).active_snapshot()
    assert snap is not None
    build_index(tmp, snap.revision, snap.records())
    return _rows(tmp)


def _index_temps(root: Path) -> list[str]:
    return sorted(p.name for p in (root / CACHE).iterdir() if p.name.endswith(".tmp"))


class Started:
    """Records each Prebuild.start: the children this process forked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.builds: list[prebuild.Prebuild] = []
        real = prebuild.Prebuild.start.__func__  # type: ignore[attr-defined]

        def start(cls: type[prebuild.Prebuild], *args: Any) -> prebuild.Prebuild | None:
            found = real(cls, *args)
            if found is not None:
                self.builds.append(found)
            return found

        monkeypatch.setattr(prebuild.Prebuild, "start", classmethod(start))


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_first_consolidate_publishes_what_the_child_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = generate(57, tmp_path / "ws", seed=13)
    started = Started(monkeypatch)
    result = LocalEvidenceArchive(root).consolidate("tester", SqliteBackend(Layout.at(root)))
    assert result.status == "activated"
    assert len(started.builds) == 1  # the full build really ran ahead, in a child
    assert _reaped(started.builds[0].pid)
    assert _rows(root / CACHE / "index.sqlite") == _in_process_rows(root, tmp_path / "f.sqlite")
    assert _index_temps(root) == []


def test_attack_index_build_child_dies_midway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that dies after writing part of its file (OOM killer, a bug): the parent
    discards the part and builds the index itself; the run still activates."""
    root = generate(44, tmp_path / "ws", seed=5)
    started = Started(monkeypatch)
    parent = os.getpid()
    real = sqlite_index.build_index

    def half_then_die(path: Path, revision: str, records: Any, analyzer: str = "stem") -> int:
        if os.getpid() != parent:
            con = sqlite3.connect(path)
            con.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            con.commit()
            os._exit(9)
        return real(path, revision, records, analyzer)

    monkeypatch.setattr(sqlite_index, "build_index", half_then_die)
    result = LocalEvidenceArchive(root).consolidate("tester", SqliteBackend(Layout.at(root)))
    assert result.status == "activated", result.activation_error
    assert len(started.builds) == 1
    assert _rows(root / CACHE / "index.sqlite") == _in_process_rows(root, tmp_path / "f.sqlite")
    assert _index_temps(root) == []


def _failing_build(path: Path, revision: str, records: Any, analyzer: str = "stem") -> int:
    raise sqlite3.OperationalError("disk I/O error")


@pytest.mark.parametrize("ahead", [True, False])
def test_attack_index_build_fails_reports_what_the_in_process_build_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: bool
) -> None:
    """A build that fails in the child fails in the parent too: the run reports the same
    failed activation (pending, the same reason) as a run that never began one."""
    root = generate(23, tmp_path / "ws", seed=2)
    started = Started(monkeypatch)
    monkeypatch.setattr(sqlite_index, "build_index", _failing_build)
    backend = SqliteBackend(Layout.at(root))
    if not ahead:
        monkeypatch.setattr(backend, "begin", lambda snapshot: None, raising=False)
    result = LocalEvidenceArchive(root).consolidate("tester", backend)
    assert len(started.builds) == (1 if ahead else 0)
    assert result.status == "pending_activation"
    assert result.activation_error == "building the search index failed: disk I/O error"
    assert _index_temps(root) == []
    assert all(_reaped(b.pid) for b in started.builds)


def test_attack_snapshot_write_refused_while_the_index_builds_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk refuses an object while the child builds: E604, the child stopped and
    reaped, its file gone, no fsync after the refused write; the next run completes."""
    root = generate(38, tmp_path / "ws", seed=11)
    started = Started(monkeypatch)
    parent = os.getpid()
    release = tmp_path / "release"
    real = sqlite_index.build_index

    def slow_in_child(path: Path, revision: str, records: Any, analyzer: str = "stem") -> int:
        while os.getpid() != parent and not release.exists():  # still building at the error
            time.sleep(0.01)
        return real(path, revision, records, analyzer)

    monkeypatch.setattr(sqlite_index, "build_index", slow_in_child)
    after: list[tuple[str, str]] = []
    refused = False

    def hook(op: str, path: str, phase: str) -> None:
        nonlocal refused
        if refused:
            after.append((op, path))
        elif op == "write" and "/objects/" in path and phase == "before":
            refused = True
            raise OSError(errno.ENOSPC, "No space left on device", path)

    fsio.set_hook(hook)
    try:
        with pytest.raises(EvidenceError) as caught:
            LocalEvidenceArchive(root).consolidate("tester", SqliteBackend(Layout.at(root)))
    finally:
        fsio.set_hook(None)
    assert caught.value.code == "E604"
    assert len(started.builds) == 1 and _reaped(started.builds[0].pid)
    assert [a for a in after if a[0] == "fsync"] == []
    assert _index_temps(root) == []
    assert LocalEvidenceArchive(root).state().newest is None
    release.touch()
    again = LocalEvidenceArchive(root).consolidate("tester", SqliteBackend(Layout.at(root)))
    assert again.status == "activated"
    assert _rows(root / CACHE / "index.sqlite") == _in_process_rows(root, tmp_path / "f.sqlite")


KILLED = textwrap.dedent(
    """
    import os, signal, sys, time
    from evidence_tool import fsio
    from evidence_tool.activation import sqlite_index
    from evidence_tool.activation._speed import prebuild
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.workspace.layout import Layout

    root, pids = sys.argv[1], sys.argv[2]
    parent = os.getpid()
    real_build, real_start = sqlite_index.build_index, prebuild.Prebuild.start.__func__

    def build_forever(*args):
        while os.getpid() != parent:  # the child: a build that outlasts the parent
            time.sleep(0.05)
        return real_build(*args)

    def start(cls, *args):
        found = real_start(cls, *args)
        with open(pids, "w") as fh:
            fh.write(str(found.pid))
        return found

    def hook(op, path, phase):
        # The parent killed while writing the objects, the child still building.
        if op == "replace" and "/objects/" in path and os.getpid() == parent:
            os.kill(parent, signal.SIGKILL)

    sqlite_index.build_index = build_forever
    prebuild.Prebuild.start = classmethod(start)
    fsio.set_hook(hook)
    LocalEvidenceArchive(root).consolidate("tester", sqlite_index.SqliteBackend(Layout.at(root)))
    """
)


def _gone(pid: int) -> bool:
    """No such process, or a zombie nobody reaps (this container's init may not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_attack_consolidate_killed_while_its_index_builds_ahead(tmp_path: Path) -> None:
    root = generate(31, tmp_path / "ws", seed=17)
    script, pids = tmp_path / "killed.py", tmp_path / "pids"
    script.write_text(KILLED)
    proc = subprocess.run(
        [sys.executable, str(script), str(root), str(pids)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == -9, proc.stderr.decode()
    child = int(pids.read_text())
    deadline = time.monotonic() + 60
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the index build outlived the consolidate that started it"
    # The next run sweeps the dead child's file and completes.
    result = LocalEvidenceArchive(root).consolidate("tester", SqliteBackend(Layout.at(root)))
    assert result.status == "activated"
    assert _index_temps(root) == []
    assert _rows(root / CACHE / "index.sqlite") == _in_process_rows(root, tmp_path / "f.sqlite")
