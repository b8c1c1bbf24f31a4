"""BM25 over one index file's postings in memory: FTS5's ranking without its cost per row.

FTS5 scores every row that holds one of a question's words before it keeps the best
(it has no top-k pruning), and a question's common words match most units: at 10,000
units that is 7 to 8 ms of CPU per search.  A server answers many questions of one
revision, whose index is immutable, so it loads the postings once (``Postings.load``:
per term, the rows holding it and its part of FTS5's BM25 there) and ranks a question
with a few numpy operations per term.

The scores are FTS5's own, bit for bit: ``bm25(fts, *COLUMN_WEIGHTS)`` of
``sqlite_search`` with FTS5's constants (k1 1.2, b 0.75), its IDF (``log((N - n + 0.5) /
(n + 0.5))``, at least 1e-6), the row sizes of ``fts_docsize`` and the totals of the
averages record, summed phrase by phrase in the query's order as fts5_aux.c does.  Ties
go to the lower rowid, as the ``ORDER BY ... LIMIT`` of the SQL path (which names the
rowid for that).  ``tests/activation/test_postings.py`` compares both paths hit by hit.

A query this cannot rank exactly is left to FTS5 (``top`` answers None): a phrase that
is not one plain ASCII token (its folding is unicode61's), an index of another format
or analyzer.  A row whose text is not ASCII gets its marks from ``highlight()``.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import functools
import itertools
import json
import logging
import math
import os
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import numpy as np
import numpy.typing as npt

from evidence_tool.activation.analysis import analyse, query_terms
from evidence_tool.activation.names import Namer, UnitNames, unit_names
from evidence_tool.activation.records import IndexRecord
from evidence_tool.activation.sqlite_hits import LexicalRow, _matched
from evidence_tool.activation.sqlite_schema import FORMAT, open_readonly
from evidence_tool.activation.sqlite_search import COLUMN_WEIGHTS, Filters, SqlArg, _stem_query
from evidence_tool.embedding.text import flatten
from evidence_tool.embedding.vectors import dot

K1 = 1.2  # fts5_aux.c's BM25 constants
B = 0.75
# float32 dot products of unit vectors (384 terms) are within 2.3e-5 of the exact sum
# whatever the order (n * 2**-24 * sum |a_i b_i|, and that sum is at most 1).
DENSE_MARGIN = 1e-4
# Python 3.11's sum() adds floats one by one from the first, as np.cumsum does: then
# numpy gives vectors.dot's value bit for bit (3.12's sum() compensates its rounding).
_SUMS_IN_ORDER = sys.version_info < (3, 12)
IDF_FLOOR = 1e-6  # fts5_aux.c: a term in more than half of the rows
COLUMNS = ("id", "title", "body", "applies_to")  # the fts table's, in order
_PLAIN = re.compile(r"[a-z0-9]+\Z")

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (FTS5 stores its sizes and totals with them)."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


@dataclass(frozen=True)
class Term:
    rows: Ints  # positions (rowid order) of the rows holding the term
    # The term's whole BM25 there: max(IDF, 1e-6) * ((f * (k1 + 1)) / (f + k1 * (1 - b +
    # b * D / avgdl))), each product the one fts5_aux.c makes (the IDF is the revision's).
    score: Floats


@dataclass(frozen=True)
class Terms:
    """Every term of the index (sorted, as FTS5 keeps them) and its rows and scores,
    slices of two arrays: after a load no Python object a term survives among the
    250,000 rows' temporaries, which would keep their heap from being freed (about
    45 MiB at 10,000 units, in every forked worker's shared pages too)."""

    words: npt.NDArray[np.str_]
    starts: Ints  # term n's rows and scores: [starts[n], starts[n + 1])
    rows: Ints
    score: Floats

    def __len__(self) -> int:
        return len(self.words)

    def get(self, token: str) -> Term | None:
        at = int(np.searchsorted(self.words, token))
        if at == len(self.words) or self.words[at] != token:
            return None
        start, end = self.starts[at : at + 2].tolist()
        return Term(self.rows[start:end], self.score[start:end])


@dataclass
class Postings:
    """One index file's lexical data, as of its ``revision``; immutable once loaded."""

    revision: str
    path: Path
    inode: int
    meta: dict[str, str]
    rows: int  # FTS5's row count (its IDF's N)
    ids: list[str]  # unit id per position; positions follow rowids
    rowids: list[int]
    terms: Terms
    kinds: Ints
    kind_codes: dict[str, int]
    languages: Ints
    language_names: list[str]
    purposes: dict[str, Ints]
    tables: dict[str, Ints]
    # Per position: what the name boost and a shown hit's matched fields read, analysed
    # once per revision (names.unit_names, _matchable).
    names: Names
    # Per position the unit's record, read here, not per search (a search's statements
    # each let the interpreter's lock go, and eight serving threads then queue for it).
    # One UTF-8 buffer, not 10,000 strings: a forked worker decodes the few it shows,
    # and the supervisor's pages stay shared (a string's reference count is written).
    texts: Packed
    id_order: Ints  # per position: its id's place in the ids' order (ties of a ranking)
    vector_rows: Ints | None = None  # positions of the units with a vector (the index's)
    vectors: npt.NDArray[np.float32] | None = None  # their vectors, one row each
    # A read-only connection to this file per serving thread, kept between searches: a
    # new connection parses the schema on its first statement (a third of a search).
    _local: threading.local = field(default_factory=threading.local)

    @classmethod
    def load(cls, path: Path, before: Postings | None = None) -> Postings | None:
        """The postings of the index at ``path``; None for an index this module does not
        rank (another format or analyzer) or one that changed while it was read.

        Read in short statements, not one transaction: another process's in-place update
        commits only between reads, and must not wait a whole load (its busy timeout is
        5 s).  Every update stamps a new revision, so the same revision (and file) at
        the end means no update committed in between."""
        inode = os.stat(path).st_ino
        with open_readonly(path) as con:
            found = cls._read(con, path, inode, FORMAT, before)
            after = con.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
        if found is None or after is None or after[0] != found.revision:
            return None
        return found if _inode(path) == inode else None

    @classmethod
    def _read(
        cls,
        con: sqlite3.Connection,
        path: Path,
        inode: int,
        fmt: str,
        before: Postings | None = None,
    ) -> Postings | None:
        meta = dict(con.execute("SELECT key, value FROM meta"))
        if meta.get("format") != fmt or meta.get("analyzer", "stem") != "stem":
            return None
        averages = con.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()
        counts = _varints(averages[0]) if averages else []
        if not counts:
            return None
        n_rows, total = counts[0], sum(counts[1:])
        units = con.execute(
            "SELECT rowid, id, kind, language, record FROM units ORDER BY rowid"
        ).fetchall()
        sizes = dict(con.execute("SELECT id, sz FROM fts_docsize"))
        texts = con.execute("SELECT rowid, title, body, applies_to FROM fts ORDER BY rowid")
        columns = {r: (t, b, a) for r, t, b, a in texts}
        rowids = [r for r, _, _, _, _ in units]
        if len(sizes) != n_rows or len(units) != n_rows or any(r not in sizes for r in rowids):
            return None  # fts and units must share rowids (format 2 on)
        if len(columns) != n_rows or any(r not in columns for r in rowids):
            return None
        position = {r: n for n, r in enumerate(rowids)}
        size = np.array([float(sum(_varints(sizes[r]))) for r in rowids], dtype=np.float64)
        avgdl = float(total) / float(n_rows) if n_rows else 1.0
        # C's order of operations, so every value is the one fts5_aux.c computes.
        norm = K1 * ((1 - B) + (B * size) / avgdl)
        terms = cls._terms(con, position, norm, n_rows)
        if terms is None:
            return None
        kinds, kind_codes = _codes([k for _, _, k, _, _ in units])
        langs, lang_codes = _codes([g for _, _, _, g, _ in units])
        by_id = {uid: position[r] for r, uid, _, _, _ in units}
        ids = list(by_id)
        return cls(
            meta.get("revision", ""),
            path,
            inode,
            meta,
            n_rows,
            ids,
            rowids,
            terms,
            kinds,
            kind_codes,
            langs,
            list(lang_codes),
            _grouped(con, "SELECT id, purpose FROM unit_purposes", by_id),
            _grouped(con, "SELECT id, tbl FROM unit_tables", by_id),
            Names(_analyses([(uid, rec, columns[r]) for r, uid, _, _, rec in units], before)),
            Packed([(record,) for _, _, _, _, record in units]),
            np.argsort(sorted(range(len(ids)), key=ids.__getitem__)),  # each id's place
            *(_vectors(con, by_id) or (None, None)),
        )

    @staticmethod
    def _terms(
        con: sqlite3.Connection, position: dict[int, int], norm: Floats, n_rows: int
    ) -> Terms | None:
        con.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.postings USING fts5vocab(main, fts, instance)"
        )
        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, row)")
        # bm25()'s weight of each column, as the SQL path passes them.
        pairs = zip(COLUMNS, COLUMN_WEIGHTS, strict=True)
        weight = " ".join(f"WHEN '{c}' THEN {float(w)!r}" for c, w in pairs)
        sql = (
            f"SELECT term, doc, sum(CASE col {weight} ELSE 0.0 END) FROM temp.postings "
            "WHERE term >= ?{} GROUP BY term, doc ORDER BY term, doc"
        )
        found: list[tuple[str, int, float]] = []
        for low, high in _term_ranges(con):  # one short read each (see load)
            if high is None:
                found += con.execute(sql.format(""), (low,)).fetchall()
            else:
                found += con.execute(sql.format(" AND term < ?"), (low, high)).fetchall()
        words: list[str] = []
        starts = [0]
        if any(d not in position for _, d, _ in found):
            return None  # a row the units did not hold: the index changed meanwhile
        docs = np.array([position[d] for _, d, _ in found], dtype=np.int64)
        freq = np.array([f for _, _, f in found], dtype=np.float64)
        part = (freq * (K1 + 1.0)) / (freq + norm[docs]) if len(found) else freq
        score = np.empty(len(found), dtype=np.float64)
        for end in range(1, len(found) + 1):
            start = starts[-1]
            if end == len(found) or found[end][0] != found[start][0]:
                held = end - start  # the rows holding the term
                idf = math.log((n_rows - held + 0.5) / (held + 0.5))
                kept = idf if idf > 0.0 else IDF_FLOOR
                score[start:end] = kept * part[start:end]
                words.append(found[start][0])
                starts.append(end)
        return Terms(np.array(words, dtype=np.str_), np.array(starts, dtype=np.int64), docs, score)

    # -- ranking ------------------------------------------------------------
    def allowed(
        self, kind: str | None, purpose: str | None, language: str | None, table: str | None
    ) -> npt.NDArray[np.bool_] | None:
        """The rows the filters keep (None: all), as ``sqlite_search._where`` says."""
        mask: npt.NDArray[np.bool_] | None = None

        def keep(rows: npt.NDArray[np.bool_]) -> None:
            nonlocal mask
            mask = rows if mask is None else mask & rows

        if kind:
            code = self.kind_codes.get(kind, -1)
            keep(self.kinds == code)
        if language:
            lang = language.lower()
            held = [
                n
                for n, tag in enumerate(self.language_names)
                if _ascii_lower(tag) == lang or _ascii_lower(tag)[: len(lang) + 1] == lang + "-"
            ]
            keep(np.isin(self.languages, held))
        for wanted, groups in ((purpose, self.purposes), (table, self.tables)):
            if wanted:
                rows = np.zeros(len(self.ids), dtype=np.bool_)
                rows[groups.get(wanted, np.zeros(0, dtype=np.int64))] = True
                keep(rows)
        return mask

    def top(
        self, phrases: list[str], allowed: npt.NDArray[np.bool_] | None, k: int
    ) -> list[tuple[str, float]] | None:
        """The ``k`` best rows for the OR of ``phrases`` (in the FTS query's order) as
        (unit id, BM25, higher is better), best first, ties by rowid; None when a phrase
        is not one plain token (FTS5 ranks that query)."""
        found = self._top(phrases, allowed, k)
        if found is None:
            return None
        ids = self.ids
        rows, scores = found
        return [(ids[r], s) for r, s in zip(rows.tolist(), scores.tolist(), strict=True)]

    def _top(
        self, phrases: list[str], allowed: npt.NDArray[np.bool_] | None, k: int
    ) -> tuple[Ints, Floats] | None:
        scores = np.zeros(len(self.ids), dtype=np.float64)
        matched = np.zeros(len(self.ids), dtype=np.bool_)
        for phrase in phrases:
            token = phrase.lower() if phrase.isascii() else ""
            if not _PLAIN.match(token):
                return None
            term = self.terms.get(token)
            if term is not None:
                scores[term.rows] += term.score
                matched[term.rows] = True
        if allowed is not None:
            matched &= allowed
        rows = np.flatnonzero(matched)
        chosen = scores[rows]
        if len(rows) > k:
            threshold = np.partition(chosen, len(rows) - k)[len(rows) - k]
            above = chosen > threshold
            tied = np.flatnonzero(chosen == threshold)[: k - int(above.sum())]
            keep = np.flatnonzero(above)
            pick = np.concatenate([keep, tied])
            rows, chosen = rows[pick], chosen[pick]
        order = np.lexsort((rows, -chosen))
        return rows[order], chosen[order]

    @contextlib.contextmanager
    def reading(
        self, connect: Callable[..., sqlite3.Connection] = sqlite3.connect
    ) -> Iterator[sqlite3.Connection | None]:
        """This thread's read-only connection to the file these postings were loaded
        from, kept for its next search (``connect``: the driver the index needs); None
        when the path names another file now (a rebuild)."""
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is None:
            con = connect(f"file:{quote(str(self.path))}?mode=ro", uri=True)
            if _inode(self.path) != self.inode:
                con.close()
                yield None
                return
            con.execute("PRAGMA cache_size = -512")  # KiB: one per serving thread
            self._local.con = con
        yield con

    @functools.cached_property
    def position(self) -> dict[str, int]:
        """Each unit id's position (made on the first hybrid search that needs it)."""
        return {uid: n for n, uid in enumerate(self.ids)}

    def records_of(self, ids: list[str]) -> dict[str, str]:
        """The records of ``ids`` (a hybrid search's dense-only candidates) from memory."""
        at = self.position
        return {uid: self.texts.get(at[uid], 0) for uid in ids if uid in at}

    def _reads(self, con: sqlite3.Connection) -> bool:
        """Does ``con`` read the file and revision these postings were loaded from?"""
        held = con.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
        return held is not None and held[0] == self.revision and _inode(self.path) == self.inode

    def dense(
        self, con: sqlite3.Connection, query: list[float], filters: Filters, k: int
    ) -> tuple[list[tuple[str, float]], str] | None:
        """``dense.ranked``'s hits from the vectors in memory: numpy finds the candidates,
        each is rescored by ``vectors.dot`` (the value both SQL paths give), best first,
        ties by id; None without vectors or when ``con`` reads another file."""
        vectors, rows = self.vectors, self.vector_rows
        if vectors is None or rows is None or len(query) != vectors.shape[1]:
            return None
        if not self._reads(con):
            return None
        allowed = self.allowed(filters.kind, filters.purpose, filters.language, filters.table)
        if allowed is not None:
            keep = allowed[rows]
            rows, vectors = rows[keep], vectors[keep]
        sims = vectors @ np.asarray(query, dtype=np.float32)
        if len(rows) > k:
            # numpy's float32 sums are within the margin of the exact ones: every unit of
            # the exact top k is a candidate, and each candidate is scored exactly.
            threshold = np.partition(sims, len(rows) - k)[len(rows) - k] - DENSE_MARGIN
            pick = np.flatnonzero(sims >= threshold)
        else:
            pick = np.arange(len(rows))
        ids = self.ids
        if _SUMS_IN_ORDER:  # dot's own products and sums, each candidate's row at once
            products = vectors[pick] * np.asarray(query)[None, :]
            # + 0.0: sum() starts from 0, so all -0.0 products give +0.0, not cumsum's -0.0
            exact = (np.cumsum(products, axis=1)[:, -1] + 0.0).tolist()
        else:
            exact = [dot(query, vectors[i].tolist()) for i in pick.tolist()]
        scored = [(sim, ids[r]) for sim, r in zip(exact, rows[pick].tolist(), strict=True)]
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [(uid, sim) for sim, uid in scored[:k]], "memory"

    def lexical(
        self, con: sqlite3.Connection, query: str, filters: Filters, depth: int, boost: float
    ) -> dict[str, LexicalRow] | None:
        """``sqlite_search._bm25_rows``'s rows (the ``depth`` best) of the index ``con``
        reads, ranked as ``_boosted`` ranks them (the same ranks and order; the bonuses
        of every candidate found at once, ``Names.bonus``).  None when ``con`` reads
        another file or revision than these postings', or the query is FTS5's to rank."""
        if not self._reads(con):
            return None
        phrases = [t for group in query_terms(query) for t in sorted(group)]
        allowed = self.allowed(filters.kind, filters.purpose, filters.language, filters.table)
        found = self._top(phrases, allowed, depth)
        if found is None:
            return None
        rows, scores = found
        best = scores.max() if len(scores) else 0.0
        base = scores / best if best > 0 else np.zeros(len(scores))
        ranks = base + self.names.bonus(Namer(query, boost), rows, self._record)
        order = np.lexsort((self.id_order[rows], -ranks))  # best first, ties by id
        said, ids = frozenset(p.lower() for p in phrases), self.ids
        picked = (rows[order].tolist(), scores[order].tolist(), ranks[order].tolist())
        return {
            ids[r]: LexicalRow("", bm25, "", "", "", rank, _Row(self, con, r, said, query))
            for r, bm25, rank in zip(*picked, strict=True)
        }

    def _record(self, row: int) -> IndexRecord:
        return IndexRecord(json.loads(self.texts.get(row, 0)))


class Names:
    """Every unit's ``UnitNames`` and ``_matchable`` fields, packed (``Packed``: a forked
    worker touches none of the supervisor's objects to read them), and each name's words
    as ids in arrays: the units a question names in full are found for every candidate
    at once, and a unit's quoted values are decoded only if it holds some."""

    def __init__(self, rows: list[tuple[str, ...]]) -> None:
        """``rows``: each unit's ``UnitNames`` packed (``_packed``) and ``_matchable``."""
        self.packed = Packed(rows)
        held = [words.split(_NAME) if words else [] for words, _, _ in rows]
        per_name = [name.split(_WORD) for names in held for name in names]
        self.unit = np.repeat(np.arange(len(rows)), [len(names) for names in held])
        self.sizes = np.array([len(words) for words in per_name], dtype=np.int64)
        self.words = np.array(sorted({w for words in per_name for w in words}), dtype=np.str_)
        at = {w: i for i, w in enumerate(self.words.tolist())}
        found = np.fromiter((at[w] for words in per_name for w in words), dtype=np.int64)
        order = np.argsort(found, kind="stable")  # by word, then name
        self.names = np.repeat(np.arange(len(per_name)), self.sizes)[order]
        self.starts = np.searchsorted(found[order], np.arange(len(self.words) + 1))
        self.literals = np.array([bool(values) for _, values, _ in rows], dtype=np.bool_)

    def named(self, stems: frozenset[str]) -> npt.NDArray[np.bool_]:
        """Per position: does a question of these stems say one of the unit's names in
        full (as many of the name's words said as it has: ``words <= stems``)?"""
        out = np.zeros(len(self.literals), dtype=np.bool_)
        if not len(self.words):
            return out
        asked = np.array(sorted(stems), dtype=np.str_)
        at = np.minimum(np.searchsorted(self.words, asked), len(self.words) - 1)
        at = at[self.words[at] == asked]  # the stems some name holds, each once
        if len(at):
            starts = self.starts
            held = np.concatenate([self.names[starts[i] : starts[i + 1]] for i in at.tolist()])
            count = np.bincount(held, minlength=len(self.sizes))  # each name's words said
            out[self.unit[count == self.sizes]] = True
        return out

    def bonus(self, namer: Namer, rows: Ints, record: Callable[[int], IndexRecord]) -> Floats:
        """``namer.bonus`` of the units at ``rows`` (``record``: a unit's, read only when
        the question quotes a value its quoted values do not say)."""
        named = self.named(namer.stems)[rows]
        out = np.where(named, namer.boost, 0.0)
        for i in np.flatnonzero(self.literals[rows] | bool(namer.asked)).tolist():
            row = int(rows[i])
            held = self.packed.get(row, 1)
            values = held.split(_NAME) if held else ()
            out[i] = namer.bonus_from(bool(named[i]), values, functools.partial(record, row))
        return out


# Separators of packed names and fields: analysed words and folded values hold no controls.
_NAME, _WORD = "\x1e", "\x1f"
_RUN = re.compile("[A-Za-z0-9]+")  # what the marks of an ASCII column fall on


def _packed(names: UnitNames) -> tuple[str, str]:
    return _NAME.join(_WORD.join(sorted(w)) for w in names.words), _NAME.join(names.literals)


def _matchable(record: IndexRecord, columns: tuple[str, str, str]) -> str:
    """What ``sqlite_hits._matched`` reads of a unit, worked out once: each field it may
    name (title, payload and applies_to fields, in its order) with the words a question
    must say for it to, lower-cased (the title column's words; a field's analysed words
    that are whole words of its column, where highlight() puts its marks).  "" for a unit
    whose columns are not all ASCII (FTS5 folds them: ``_Row.marked``)."""
    title, body, applies = columns
    if not "".join(columns).isascii():
        return ""
    out = ["title" + _WORD + " ".join(sorted({w.lower() for w in _RUN.findall(title)}))]
    for column, section, prefix in (
        (body, record.payload, ""),
        (applies, record.applies_to, "applies_to."),
    ):
        runs = set(_RUN.findall(column))
        for key, value in section.items():
            words = runs.intersection(analyse("\n".join(flatten(value)), record.language).split())
            out.append(prefix + key + _WORD + " ".join(sorted({w.lower() for w in words})))
    packed = _NAME.join(out)  # a field name holding a separator: FTS5's marks, as above
    return packed if packed.count(_NAME) + 1 == packed.count(_WORD) == len(out) else ""


class _Row:
    """A ranked row's record and matched fields (``LexicalRow.source``), worked out when
    first asked: a search ranks and boosts 100 rows and shows 10."""

    __slots__ = ("_con", "_position", "_postings", "_query", "_said")

    def __init__(
        self,
        postings: Postings,
        con: sqlite3.Connection,
        position: int,
        said: frozenset[str],
        query: str,
    ) -> None:
        self._postings, self._con, self._position = postings, con, position
        self._said, self._query = said, query  # the query's tokens, lower-cased

    def record(self) -> str:
        return self._postings.texts.get(self._position, 0)

    def marked(self) -> tuple[str, str, str]:
        args: list[SqlArg] = [_stem_query(self._query), self._postings.ids[self._position]]
        got = self._con.execute(
            "SELECT highlight(fts, 1, char(1), char(2)), highlight(fts, 2, char(1), "
            "char(2)), highlight(fts, 3, char(1), char(2)) FROM fts "
            "WHERE fts MATCH ? AND fts.id = ?",
            args,
        ).fetchone()
        return (got[0] or "", got[1] or "", got[2] or "") if got else ("", "", "")

    def matched(self, record: IndexRecord) -> list[str]:
        """``_matched``'s fields of the row, from its ``_matchable`` analysis."""
        fields = self._postings.names.packed.get(self._position, 2)
        if not fields:
            return _matched(record, "stem", *self.marked())
        said = self._said
        parts = (field.partition(_WORD) for field in fields.split(_NAME))
        return [name for name, _, words in parts if not said.isdisjoint(words.split())]


def _analyses(
    units: list[tuple[str, str, tuple[str, str, str]]], before: Postings | None
) -> list[tuple[str, ...]]:
    """Every unit's ``UnitNames``, packed, and its ``_matchable`` fields (``units``: id,
    record and FTS columns), each name or field text analysed once (tables and columns
    recur: a memo of this load's own, not ``_name_words``'s bounded cache); a unit whose
    record is the ``before`` postings' own takes theirs (an activation changes a few
    units: most of a load's time is this analysis)."""
    memo: dict[tuple[str, str], tuple[str, ...]] = {}
    held = {uid: n for n, uid in enumerate(before.ids)} if before is not None else {}

    def analysed(text: str, language: str) -> tuple[str, ...]:
        key = (text, language)
        found = memo.get(key)
        if found is None:
            found = memo[key] = tuple(analyse(text, language).split())
        return found

    records = before.texts.column(0) if before is not None else []
    out: list[tuple[str, ...]] = []
    for uid, record, columns in units:
        n = held.get(uid)
        if before is not None and n is not None and records[n] == record:
            out.append(before.names.packed.row(n))
        else:
            unit = IndexRecord(json.loads(record))
            out.append((*_packed(unit_names(unit, analysed)), _matchable(unit, columns)))
    return out


class Packed:
    """Rows of strings (the same number each) in one UTF-8 buffer with their offsets: a
    row's string is decoded when asked for, a new object of the asker's own.  A server's
    forked workers read them without writing to the pages they share (a string object's
    reference count is written whenever it is read)."""

    def __init__(self, rows: Sequence[tuple[str, ...]], keys: list[str] | None = None) -> None:
        self.width = len(rows[0]) if rows else 1
        parts = [s.encode() for row in rows for s in row]
        self.ends = array.array("q", itertools.accumulate(map(len, parts), initial=0))
        self.blob = b"".join(parts)
        self.keys = np.array(keys or [], dtype=np.str_)  # sorted, one a row (``find``)

    def find(self, key: str) -> int | None:
        """The row of ``key`` (None: no such key)."""
        at = int(np.searchsorted(self.keys, key))
        return at if at < len(self.keys) and self.keys[at] == key else None

    def get(self, row: int, field: int) -> str:
        at = row * self.width + field
        return self.blob[self.ends[at] : self.ends[at + 1]].decode()

    def row(self, row: int) -> tuple[str, ...]:
        ends = self.ends[row * self.width : (row + 1) * self.width + 1]
        return tuple(self.blob[a:b].decode() for a, b in itertools.pairwise(ends))

    def column(self, field: int) -> list[str]:
        """Every row's ``field``."""
        ends, blob = self.ends, self.blob
        return [
            blob[ends[i] : ends[i + 1]].decode() for i in range(field, len(ends) - 1, self.width)
        ]


_CHUNK = 50_000  # postings per read of the vocabulary


def _term_ranges(con: sqlite3.Connection) -> list[tuple[str, str | None]]:
    """Ranges [low, high) of the index's terms holding about ``_CHUNK`` postings each
    (the last one open)."""
    bounds: list[str] = []
    held = 0
    for term, docs in con.execute("SELECT term, doc FROM temp.vocab ORDER BY term"):
        if not bounds or held >= _CHUNK:
            bounds.append(term)
            held = 0
        held += docs
    highs: list[str | None] = [*bounds[1:], None]
    return list(zip(bounds, highs, strict=True))


def _vectors(
    con: sqlite3.Connection, position: dict[str, int]
) -> tuple[Ints, npt.NDArray[np.float32]] | None:
    """The index's unit vectors (float32 blobs, as stored: the values ``vectors.dot``
    multiplies) as the rows of a matrix."""
    if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone():
        return None
    found = con.execute("SELECT id, vec FROM vectors").fetchall()
    sizes = {len(blob) for _, blob in found}
    if len(sizes) != 1 or any(uid not in position for uid, _ in found):
        return None
    dim = sizes.pop() // 4
    matrix = np.frombuffer(b"".join(blob for _, blob in found), dtype="<f4").reshape(-1, dim)
    rows = np.array([position[uid] for uid, _ in found], dtype=np.int64)
    order = np.argsort(rows)
    return rows[order], np.ascontiguousarray(matrix[order])


def _ascii_lower(text: str) -> str:
    """SQLite's lower(): ASCII letters only."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _codes(values: list[str]) -> tuple[Ints, dict[str, int]]:
    """Each value's small integer code (first seen, first numbered), and the codes."""
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(v, len(codes)) for v in values], dtype=np.int64), codes


def _grouped(con: sqlite3.Connection, sql: str, by_id: dict[str, int]) -> dict[str, Ints]:
    groups: dict[str, list[int]] = {}
    for uid, value in con.execute(sql):
        if uid in by_id:
            groups.setdefault(value, []).append(by_id[uid])
    return {k: np.array(sorted(set(v)), dtype=np.int64) for k, v in groups.items()}


class PostingsCache:
    """The postings of one index path, for the revision it serves now: loaded in a
    background thread the first time a revision is asked for (searches meanwhile go to
    FTS5, which ranks the same), and replaced when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held: Postings | None = None
        self._loading = False
        self._tried: tuple[int, int, int, int] | None = None  # the file state last loaded
        self._lock = threading.Lock()
        self.loads = 0  # tests count them

    def get(self, revision: str, load: bool = True) -> Postings | None:
        """The postings of ``revision`` if they are loaded; else None, and (``load``) a
        load starts unless this state of the file was loaded already (or failed to)."""
        held = self._held
        if held is not None and held.revision == revision:
            return held
        if not load:
            return None
        key = _stat_key(self.path)
        with self._lock:
            if self._loading or key is None or key == self._tried:
                return None
            self._loading, self._tried = True, key
        threading.Thread(target=self._load, daemon=True).start()
        return None

    def load_now(self) -> bool:
        """Load the file's postings in this thread, now (a server about to fork its
        workers: they share what it read, and no loader thread is mid-way); False if
        this state of the file was loaded already (or failed to)."""
        key = _stat_key(self.path)
        with self._lock:
            if key is None or key == self._tried:
                return False
            self._loading, self._tried = True, key
        self._load()
        return True

    def holds(self, revision: str) -> bool:
        """Are ``revision``'s postings loaded (a search needs no file)?"""
        held = self._held
        return held is not None and held.revision == revision

    def _load(self) -> None:
        try:
            found = Postings.load(self.path, self._held)
        except (OSError, sqlite3.Error, KeyError, IndexError, ValueError) as exc:
            logging.getLogger("evidence_tool.serve").warning(
                "the index's postings did not load (%s); FTS5 ranks the searches", exc
            )
            found = None
        with self._lock:
            self._loading = False
            self.loads += 1
            if found is not None:
                self._held = found  # the previous ones' connections close with them
        if found is not None:
            give_back()


def give_back() -> None:
    """Hand the heap the replaced postings freed back to the system: glibc keeps it
    otherwise (25 MiB of a 10,000-unit revision's, each switch)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _inode(path: Path) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return -1


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
