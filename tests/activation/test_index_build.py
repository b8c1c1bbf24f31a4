"""The embedded index is rebuilt into a new file and swapped in atomically (SPEC.md 8).

A build that fails or is killed halfway leaves the previous revision serving
searches and the candidate pending; the next consolidate activates it and
leaves no temp file behind in ``.evidence-cache/``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import (
    FORMULA,
    FORMULA_PATH,
    Tht,
    add_word,
    cache_leftovers,
    state,
    write_installation,
)
from helpers import codes

from evidence_tool import fsio
from evidence_tool.activation import sqlite_index, sqlite_schema

WORD = "zanzibarite"


def _partial_build(path: Path, revision: str, records: Any) -> int:
    """Write the schema and some rows of the new index, then fail as a crash would."""
    con = sqlite3.connect(path)
    con.executescript(sqlite_schema._SCHEMA)
    for n, r in enumerate(records):
        con.execute(
            "INSERT INTO units VALUES (?,?,?,?,?,?,?)",
            (r["id"], r["kind"], r["language"], r["title"], "manual", r["content_hash"], "{}"),
        )
        if n == 10:
            break
    con.commit()
    con.close()
    assert path.stat().st_size > 0
    raise RuntimeError("disk vanished halfway through the index build")


def _fail_on_publish(op: str, path: str, phase: str) -> None:
    if op == "replace" and phase == "before" and path.endswith("/index.sqlite"):
        raise OSError(5, "I/O error on the index swap")


def _partial_update(path: Path, revision: str, drop: Any, records: Any, finish: Any) -> int:
    """The in-place update's transaction, failing after its deletes: rolled back."""

    def deletes_then_fail(con: sqlite3.Connection) -> None:
        assert con.in_transaction and con.execute("SELECT count(*) FROM units").fetchone()[0]
        raise RuntimeError("disk vanished halfway through the index update")

    return REAL_UPDATE(path, revision, drop, [], deletes_then_fail)


REAL_UPDATE = sqlite_index.update_in_place


def _inject(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "build":
        # Whichever way the index is written: afresh, or as a copy of the published one.
        monkeypatch.setattr(sqlite_index, "build_index", _partial_build)
        monkeypatch.setattr(sqlite_index, "update_in_place", _partial_update)
    else:
        # Only a full build publishes a file; a one-unit change updates the index in place.
        monkeypatch.setattr(sqlite_index.SqliteBackend, "_changed_since_index", lambda s, n: None)
        fsio.set_hook(_fail_on_publish)


def _assert_old_revision_serves(root: Path, tht: Tht, old: str) -> None:
    data = tht("search", "degenza").json["result"]
    assert data["revision"] == old
    assert FORMULA in {h["id"] for h in data["hits"]}
    assert tht("search", WORD).json["result"]["hits"] == []


@pytest.mark.parametrize("how", ["build", "publish"])
def test_a_failed_build_keeps_the_previous_index_and_the_candidate_pending(
    indexed: Path, tht: Tht, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    old = state(indexed).active
    add_word(indexed / FORMULA_PATH, WORD)
    _inject(how, monkeypatch)

    result = tht("consolidate")
    assert result.exit_code == 4 and codes(result.json) == ["E401"]
    candidate = result.json["result"]["revision"]
    assert result.json["result"]["status"] == "pending_activation"
    assert state(indexed).active == old and state(indexed).pending == candidate
    _assert_old_revision_serves(indexed, tht, old)
    assert cache_leftovers(indexed) == []

    monkeypatch.undo()
    fsio.set_hook(None)
    retry = tht("consolidate").json["result"]
    assert retry["status"] == "activated" and retry["revision"] == candidate
    assert state(indexed).active == candidate and state(indexed).pending is None
    hits = tht("search", WORD).json["result"]
    assert hits["revision"] == candidate and [h["id"] for h in hits["hits"]] == [FORMULA]
    assert cache_leftovers(indexed) == []


KILLER = textwrap.dedent(
    """
    import os, signal, sqlite3, sys
    from evidence_tool.activation import backends, sqlite_index, sqlite_schema, sqlite_write
    from evidence_tool.archive.local import LocalEvidenceArchive

    real = sqlite_index.build_index

    def build_then_die(path, revision, records):
        records = list(records)
        # A real build of half the units, then SIGKILL in the middle of it.
        con = sqlite3.connect(path)
        con.execute("PRAGMA journal_mode=" + os.environ.get("JOURNAL", "OFF"))
        con.executescript(sqlite_schema._SCHEMA)
        for r in records[: len(records) // 2]:
            con.execute("INSERT INTO meta VALUES (?, ?)", ("k" + r["id"], r["id"]))
        os.kill(os.getpid(), signal.SIGKILL)

    sqlite_index.build_index = build_then_die
    def update_then_die(path, revision, drop, records, finish):
        # The in-place update's own transaction, killed before its commit.
        sqlite_write._stamp = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
        return real_update(path, revision, drop, records, finish)

    real_update = sqlite_index.update_in_place
    sqlite_index.update_in_place = update_then_die
    if os.environ["JOURNAL"] != "in-place":  # a full build into its temp file
        sqlite_index.SqliteBackend._changed_since_index = lambda self, snapshot: None
    archive = LocalEvidenceArchive(sys.argv[1])
    archive.consolidate("alice", backends.backend_for({}, archive.layout))
    """
)


@pytest.mark.parametrize("journal", ["OFF", "DELETE", "in-place"])
def test_a_build_killed_by_sigkill_is_cleaned_up_by_the_retry(
    indexed: Path, tht: Tht, tmp_path: Path, journal: str
) -> None:
    """A real process killed mid-build leaves its temp files (a rollback journal too, for
    a build that uses one); the retry removes every one of them.  Killed inside the
    in-place update of the published index, before any page reached the file, it leaves
    a journal readers ignore; a hot one (pages written) is
    tests/reliability/test_attack_index_update_killed.py's case."""
    old = state(indexed).active
    add_word(indexed / FORMULA_PATH, WORD)
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    proc = subprocess.run(
        [sys.executable, str(script), str(indexed)],
        env={**os.environ, "JOURNAL": journal},
        capture_output=True,
        timeout=300,  # the process ends; a bound only when it does not
        check=False,
    )
    assert proc.returncode == -9, proc.stderr.decode()
    assert cache_leftovers(indexed), "the killed build left no temp file to clean"
    candidate = state(indexed).pending
    assert candidate is not None and state(indexed).active == old
    if journal == "in-place":
        assert cache_leftovers(indexed) == ["index.sqlite-journal"]
    _assert_old_revision_serves(indexed, tht, old)

    retry = tht("consolidate").json["result"]
    assert retry["status"] == "activated" and retry["revision"] == candidate
    assert [h["id"] for h in tht("search", WORD).json["result"]["hits"]] == [FORMULA]
    assert cache_leftovers(indexed) == []


def test_the_real_build_leaves_no_journal_while_it_runs(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tht: Tht, tmp_path: Path
) -> None:
    """During a build, the cache holds the published index and one temp file, nothing else."""
    # The build may run in a forked child (activation/_speed/prebuild.py): what it sees goes
    # through a file, not this process's memory.
    seen_file = tmp_path / "seen.json"
    real: Callable[..., int] = sqlite_index.build_index

    def spy(path: Path, revision: str, records: Any) -> int:
        def watched() -> Any:
            for n, r in enumerate(records):
                if n == 20:
                    with open(seen_file, "a", encoding="utf-8") as fh:
                        fh.write(json.dumps(cache_leftovers(indexed)) + "\n")
                yield r

        return real(path, revision, watched())

    monkeypatch.setattr(sqlite_index, "build_index", spy)
    (indexed / ".evidence-cache" / "index.sqlite").unlink()  # so the build is a full one
    add_word(indexed / FORMULA_PATH, WORD)
    assert tht("consolidate").json["result"]["status"] == "activated"
    seen = [json.loads(line) for line in seen_file.read_text(encoding="utf-8").splitlines()]
    assert len(seen) == 1 and len(seen[0]) == 1 and seen[0][0].endswith(".tmp"), seen


def test_a_missing_index_is_rebuilt_without_moving_pointers(indexed: Path, tht: Tht) -> None:
    before = state(indexed)
    (indexed / ".evidence-cache" / "index.sqlite").unlink()
    result = tht("consolidate").json["result"]
    assert result["status"] == "reindexed" and state(indexed) == before
    assert tht("consolidate").json["result"]["status"] == "unchanged"
    assert tht("search", "degenza").json["result"]["revision"] == before.active


def test_a_corrupt_index_is_reported_and_rebuilt(indexed: Path, tht: Tht) -> None:
    (indexed / ".evidence-cache" / "index.sqlite").write_bytes(b"not a database" * 100)
    searched = tht("search", "degenza")
    assert searched.exit_code == 7 and codes(searched.json) == ["E702"]
    verified = tht("verify", "--index")
    assert verified.exit_code == 7 and codes(verified.json) == ["E702"]
    assert tht("consolidate").json["result"]["status"] == "reindexed"
    assert tht("verify", "--index").exit_code == 0
    assert tht("search", "degenza").json["result"]["hits"]


def test_a_workspace_path_with_uri_characters_works(
    workspace: Path, tmp_path: Path, tht: Tht
) -> None:
    """sqlite opens the index read-only through a file: URI; '#', '?', '%' are names."""
    odd = tmp_path / "ws #1 ?x=%41"
    workspace.rename(odd)
    assert tht("consolidate", root=odd).json["result"]["status"] == "reindexed"
    assert tht("consolidate", root=odd).json["result"]["status"] == "unchanged"
    data = tht("search", "degenza", root=odd).json["result"]
    assert FORMULA in {h["id"] for h in data["hits"]}
    assert tht("verify", "--index", root=odd).exit_code == 0


def test_an_index_left_behind_by_another_backend_is_never_served(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    """Activated by another backend, the embedded index is stale: search says so."""
    command = write_installation(
        tmp_path / "command.yaml", {"kind": "command", "command": [sys.executable, "-c", "pass"]}
    )
    add_word(indexed / FORMULA_PATH, WORD)
    assert tht("consolidate", installation=command).json["result"]["status"] == "activated"
    result = tht("search", "degenza")
    assert result.exit_code == 7 and codes(result.json) == ["E702"]
    assert "only kept current by the sqlite backend" in result.json["errors"][0]["message"]
    assert tht("verify", "--index").exit_code == 7
    # Back on the default backend, consolidate rebuilds it for the active revision.
    assert tht("consolidate").json["result"]["status"] == "reindexed"
    assert [h["id"] for h in tht("search", WORD).json["result"]["hits"]] == [FORMULA]
