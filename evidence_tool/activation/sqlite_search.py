"""Searching the sqlite index: the query, the filters' SQL, BM25 and dense rankings."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from evidence_tool.activation import vec
from evidence_tool.activation.analysis import query_language, query_terms
from evidence_tool.activation.dense import (
    FUSION_DEPTH,
    index_model,
    ranked,
)
from evidence_tool.activation.fusion import DEFAULT as DEFAULT_FUSION
from evidence_tool.activation.fusion import Fusion
from evidence_tool.activation.names import NAME_BOOST
from evidence_tool.activation.records import (
    SearchResult,
)
from evidence_tool.activation.sqlite_hits import LexicalRow, _boosted, _fused_hits, _hit
from evidence_tool.activation.sqlite_schema import (
    FORMAT,
    INDEX_NAME,
    index_meta,
    open_readonly,
    rows_by_id,
)
from evidence_tool.embedding import DenseEmbedder, serves
from evidence_tool.errors import (
    IntegrityError,
    NotReadyError,
    UsageError,
)
from evidence_tool.workspace.layout import Layout

SqlArg = str | int  # a bound parameter of the filters' SQL


@dataclass(frozen=True)
class Filters:
    kind: str | None = None
    purpose: str | None = None
    language: str | None = None
    table: str | None = None


class Postings(Protocol):
    """An index file's rankings held in memory (postings.py's ``Postings``; a protocol
    here, so that this module does not import the one that imports it)."""

    meta: dict[str, str]

    def reading(
        self, connect: Callable[..., sqlite3.Connection]
    ) -> AbstractContextManager[sqlite3.Connection | None]: ...

    def lexical(
        self, con: sqlite3.Connection, query: str, filters: Filters, depth: int, boost: float
    ) -> dict[str, LexicalRow] | None: ...

    def dense(
        self, con: sqlite3.Connection, query: list[float], filters: Filters, k: int
    ) -> tuple[list[tuple[str, float]], str] | None: ...

    def records_of(self, ids: list[str]) -> dict[str, str]: ...


_WORD = re.compile(r"\w+", re.UNICODE)


def _exact_query(text: str, mode: str) -> str:
    """Format 2's query: every word, joined by ``mode`` (AND, then OR if none match)."""
    words = _WORD.findall(text)
    return f" {mode} ".join(_quoted(w) for w in words)


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _stem_query(text: str) -> str:
    """Any content word, in any analysed language's stem: BM25 weighs the matches, so a
    unit holding the question's rarer words ranks first (no all-words-first pass)."""
    groups = query_terms(text)
    return " OR ".join("(" + " OR ".join(map(_quoted, sorted(g))) + ")" for g in groups)


def _where(filters: Filters) -> tuple[list[str], list[SqlArg]]:
    """SQL conditions and their arguments for the typed filters."""
    where: list[str] = []
    args: list[SqlArg] = []
    if filters.kind:
        where.append("u.kind = ?")
        args.append(filters.kind)
    if filters.language:
        # BCP 47 tags compare case-insensitively; 'it' also matches 'it-CH'.  No LIKE:
        # '%' or '_' in the argument must not act as wildcards.
        lang = filters.language.lower()
        where.append("(lower(u.language) = ? OR substr(lower(u.language), 1, ?) = ?)")
        args += [lang, len(lang) + 1, lang + "-"]
    if filters.purpose:
        where.append("u.id IN (SELECT id FROM unit_purposes WHERE purpose = ?)")
        args.append(filters.purpose)
    if filters.table:
        where.append("u.id IN (SELECT id FROM unit_tables WHERE tbl = ?)")
        args.append(filters.table.lower())
    return where, args


def resolve_table(con: sqlite3.Connection, table: str, schemas: tuple[str, ...]) -> str:
    """The table ``--table`` means: a qualified name as given; an unqualified one as the
    only table of that name the units name, else the first schema of the search path
    (``schemas``) that holds it; still several: a usage error naming them."""
    name = table.lower()
    if "." in name:
        return name
    held = [str(r[0]) for r in con.execute("SELECT DISTINCT tbl FROM unit_tables")]
    found = sorted(t for t in held if t == name or t.rsplit(".", 1)[-1] == name)
    if len(found) <= 1:
        return found[0] if found else name
    for schema in schemas:
        if f"{schema.lower()}.{name}" in found:
            return f"{schema.lower()}.{name}"
    raise UsageError(
        f"--table {table} is ambiguous: the units name {', '.join(found)}, and the search path "
        f"({', '.join(schemas) or 'empty'}) holds none of them: give it as schema.table"
    )


def _check_current(layout: Layout, revision: str, path: Path) -> None:
    """The index must serve the active revision (or the candidate whose activation is
    publishing it right now): an index left behind by another backend is never served."""
    from evidence_tool.archive.state import read_state

    state = read_state(layout.state)
    if revision not in (state.active, state.pending):
        raise IntegrityError(
            f"the search index is for revision {revision[:12]}, but the active revision is "
            f"{(state.active or 'none')[:12]}: the index is only kept current by the sqlite "
            "backend; run 'tht workspace evidence consolidate' with it",
            code="E702",
            path=str(path),
        )


MODES = ("bm25", "dense", "hybrid")


def search_path(
    path: Path,
    query: str,
    filters: Filters,
    limit: int = 10,
    mode: str | None = None,
    embedder: Callable[[], DenseEmbedder | None] | None = None,
    *,
    fusion: Fusion = DEFAULT_FUSION,
    default_mode: str | None = None,
    schemas: tuple[str, ...] = ("public",),
    name_boost: float = NAME_BOOST,
    postings: Postings | None = None,
) -> SearchResult:
    """Units of the index file at ``path`` ranked by ``mode`` (no check of which revision it
    holds): ``bm25`` over stems with stop words dropped, ``dense`` (cosine to the query's
    embedding) or ``hybrid`` (both, each normalised and mixed by ``fusion``).  Without a
    mode: ``default_mode`` (a workspace's adopted one) when the index can serve it, else
    hybrid when the index has vectors, else bm25.  The filters are conditions of the
    ranking SQL itself, so ``limit`` counts only units that pass them; an unqualified
    ``table`` is resolved through ``schemas`` (the search path, ``resolve_table``).  A
    lexical candidate the question names in full gains ``name_boost`` (names.py; 0: off).
    ``embedder`` is called only when a dense ranking is needed.  ``postings`` (a server's,
    loaded once per revision) rank the lexical side in memory, with the same result."""
    meta = _readable_meta(path, postings)
    if mode is not None and mode not in MODES:
        raise UsageError(f"unknown search mode '{mode}'; the modes are: {', '.join(MODES)}")
    analyzer = meta.get("analyzer", "stem")
    ask = _Ask(query, _query_texts(query, analyzer), analyzer, limit, schemas, name_boost)
    # The stdlib's sqlite3 unless the index holds vec_units (then the driver that loads it).
    connect = vec.connect if vec.META_KEY in meta else sqlite3.connect
    try:
        with contextlib.ExitStack() as stack:
            # The postings keep a connection to their file per thread.
            kept = postings.reading(connect) if postings is not None else None
            con = (stack.enter_context(kept) if kept else None) or stack.enter_context(
                open_readonly(path, connect)
            )
            rankings = _rank(
                con, ask, meta.get("revision", ""), filters, mode, default_mode, embedder, postings
            )
    except vec.errors() as exc:
        raise IntegrityError(
            f"the search index {path} is unreadable ({exc}); rebuild it with "
            "'tht workspace evidence consolidate'",
            code="E702",
            path=str(path),
        ) from None
    return _result(ask, rankings, fusion)


@dataclass(frozen=True)
class _Ask:
    """What ``search_path`` was asked, as the ranking steps read it."""

    query: str
    texts: list[str]
    analyzer: str
    limit: int
    schemas: tuple[str, ...]
    name_boost: float


@dataclass(frozen=True)
class _Rankings:
    """The rankings one connection produced, before they are cut to hits."""

    revision: str
    mode: str
    lexical: dict[str, LexicalRow]
    dense: list[tuple[str, float]]
    dense_path: str | None  # which dense ranking served: "vec" or "python"
    records: dict[str, str]


def _rank(
    con: sqlite3.Connection,
    ask: _Ask,
    revision: str,
    filters: Filters,
    mode: str | None,
    default_mode: str | None,
    embedder: Callable[[], DenseEmbedder | None] | None,
    postings: Postings | None,
) -> _Rankings:
    """The lexical and dense rankings of ``ask`` over the open index ``con``."""
    if postings is not None:  # the revision this connection reads, not the postings'
        held = con.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
        revision = str(held[0]) if held else ""
    if filters.table:
        filters = replace(filters, table=resolve_table(con, filters.table, ask.schemas))
    where, args = _where(filters)
    mode = _mode(mode, default_mode, index_model(con) is not None)
    # bm25 reads as deep as hybrid: the name boost may lift a unit from below the limit.
    depth = max(ask.limit, FUSION_DEPTH)
    lexical = None
    if postings is not None and mode != "dense" and ask.analyzer == "stem":
        # _bm25_rows's rows from memory, ranked as _boosted ranks FTS5's.
        lexical = postings.lexical(con, ask.query, filters, depth, ask.name_boost)
    if lexical is None:
        rows = _bm25_rows(con, ask.texts, where, args, depth) if mode != "dense" else {}
        lexical = _boosted(rows, ask.query, ask.name_boost, revision)
    dense: list[tuple[str, float]] = []
    dense_path: str | None = None
    model = _query_model(con, embedder) if mode != "bm25" else None
    # Hybrid ranks a question its model does not serve by its words alone.
    if model is not None and (mode == "dense" or serves(model, query_language(ask.query))):
        vector = model.embed([ask.query])[0]
        found = postings.dense(con, vector, filters, depth) if postings else None
        dense, dense_path = found or ranked(con, vector, where, args, depth)
    missing = [uid for uid, _ in dense if uid not in lexical]
    # The dense ranking from memory read the postings' revision: so do their records.
    memory = postings if dense_path == "memory" else None
    records = (
        memory.records_of(missing)
        if memory
        else dict(rows_by_id(con, "SELECT id, record FROM units", missing))
    )
    return _Rankings(revision, mode, lexical, dense, dense_path, records)


def _result(ask: _Ask, got: _Rankings, fusion: Fusion) -> SearchResult:
    """The hits of ``got``'s rankings, cut to ``ask.limit``, as a search result."""
    if got.mode == "bm25":
        rows = list(got.lexical.values())[: ask.limit]
        # Scaled by the best hit: a word most units hold gets FTS5's smallest IDF (1e-6), and
        # its raw BM25 values are all near zero although their ratios still rank the hits.
        best = rows[0].rank if rows else 0.0
        hits = [_hit(row, best, got.revision, ask.analyzer) for row in rows]
    else:
        hits = _fused_hits(
            got.lexical,
            got.dense,
            got.records,
            ask.limit,
            got.revision,
            got.mode,
            ask.analyzer,
            fusion,
        )
    warning = vec.probe().warning() if got.dense_path else None
    used = (["bm25"] if got.mode != "dense" else []) + (["dense"] if got.dense_path else [])
    return SearchResult(
        got.revision,
        ask.query,
        got.mode,
        tuple(hits),
        tuple(used),
        got.dense_path,
        (warning,) if warning else (),
    )


def _readable_meta(path: Path, postings: Postings | None) -> dict[str, str]:
    """The index's meta rows (the postings' copy when a server holds them); E702 for an
    index of another format."""
    meta = (postings.meta if postings is not None else index_meta(path)) or {}
    if meta.get("format") != FORMAT:
        raise IntegrityError(
            f"the search index {path} has format {meta.get('format', 'unknown')}, this "
            f"version reads format {FORMAT}; rebuild it with 'tht workspace evidence consolidate'",
            code="E702",
            path=str(path),
        )
    return meta


def _query_texts(query: str, analyzer: str) -> list[str]:
    """The FTS5 query texts of ``query`` for the index's analyzer; E901 for a query with
    no words or only stop words."""
    texts = (
        [_stem_query(query)]
        if analyzer == "stem"
        else [_exact_query(query, fts_mode) for fts_mode in ("AND", "OR")]
    )
    if not _WORD.search(query):
        raise UsageError("the query has no words to search for")
    if not texts[0]:
        raise UsageError(
            "the query holds only stop words (such as 'the', 'di', 'what'): "
            "add the words that name what you look for"
        )
    return texts


def _mode(mode: str | None, default_mode: str | None, has_vectors: bool) -> str:
    """The mode asked for; else the adopted one when the index can serve it; else hybrid
    when the index has vectors, else bm25."""
    if mode is None and default_mode in MODES and (has_vectors or default_mode == "bm25"):
        mode = default_mode
    return mode or ("hybrid" if has_vectors else "bm25")


def search(
    layout: Layout,
    query: str,
    filters: Filters,
    limit: int = 10,
    mode: str | None = None,
    embedder: Callable[[], DenseEmbedder | None] | None = None,
    *,
    fusion: Fusion = DEFAULT_FUSION,
    default_mode: str | None = None,
    schemas: tuple[str, ...] = ("public",),
) -> SearchResult:
    """Ranked active units of the index (``search_path``), which must serve the active
    revision."""
    path = layout.cache / INDEX_NAME
    if not path.is_file():
        raise NotReadyError(
            "no search index yet: run 'tht workspace evidence consolidate' "
            "with the sqlite backend (the default)"
        )
    data = search_path(
        path,
        query,
        filters,
        limit,
        mode,
        embedder,
        fusion=fusion,
        default_mode=default_mode,
        schemas=schemas,
    )
    _check_current(layout, data.revision, path)
    return data


# BM25 column weights: id (not searched), title, fields, applies_to (docs/retrieval.md);
# postings.py reads them.
COLUMN_WEIGHTS = (0.0, 1.0, 1.0, 1.0)
_WEIGHTS = ", ".join(str(w) for w in COLUMN_WEIGHTS)


def _bm25_rows(
    con: sqlite3.Connection, texts: list[str], where: list[str], args: list[SqlArg], k: int
) -> dict[str, LexicalRow]:
    """Unit id -> its BM25 hit, best first; the first of ``texts`` (FTS queries, strictest
    first) that matches anything."""
    # highlight() marks the matched words of each column: which fields a hit matched.
    marks = ", ".join(f"highlight(fts, {n}, char(1), char(2))" for n in (1, 2, 3))
    # The k best are chosen first (bm25 alone), and only they are highlighted and read
    # from units: SQLite computes every selected column of every matching row before it
    # sorts, and a question's common words match most units (two thirds of the
    # time of a search at 10,000 units).
    # The join only when a filter reads units: a lookup per matching row costs as much.
    best = (
        f"SELECT fts.rowid, bm25(fts, {_WEIGHTS}) AS score FROM fts "
        + ("JOIN units u ON u.id = fts.id " if where else "")
        + "WHERE fts MATCH ?"
        + "".join(f" AND {w}" for w in where)
        # Ties by rowid, as FTS5's scan gives them: postings.py keeps the same ones.
        + " ORDER BY score, fts.rowid LIMIT ?"
    )
    # The scores come with the k rows: bm25() asked again per row looked up by rowid
    # counted every phrase's rows again each time (two thirds of a search's time).
    sql = (
        f"WITH best(r, score) AS MATERIALIZED ({best}) "
        f"SELECT u.id, u.record, best.score, {marks} FROM best "
        "JOIN fts ON fts.rowid = best.r JOIN units u ON u.id = fts.id WHERE fts MATCH ? "
        "ORDER BY best.score, best.r"
    )
    rows: list[tuple[str, str, float, str, str, str]] = []
    for text in texts:
        rows = con.execute(sql, [text, *args, k, text]).fetchall()
        if rows:
            break
    # SQLite's bm25() is lower-is-better: negated here, once.
    return {uid: LexicalRow(rec, -score, t, b, a) for uid, rec, score, t, b, a in rows}


def _query_model(
    con: sqlite3.Connection, embedder: Callable[[], DenseEmbedder | None] | None
) -> DenseEmbedder:
    """The installation's embedder, which must be the model that made the index's vectors."""
    held = index_model(con)
    if held is None:
        raise UsageError(
            "the search index holds no vectors: configure evidence.embedding in the "
            "installation and run 'tht workspace evidence consolidate', or use --mode bm25"
        )
    model = embedder() if embedder else None
    if model is None or model.model_id != held:
        raise UsageError(
            f"the index's vectors were made by {held}, but the installation's "
            f"evidence.embedding is {model.model_id if model else 'none'}: run "
            "'tht workspace evidence consolidate' to re-embed, or use --mode bm25"
        )
    return model
