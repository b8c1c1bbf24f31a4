"""Dense vectors in the sqlite index (their fusion with BM25: fusion.py).

The vectors live in the index file itself (table ``vectors``, float32 blobs of unit
length), stamped with the embedder's model id in ``meta.embedding``: an index made
by another model is re-embedded (through the cache: once per model and content).
Ranking is exact brute force over the units the filters keep, so filters apply
before ranking: a KNN in SQLite when sqlite-vec serves (vec.py), else in plain Python;
see docs/retrieval.md for the sizes each suits.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Sequence

from evidence_tool.activation import vec
from evidence_tool.embedding import DenseEmbedder
from evidence_tool.embedding.cache import EmbeddingCache
from evidence_tool.embedding.text import unit_text
from evidence_tool.embedding.vectors import dot, from_blob

FUSION_DEPTH = 100  # each ranking contributes at least this many candidates to the fusion

_VECTORS = "CREATE TABLE IF NOT EXISTS vectors(id TEXT PRIMARY KEY, vec BLOB NOT NULL)"


def write_vectors(
    con: sqlite3.Connection, embedder: DenseEmbedder | None, cache: EmbeddingCache | None
) -> None:
    """Make the index's ``vectors`` match its units for ``embedder`` (none: no vectors)."""
    if embedder is None or cache is None:
        con.execute("DROP TABLE IF EXISTS vectors")
        con.execute("DELETE FROM meta WHERE key = 'embedding'")
        vec.drop(con)
        return
    row = con.execute("SELECT value FROM meta WHERE key = 'embedding'").fetchone()
    if row is None or row[0] != embedder.model_id:
        con.execute("DROP TABLE IF EXISTS vectors")
        vec.drop(con)
    con.execute(_VECTORS)
    con.execute("DELETE FROM vectors WHERE id NOT IN (SELECT id FROM units)")
    # A unit whose rows were replaced lost its vector with them (see _delete_vector).
    missing = con.execute(
        "SELECT u.id, u.content_hash, u.record FROM units u "
        "WHERE u.id NOT IN (SELECT id FROM vectors)"
    ).fetchall()
    blobs = cache.vectors([(h, unit_text(json.loads(rec))) for _, h, rec in missing])
    con.executemany("INSERT INTO vectors VALUES (?,?)", [(i, blobs[h]) for i, h, _ in missing])
    con.execute("INSERT OR REPLACE INTO meta VALUES ('embedding', ?)", (embedder.model_id,))
    vec.sync(con, embedder.dim)


def delete_vector(con: sqlite3.Connection, unit_id: str) -> None:
    """Drop one unit's vector (its content changed or it left the index)."""
    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone():
        con.execute("DELETE FROM vectors WHERE id = ?", (unit_id,))
    vec.delete(con, unit_id)


def index_model(con: sqlite3.Connection) -> str | None:
    """The model id of the index's vectors; None when it holds none."""
    if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone():
        return None
    row = con.execute("SELECT value FROM meta WHERE key = 'embedding'").fetchone()
    return str(row[0]) if row else None


def ranked(
    con: sqlite3.Connection, query: list[float], where: list[str], args: Sequence[str | int], k: int
) -> tuple[list[tuple[str, float]], str]:
    """``dense_ranking``'s hits and the path that served them: ``vec`` (a KNN in SQLite)
    or ``python``; both give the same hits for the same vectors."""
    if vec.serves(con):
        hits = vec.ranking(con, query, where, args, k)
        if hits is not None:
            return hits, "vec"
    return dense_ranking(con, query, where, args, k), "python"


def dense_ranking(
    con: sqlite3.Connection, query: list[float], where: list[str], args: Sequence[str | int], k: int
) -> list[tuple[str, float]]:
    """The ``k`` units most similar to ``query`` (cosine) among those ``where`` keeps,
    in plain Python over the ``vectors`` table."""
    sql = "SELECT u.id, v.vec FROM vectors v JOIN units u ON u.id = v.id" + (
        " WHERE " + " AND ".join(where) if where else ""
    )
    scored = ((dot(query, from_blob(blob)), uid) for uid, blob in con.execute(sql, args))
    # Ties broken by id, so equal vectors rank the same way every time.
    best = heapq.nsmallest(k, scored, key=lambda s: (-s[0], s[1]))
    return [(uid, sim) for sim, uid in best]
