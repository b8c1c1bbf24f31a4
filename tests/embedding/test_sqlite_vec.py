"""sqlite-vec (the ``vec`` extra, in the test extra): the index holds a ``vec0`` table
beside ``vectors``, dense KNN runs in SQLite, and a reader without the extension (the
stdlib ``sqlite3``) still answers every mode from the same file with the same hits."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from embed_server import ServerState
from helpers import envelope

from evidence_tool.activation import dense, vec
from evidence_tool.activation.sqlite_index import INDEX_NAME, Filters
from evidence_tool.activation.sqlite_schema import _SCHEMA
from evidence_tool.activation.sqlite_search import _where
from evidence_tool.embedding.vectors import from_blob, normalized, to_blob

QUERIES = ("how long did the patient stay in hospital", "codice fiscale del paziente")


def _installation(tmp: Path, url: str) -> Path:
    settings = {"kind": "http", "url": url, "model": "minilm", "dimensions": 384}
    path = tmp / "installation.yaml"
    path.write_text(json.dumps({"installation_version": 1, "evidence": {"embedding": settings}}))
    return path


@pytest.fixture
def tht(cli: Callable[[list[str]], Any], workspace: Path, tmp_path: Path) -> Callable[..., Any]:
    def run(*args: str, installation: Path) -> Any:
        argv = ["--installation", str(installation), "workspace", "evidence", *args]
        result = cli([*argv, "--workspace-root", str(workspace), "--json"])
        envelope(result)
        return result

    return run


@pytest.fixture(autouse=True)
def _actor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_ACTOR", "alice")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


@pytest.fixture
def without_vec(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Make this process behave as an install without the extra (the stdlib reader)."""

    def off() -> None:
        monkeypatch.setattr(vec, "probe", lambda: vec.Probe(None, None))

    yield off


def _schema(index: Path) -> tuple[set[str], dict[str, str]]:
    con = sqlite3.connect(index)  # the stdlib's: it cannot load sqlite-vec here
    try:
        names = {row[0] for row in con.execute("SELECT name FROM sqlite_master")}
        return names, dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()


def _hits(result: Any) -> list[tuple[str, float, float | None]]:
    return [(h["id"], h["score"], h["dense"]) for h in result.json["result"]["hits"]]


def test_the_extra_serves_in_the_test_install() -> None:
    """CI exercises the real extension: the test extra installs it (pyproject)."""
    found = vec.probe()
    assert found.driver is not None, found.problem
    assert found.problem is None and found.driver.version.startswith("v")


def test_vec_build_is_read_by_the_stdlib_reader_with_the_same_hits(
    workspace: Path,
    tht: Callable[..., Any],
    server: tuple[str, ServerState],
    tmp_path: Path,
    without_vec: Callable[[], None],
) -> None:
    url, _ = server
    inst = _installation(tmp_path, url)
    assert tht("consolidate", installation=inst).exit_code == 0
    index = workspace / ".evidence-cache" / INDEX_NAME
    names, meta = _schema(index)
    assert {"vectors", "vec_units", "fts", "units"} <= names
    assert meta["vec"].startswith("v")
    status = tht("status", installation=inst).json["result"]["search_index"]
    assert status == {"model": meta["embedding"], "dense_path": "vec", "sqlite_vec": meta["vec"]}

    con = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:  # the stdlib cannot read vec_units, but every other table is plain SQLite
        with pytest.raises(sqlite3.OperationalError, match="no such module: vec0"):
            con.execute("SELECT count(*) FROM vec_units").fetchone()
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        n_vectors = con.execute("SELECT count(*) FROM vectors").fetchone()[0]
        assert n_vectors == con.execute("SELECT count(*) FROM units").fetchone()[0] > 20
    finally:
        con.close()

    served: dict[tuple[str, str], list[Any]] = {}
    for query in QUERIES:
        for mode in ("dense", "hybrid"):
            result = tht("search", query, "--mode", mode, "--limit", "15", installation=inst)
            assert result.json["result"]["dense_path"] == "vec"
            served[query, mode] = _hits(result)
    without_vec()
    assert tht("status", installation=inst).json["result"]["search_index"]["dense_path"] == (
        "python"
    )
    compared = 0
    for (query, mode), hits in served.items():
        result = tht("search", query, "--mode", mode, "--limit", "15", installation=inst)
        assert result.exit_code == 0, result.stdout
        assert result.json["result"]["dense_path"] == "python"
        assert result.json["warnings"] == []  # no extra at all: silent
        assert _hits(result) == hits and len(hits) == 15
        compared += 1
    assert compared == 4
    bm25 = tht("search", "degenza", "--mode", "bm25", installation=inst)
    assert bm25.json["result"]["hits"] and bm25.json["result"]["dense_path"] is None


def _synthetic_index(path: Path, n: int, dim: int, seed: int) -> sqlite3.Connection:
    """An index of ``n`` units with deterministic vectors, many of them exact duplicates
    (ties that only the id can order), written through the vec driver."""
    rng = random.Random(seed)
    con = vec.connect(path)
    con.executescript(_SCHEMA)
    con.execute("CREATE TABLE vectors(id TEXT PRIMARY KEY, vec BLOB NOT NULL)")
    shared = [normalized([rng.uniform(-1, 1) for _ in range(dim)]) for _ in range(n // 10)]
    for i in range(n):
        uid = f"evidence:t:u{rng.randrange(10**6):06d}-{i}"
        vector = shared[i % len(shared)] if i % 3 == 0 else [rng.uniform(-1, 1) for _ in range(dim)]
        kind = ("glossary", "formula", "mapping")[i % 3 if i % 7 else 1]
        con.execute(
            "INSERT INTO units VALUES (?,?,?,?,?,?,?)", (uid, kind, "en", "t", "p", "h", "{}")
        )
        con.execute("INSERT INTO vectors VALUES (?,?)", (uid, to_blob(normalized(vector))))
    vec.sync(con, dim)
    return con


@pytest.mark.parametrize(("n", "dim", "seed"), [(257, 16, 3), (1200, 48, 11)])
def test_vec_and_python_paths_rank_the_same_top_k_ties_by_id(
    tmp_path: Path, n: int, dim: int, seed: int
) -> None:
    con = _synthetic_index(tmp_path / "x.sqlite", n, dim, seed)
    rng = random.Random(seed + 1)
    ran = 0
    try:
        assert vec.serves(con)
        queries = [normalized([rng.uniform(-1, 1) for _ in range(dim)]) for _ in range(4)]
        # A query equal to a shared vector: its duplicates tie at similarity 1.
        queries.append(
            list(from_blob(con.execute("SELECT vec FROM vectors ORDER BY id").fetchone()[0]))
        )
        for query in queries:
            for filters in (Filters(), Filters(kind="formula"), Filters(kind="nothing")):
                where, args = _where(filters)
                for k in (1, 7, 100, n):
                    fast, path = dense.ranked(con, query, where, args, min(k, 1000))
                    slow = dense.dense_ranking(con, query, where, args, min(k, 1000))
                    assert path == "vec"
                    assert fast == slow
                    ran += 1
    finally:
        con.close()
    assert ran == 5 * 3 * 4


def test_vec_units_follow_each_change_and_the_extra_coming_or_going(
    workspace: Path,
    tht: Callable[..., Any],
    server: tuple[str, ServerState],
    tmp_path: Path,
    without_vec: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = server
    inst = _installation(tmp_path, url)
    index = workspace / ".evidence-cache" / INDEX_NAME

    def mirrored() -> int:
        con = vec.connect(index)
        try:
            plain = set(con.execute("SELECT id FROM vectors").fetchall())
            assert set(con.execute("SELECT id FROM vec_units").fetchall()) == plain
            return len(plain)
        finally:
            con.close()

    without_vec()  # built first without the extra: no vec_units, the Python path
    assert tht("consolidate", installation=inst).exit_code == 0
    names, meta = _schema(index)
    assert "vec_units" not in names and "vec" not in meta
    monkeypatch.undo()  # the extra is installed now: the same revision gains vec_units
    monkeypatch.setenv("THT_ACTOR", "alice")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)
    assert tht("consolidate", installation=inst).exit_code == 0
    n = mirrored()
    curated = sorted((workspace / "evidence" / "curated").rglob("*.md"))
    curated[0].unlink()
    text = curated[1].read_text(encoding="utf-8")
    curated[1].write_text(text.replace("\n# ", "\n# Rivisto ", 1), encoding="utf-8")
    assert tht("consolidate", installation=inst).json["result"]["status"] == "activated"
    assert mirrored() == n - 1
    without_vec()  # the extra went: rebuilt without vec_units, never a traceback
    curated[2].unlink()
    result = tht("consolidate", installation=inst)
    assert result.exit_code == 0, result.stdout
    names, meta = _schema(index)
    assert "vec_units" not in names and "vec" not in meta
    found = tht("search", QUERIES[0], "--mode", "dense", installation=inst)
    assert found.json["result"]["dense_path"] == "python" and found.json["result"]["hits"]
