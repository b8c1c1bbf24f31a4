"""A one-unit change updates the published index in place, inside one SQLite transaction
(issue 20); a process killed in the middle of that transaction must leave an index that
the next consolidate recovers, never one that serves half an update."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evidence_tool.activation.sqlite_index import Filters, SqliteBackend, build_index, search
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceError
from evidence_tool.workspace.layout import Layout

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from bench.generate import generate  # noqa: E402

INDEX = Path(".evidence-cache") / "index.sqlite"


def _consolidate(root: Path) -> Any:
    return LocalEvidenceArchive(root).consolidate("tester", SqliteBackend(Layout.at(root)))


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {
            "units": con.execute(
                "SELECT id, content_hash, record FROM units ORDER BY id"
            ).fetchall(),
            "fts": con.execute(
                "SELECT id, title, body, applies_to FROM fts ORDER BY id"
            ).fetchall(),
            "purposes": con.execute("SELECT * FROM unit_purposes ORDER BY 1, 2").fetchall(),
            "tables": con.execute("SELECT * FROM unit_tables ORDER BY 1, 2").fetchall(),
            "meta": con.execute("SELECT * FROM meta ORDER BY key").fetchall(),
        }
    finally:
        con.close()


def _fresh_build(root: Path, tmp: Path) -> dict[str, list[tuple[Any, ...]]]:
    snap = LocalEvidenceArchive(root).active_snapshot()
    assert snap is not None
    build_index(tmp, snap.revision, snap.records())
    return _rows(tmp)


def _edit(root: Path, n: int) -> str:
    path = sorted((root / "evidence" / "curated" / "glossary").glob("*.md"))[n]
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f" Emendato {n}.\n")
    return path.name


def test_one_edited_unit_updates_the_published_index_file_in_place(tmp_path: Path) -> None:
    root = generate(36, tmp_path / "ws", seed=21)
    assert _consolidate(root).status == "activated"
    inode = os.stat(root / INDEX).st_ino
    for n in (1, 4):
        _edit(root, n)
        result = _consolidate(root)
        assert result.status == "activated" and len(result.changes["modified"]) == 1
        # The same file, not a copy swapped in: the change costs its rows, not the index.
        assert os.stat(root / INDEX).st_ino == inode
        assert _rows(root / INDEX) == _fresh_build(root, tmp_path / f"fresh{n}.sqlite")
    assert sorted(p.name for p in (root / ".evidence-cache").iterdir() if "sqlite" in p.name) == [
        "index.sqlite",
        "index.sqlite.stamp",
    ]


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from evidence_tool.activation import sqlite_index, sqlite_write
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.workspace.layout import Layout

    def stamp_then_die(con, revision, analyzer="stem"):
        # Every row of the update written, the meta rows too, the commit not yet made.
        real_stamp(con, revision, analyzer)
        con.execute("PRAGMA cache_size=1")  # spills: the file itself is written
        con.execute("DELETE FROM units WHERE rowid % 2 = 0")  # pages on disk, journal hot
        os.kill(os.getpid(), signal.SIGKILL)

    real_stamp = sqlite_write._stamp
    sqlite_write._stamp = stamp_then_die
    root = sys.argv[1]
    backend = sqlite_index.SqliteBackend(Layout.at(root))
    LocalEvidenceArchive(root).consolidate("tester", backend)
    """
)


def test_attack_in_place_update_killed_before_its_commit(tmp_path: Path) -> None:
    root = generate(41, tmp_path / "ws", seed=8)
    assert _consolidate(root).status == "activated"
    before = _rows(root / INDEX)
    _edit(root, 2)
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    proc = subprocess.run(
        [sys.executable, str(script), str(root)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == -9, proc.stderr.decode()
    journal = root / ".evidence-cache" / "index.sqlite-journal"
    assert journal.exists()  # the kill struck inside the transaction
    assert not (root / ".evidence-cache" / "index.sqlite.stamp").exists()
    # Readers cannot roll a hot journal back: search says what to run, never half rows.
    with pytest.raises(EvidenceError) as caught:
        search(Layout.at(root), "emendato", Filters())
    assert caught.value.code in ("E702", "E905"), caught.value
    assert "consolidate" in str(caught.value)
    # A read-write open rolls the hot journal back: the file still is the old revision's.
    recovered = tmp_path / "recovered"
    recovered.mkdir()
    for name in ("index.sqlite", "index.sqlite-journal"):
        (recovered / name).write_bytes((root / ".evidence-cache" / name).read_bytes())
    sqlite3.connect(recovered / "index.sqlite").execute("SELECT 1 FROM meta").fetchall()
    assert _rows(recovered / "index.sqlite") == before

    retry = _consolidate(root)
    assert retry.status == "activated"
    assert not journal.exists()
    assert _rows(root / INDEX) == _fresh_build(root, tmp_path / "fresh.sqlite")
    assert _consolidate(root).status == "unchanged"


def test_attack_journal_that_cannot_be_recovered_goes_with_its_index(tmp_path: Path) -> None:
    """A journal beside an index it cannot roll back (the index replaced by hand, say) must
    not survive into the rebuilt file: SQLite would apply it to the new pages."""
    root = generate(19, tmp_path / "ws", seed=4)
    assert _consolidate(root).status == "activated"
    cache = root / ".evidence-cache"
    (cache / "index.sqlite").write_bytes(b"not a database" * 64)
    (cache / "index.sqlite-journal").write_bytes(b"\\xd9\\xd5\\x05\\xf9\\x20\\xa1\\x63\\xd7" * 64)
    (cache / "index.sqlite.stamp").unlink()
    assert _consolidate(root).status == "reindexed"
    assert not (cache / "index.sqlite-journal").exists()
    assert _rows(root / INDEX) == _fresh_build(root, tmp_path / "fresh.sqlite")
