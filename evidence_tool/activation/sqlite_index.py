"""The embedded default backend: an SQLite FTS5 index in ``.evidence-cache/index.sqlite``.

Each activation writes the index for one revision into a new file and swaps it
in with one rename, so a failed or killed build leaves the previous index
serving searches.  When the published index holds exactly the previous active
snapshot (checked id by content hash), the new file starts as a copy of it and
only the units whose manifest entries changed are deleted and inserted: a
one-unit change costs a file copy, not a parse of every unit.  Anything else
(no index, another format, drift) builds from scratch.  BM25 ranks title,
field text and applies_to, stored as stems with stop words dropped (analysis.py):
a question's content words match their inflections, in English and Italian.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from evidence_tool import __version__, fsio
from evidence_tool.activation import vec
from evidence_tool.activation.analysis import analyse, query_language, query_terms
from evidence_tool.activation.dense import (
    FUSION_DEPTH,
    delete_vector,
    index_model,
    ranked,
    write_vectors,
)
from evidence_tool.activation.fusion import DEFAULT as DEFAULT_FUSION
from evidence_tool.activation.fusion import Fusion, fuse
from evidence_tool.activation.names import NAME_BOOST, named, query_stems
from evidence_tool.activation.prebuild import Prebuild
from evidence_tool.activation.records import (
    Hit,
    IndexRecord,
    Scoring,
    SearchResult,
    index_records,
)
from evidence_tool.archive.snapshot import Snapshot, load_snapshot
from evidence_tool.embedding import DenseEmbedder, serves
from evidence_tool.embedding.cache import EmbeddingCache
from evidence_tool.embedding.text import flatten as _flatten
from evidence_tool.errors import (
    ActivationError,
    EmbeddingError,
    EvidenceError,
    EvidenceWarning,
    IntegrityError,
    NotReadyError,
    UsageError,
)
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

if TYPE_CHECKING:
    from evidence_tool.activation.postings import Postings

INDEX_NAME = "index.sqlite"
SqlArg = str | int  # a bound parameter of the filters' SQL
# Beside the index: the revision it holds and the file's (size, mtime, ctime, inode) when
# that was last proven, so a no-op consolidate need not read every row (see holds()).
STAMP_NAME = "index.sqlite.stamp"
# The index `init` builds for its baseline, adopted by the activation of that revision.
PREPARED_NAME = "index.sqlite.prepared"
RACY_NS = 1_000_000_000  # a stamp taken this soon after the file changed is not trusted
# Format 2: an fts row shares its unit's rowid and the side tables are indexed by id, so
# one unit's rows can be replaced without scanning; records hold no revision (the meta
# row does), so unchanged rows stay valid from one revision to the next.
# Format 3: the fts columns hold analysed text (stems, no stop words), so an index of
# format 2 (exact tokens) would be misread by a stemmed query: it is rebuilt, never read.
FORMAT = "3"
# "stem" is the index every command builds; "exact" is format 2's analysis (unicode61
# tokens, AND then OR), kept so that eval can measure what stemming changed.
ANALYZERS = ("stem", "exact")
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE units(id TEXT PRIMARY KEY, kind TEXT NOT NULL, language TEXT NOT NULL,
                   title TEXT NOT NULL, provenance_kind TEXT NOT NULL,
                   content_hash TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE unit_purposes(id TEXT NOT NULL, purpose TEXT NOT NULL);
CREATE INDEX unit_purposes_id ON unit_purposes(id);
CREATE TABLE unit_tables(id TEXT NOT NULL, tbl TEXT NOT NULL);
CREATE INDEX unit_tables_id ON unit_tables(id);
CREATE VIRTUAL TABLE fts USING fts5(id UNINDEXED, title, body, applies_to,
                                    tokenize = 'unicode61 remove_diacritics 2');
"""


def _tables_of(record: IndexRecord) -> set[str]:
    """Tables a unit is about: applies_to tables and columns, mapping/formula/enum payload."""
    applies, payload = record.applies_to, record.payload
    tables = set(_strs(applies.get("tables"))) | set(_strs(payload.get("tables")))
    columns = _strs(applies.get("columns")) + _strs(payload.get("columns"))
    column = payload.get("column")
    if isinstance(column, str):
        columns.append(column)
    tables |= {c.rsplit(".", 1)[0] for c in columns if c.count(".") >= 2}
    return {t.lower() for t in tables}


def _strs(value: JsonValue) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


@contextlib.contextmanager
def open_readonly(
    path: Path, connect: Callable[..., sqlite3.Connection] = sqlite3.connect
) -> Iterator[sqlite3.Connection]:
    """A read-only connection; the path is URI-quoted, so '#', '?' or '%' in it are names."""
    con = connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    try:
        yield con
    finally:
        con.close()


def _fts_text(text: str, language: str, analyzer: str) -> str:
    return analyse(text, language) if analyzer == "stem" else text


def _insert(con: sqlite3.Connection, r: IndexRecord, analyzer: str = "stem") -> None:
    lang = r.language
    cur = con.execute(
        "INSERT INTO units VALUES (?,?,?,?,?,?,?)",
        (
            r.id,
            r.kind,
            r.language,
            r.title,
            r.provenance_kind,
            r.content_hash,
            json.dumps(r.stored(), ensure_ascii=False, sort_keys=True),
        ),
    )
    con.executemany("INSERT INTO unit_purposes VALUES (?,?)", [(r.id, p) for p in r.purposes])
    con.executemany(
        "INSERT INTO unit_tables VALUES (?,?)", [(r.id, t) for t in sorted(_tables_of(r))]
    )
    con.execute(
        "INSERT INTO fts(rowid, id, title, body, applies_to) VALUES (?,?,?,?,?)",
        (
            cur.lastrowid,
            r.id,
            _fts_text(r.title, lang, analyzer),
            _fts_text("\n".join(_flatten(r.payload)), lang, analyzer),
            _fts_text(" ".join(_flatten(r.applies_to)), lang, analyzer),
        ),
    )


# json.dumps(..., ensure_ascii=False, sort_keys=True) builds this encoder at every call.
_STORED = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_BATCH = 512  # rows per executemany: fewer calls, a bounded list (50,000 units fit in memory)


def _insert_new(con: sqlite3.Connection, records: Iterable[IndexRecord], analyzer: str) -> None:
    """``_insert``'s rows for a new file, a batch of units per statement: rowids are
    given (1, 2, ...: what ``_insert`` gets in an empty file), so fts and units share them."""
    batch: list[IndexRecord] = []
    rowid = 0
    for r in records:
        batch.append(r)
        if len(batch) == _BATCH:
            _insert_batch(con, batch, rowid, analyzer)
            rowid += len(batch)
            batch = []
    _insert_batch(con, batch, rowid, analyzer)


def _insert_batch(
    con: sqlite3.Connection, batch: list[IndexRecord], rowid: int, analyzer: str
) -> None:
    units, purposes, tables, fts = [], [], [], []
    for n, r in enumerate(batch, rowid + 1):
        lang = r.language
        units.append(
            (
                n,
                r.id,
                r.kind,
                lang,
                r.title,
                r.provenance_kind,
                r.content_hash,
                _STORED.encode(r.stored()),
            )
        )
        purposes += [(r.id, p) for p in r.purposes]
        tables += [(r.id, t) for t in sorted(_tables_of(r))]
        fts.append(
            (
                n,
                r.id,
                _fts_text(r.title, lang, analyzer),
                _fts_text("\n".join(_flatten(r.payload)), lang, analyzer),
                _fts_text(" ".join(_flatten(r.applies_to)), lang, analyzer),
            )
        )
    con.executemany(
        "INSERT INTO units(rowid, id, kind, language, title, provenance_kind, content_hash, "
        "record) VALUES (?,?,?,?,?,?,?,?)",
        units,
    )
    con.executemany("INSERT INTO unit_purposes VALUES (?,?)", purposes)
    con.executemany("INSERT INTO unit_tables VALUES (?,?)", tables)
    con.executemany("INSERT INTO fts(rowid, id, title, body, applies_to) VALUES (?,?,?,?,?)", fts)


def _delete(con: sqlite3.Connection, unit_id: str) -> None:
    row = con.execute("SELECT rowid FROM units WHERE id = ?", (unit_id,)).fetchone()
    if row is None:
        return
    con.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
    con.execute("DELETE FROM units WHERE rowid = ?", (row[0],))
    con.execute("DELETE FROM unit_purposes WHERE id = ?", (unit_id,))
    con.execute("DELETE FROM unit_tables WHERE id = ?", (unit_id,))
    delete_vector(con, unit_id)


def _stamp(con: sqlite3.Connection, revision: str, analyzer: str = "stem") -> int:
    n = int(con.execute("SELECT count(*) FROM units").fetchone()[0])
    con.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?,?)",
        # The tool version too: records made by another version are never carried over.
        [
            ("revision", revision),
            ("format", FORMAT),
            ("tool", __version__),
            ("units", str(n)),
            ("analyzer", analyzer),
        ],
    )
    return n


def build_index(
    path: Path, revision: str, records: Iterable[IndexRecord | JsonObject], analyzer: str = "stem"
) -> int:
    """Write a complete index for ``revision`` at ``path`` (a new file)."""
    return _write(path, revision, records, lambda con: con.executescript(_SCHEMA), analyzer)


def update_in_place(
    path: Path,
    revision: str,
    drop: set[str],
    records: Iterable[IndexRecord | JsonObject],
    finish: Callable[[sqlite3.Connection], object],
) -> int:
    """Turn the published index at ``path`` into ``revision``'s in one transaction: the
    rows of the units ``drop`` names are deleted (``_delete``), ``records`` inserted
    (``_insert``: every row of one unit), ``finish`` brings the rest along (vectors).

    SQLite's rollback journal makes it all or nothing: readers see the previous revision
    until the commit, and a process killed halfway leaves a hot journal, which the next
    activation rolls back (``SqliteBackend._recover``) before it updates again.
    """
    # The driver that loads sqlite-vec only for an index that holds vec_units: probing for
    # it imports numpy, most of what one edit's activation cost over a no-op (issue 20).
    connect = vec.connect if vec.META_KEY in (index_meta(path) or {}) else sqlite3.connect
    con = connect(path)
    con.isolation_level = None
    try:
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute("PRAGMA synchronous=FULL")  # the journal, then the file, reach the disk
        con.execute("BEGIN IMMEDIATE")
        try:
            for unit_id in sorted(drop):
                _delete(con, unit_id)
            for r in index_records(records):
                _insert(con, r)
            finish(con)
            n = _stamp(con, revision)
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        return n
    finally:
        con.close()


def _write(
    path: Path,
    revision: str,
    records: Iterable[IndexRecord | JsonObject],
    start: Callable[[sqlite3.Connection], object],
    analyzer: str = "stem",
) -> int:
    con = sqlite3.connect(path)  # vec_units, if wanted, come after (_embed, vec.connect)
    try:
        # No rollback journal: the file is unpublished until complete, and a killed
        # build must leave nothing but its one temp file (which the next build removes).
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")  # publish() fsyncs the finished file
        start(con)
        _insert_new(con, index_records(records), analyzer)
        n = _stamp(con, revision, analyzer)
        con.commit()
        return n
    finally:
        con.close()


class SqliteBackend:
    """Activation callable: build the candidate's index, then swap it in atomically."""

    def __init__(self, layout: Layout, embedder: DenseEmbedder | None = None) -> None:
        self.layout = layout
        self.embedder = embedder
        self.cache: EmbeddingCache | None = None  # the last activation's (tests count it)
        self._prebuild: Prebuild | None = None  # a full build started by begin()

    @property
    def path(self) -> Path:
        return self.layout.cache / INDEX_NAME

    def holds(self, snapshot: Snapshot) -> bool:
        """True when the index is this revision's and holds its units, id by content hash.

        Checking the rows, not only the revision stamp, lets ``consolidate`` repair
        an index that ``verify --index`` reports as drifted (E702).  Rows once proven
        are not read again while the file keeps its size, times and inode, as the stat
        cache trusts curated files: any write to the file (a tampered row) moves them.
        """
        if self._stamped() == snapshot.revision:
            return True
        meta = index_meta(self.path) or {}
        if (meta.get("revision"), meta.get("format")) != (snapshot.revision, FORMAT):
            return False  # another revision, or a format this version must not read
        if meta.get("embedding") != self._model_id():
            return False  # vectors of another model (or none wanted): re-activate
        if meta.get(vec.META_KEY) != vec.wanted(self._model_id()):
            return False  # sqlite-vec came or went: the index gains or loses vec_units
        held = index_entries(self.path) == {e.id: e.content_hash for e in snapshot.entries()}
        file_id = self._file_id()
        if held and file_id is not None and file_id[2] < time.time_ns() - RACY_NS:
            # Only a stamp the next run will trust is worth writing: a no-op writes nothing
            # until then, and once after (as the stat cache promotes racily clean files).
            self._stamp(snapshot.revision)
        return held

    @property
    def stamp_path(self) -> Path:
        return self.layout.cache / STAMP_NAME

    def _file_id(self) -> list[int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]

    def _stamped(self) -> str | None:
        """The revision the stamp vouches for, if the index file is the one stamped and the
        stamp was written after the file's last change (a racily clean file is read)."""
        try:
            with open(self.stamp_path, "rb") as f:
                written = os.fstat(f.fileno()).st_mtime_ns
                stamp = json.loads(f.read())
            revision, file_id, taken = stamp["revision"], stamp["file"], stamp["taken_ns"]
        except (OSError, ValueError, TypeError, KeyError):
            return None
        # The format too: an index stamped by a build of another format is read again.
        if (stamp.get("tool"), stamp.get("format")) != (__version__, FORMAT) or (
            file_id != self._file_id()
        ):
            return None
        if stamp.get("embedding") != self._model_id():
            return None  # it vouched for the vectors of another model
        if stamp.get(vec.META_KEY) != vec.wanted(self._model_id()):
            return None
        if not isinstance(revision, str) or not isinstance(taken, int):
            return None
        # Racily clean unless the index last changed strictly before the stamp was written,
        # by the filesystem's own clock (git's rule for its index: the stamp file's mtime),
        # or well before the stamp was taken by the wall clock.  A later write to the index
        # gets a change time no older than the stamp file's: it no longer matches.
        return revision if file_id[2] < written or file_id[2] < taken - RACY_NS else None

    def _stamp(self, revision: str) -> None:
        file_id = self._file_id()
        if file_id is not None:
            stamp = {"revision": revision, "file": file_id, "taken_ns": time.time_ns()}
            stamp["embedding"] = self._model_id()
            stamp[vec.META_KEY] = vec.wanted(self._model_id())
            data = json.dumps({**stamp, "tool": __version__, "format": FORMAT}).encode()
            fsio.write_atomic(self.stamp_path, data, durable=False)  # derived: never fsynced

    def warnings(self) -> list[EvidenceWarning]:
        """W702 when the index is to hold vectors and the installed sqlite-vec cannot load."""
        found = vec.probe().warning() if self.embedder else None
        return [found] if found else []

    def _model_id(self) -> str | None:
        """The model whose vectors the index must hold (None: no vectors)."""
        return self.embedder.model_id if self.embedder else None

    def begin(self, snapshot: Snapshot) -> None:
        """Start building ``snapshot``'s index in a child while the caller writes the
        snapshot (prebuild.py), when its activation will build one from scratch; the
        activation joins it.  Never fails: without a child, the activation builds it."""
        self.cancel()
        try:
            if not self._full_build_ahead(snapshot):
                return
        except Exception:  # whatever it is, the activation meets it again and reports it
            return
        tmp = self.layout.cache / f".{INDEX_NAME}.{secrets.token_hex(6)}.tmp"
        # Vectors come from the embedding service: the parent asks it, after the join.
        local = self.embedder is None
        self._prebuild = Prebuild.start(
            tmp, snapshot.revision, lambda: self._build(tmp, snapshot, vectors=local)
        )

    def cancel(self) -> None:
        """Stop a build begin() started and remove its file (the run failed before its
        activation); a no-op once the activation took it."""
        prebuild, self._prebuild = self._prebuild, None
        if prebuild is not None:
            _give_up(prebuild)

    def _full_build_ahead(self, snapshot: Snapshot) -> bool:
        """Will activating ``snapshot`` build its index from scratch, with no index to
        adopt, recover or update?  Asked before the snapshot is written, without writing.
        Only when no index is published (the first consolidate): deciding for an existing
        one reads its rows, which an edit's activation then reads again."""
        if os.path.lexists(self.path):
            return False
        self.layout.require_contained()  # the child's SQLite writes past fsio's check
        journal = self.path.with_name(self.path.name + "-journal")
        return (
            self.layout.cache.is_dir()
            and not journal.exists()
            and not self.prepared_path.exists()
            and self._changed_since_index(snapshot) is None
        )

    def __call__(self, snapshot: Snapshot) -> None:
        prebuild, self._prebuild = self._prebuild, None
        if prebuild is not None and prebuild.revision != snapshot.revision:
            _give_up(prebuild)  # begun for another candidate
            prebuild = None
        try:
            self._activate(snapshot, prebuild)
        except BaseException:
            if prebuild is not None:
                _give_up(prebuild)
            raise

    def _activate(self, snapshot: Snapshot, prebuild: Prebuild | None) -> None:
        # SQLite writes its file itself, past fsio's containment: the one rule (E108) again,
        # under the lock, right before it writes.
        self.layout.require_contained()
        cache = ensure_cache(self.layout)
        # A build killed earlier leaves its temp file (and, before journal_mode=OFF, a
        # '-journal' beside it); the archive lock makes us the only builder (but for the
        # child begin() started, building its own file).
        ours = prebuild.tmp if prebuild is not None else None
        for stale in cache.glob(f".{INDEX_NAME}.*.tmp*"):
            if stale != ours:
                fsio.unlink(stale, missing_ok=True)
        tmp = ours or cache / f".{INDEX_NAME}.{secrets.token_hex(6)}.tmp"
        try:
            self._recover()
            if self._adopt(snapshot):
                return
            drop = self._changed_since_index(snapshot)
            fsio.unlink(self.stamp_path, missing_ok=True)  # vouches for the old file only
            if drop is not None:
                # The changed units' rows, in the published file: the cost of the change,
                # not a copy of the whole index.
                records = snapshot.records(drop)  # the changed units still there
                update_in_place(self.path, snapshot.revision, drop, records, self._vectors)
            else:
                if prebuild is None or not prebuild.join():
                    fsio.discard_temp(tmp)  # what a failed child left: built again here
                    self._build(tmp, snapshot)
                elif self.embedder is not None:
                    self._embed(tmp)
                fsio.publish(tmp, self.path)
            self._stamp(snapshot.revision)
        except EmbeddingError as exc:
            raise ActivationError(f"embedding the units failed: {exc}") from None
        except vec.errors() as exc:
            raise ActivationError(f"building the search index failed: {exc}") from None
        finally:
            if prebuild is not None:
                prebuild.cancel()  # not joined (an adoption, an update, a failure): stopped
            # Gone after a publish; left by a failed build (the previous index keeps serving).
            fsio.unlink(tmp, missing_ok=True)

    @property
    def prepared_path(self) -> Path:
        return self.layout.cache / PREPARED_NAME

    def prepare(self, snapshot: Snapshot) -> None:
        """Build ``snapshot``'s index beside the published one, for its activation to adopt
        (``init`` builds its baseline's: work moved, not skipped)."""
        if self.embedder is not None:
            return  # init stays offline: the activation calls the embedding service
        self.layout.require_contained()
        tmp = ensure_cache(self.layout) / f".{INDEX_NAME}.{secrets.token_hex(6)}.tmp"
        try:
            self._build(tmp, snapshot)
            fsio.publish(tmp, self.prepared_path)
        finally:
            fsio.unlink(tmp, missing_ok=True)

    def _adopt(self, snapshot: Snapshot) -> bool:
        """Publish the prepared index if it holds ``snapshot`` exactly: its meta rows (this
        tool's format and analyser, the model of its vectors) and every unit, id by content
        hash, as holds() checks the published one.  Any other prepared index is deleted."""
        prepared = self.prepared_path
        if not prepared.exists():
            return False
        meta = index_meta(prepared) or {}
        wanted = (snapshot.revision, FORMAT, __version__, "stem", self._model_id())
        keys = ("revision", "format", "tool", "analyzer", "embedding")
        adopt = tuple(meta.get(k) for k in keys) == wanted and index_entries(prepared) == {
            e.id: e.content_hash for e in snapshot.entries()
        }
        if adopt:
            fsio.unlink(self.stamp_path, missing_ok=True)
            fsio.publish(prepared, self.path)
            self._stamp(snapshot.revision)
        else:
            fsio.unlink(prepared, missing_ok=True)
        return adopt

    def _build(self, tmp: Path, snapshot: Snapshot, *, vectors: bool = True) -> None:
        """``snapshot``'s whole index in the new file ``tmp``, with its vectors if asked."""
        build_index(tmp, snapshot.revision, snapshot.records())
        if vectors:
            self._embed(tmp)

    def _embed(self, tmp: Path) -> None:
        """Give every unit of the unpublished index its vector (cached by content)."""
        con = vec.connect(tmp)
        try:
            self._vectors(con)
            con.commit()
        finally:
            con.close()

    def _vectors(self, con: sqlite3.Connection) -> None:
        """The vectors of the units that have none (or none of this model), by content."""
        self.cache = (
            EmbeddingCache(self.layout.cache / "embeddings", self.embedder)
            if self.embedder
            else None
        )
        write_vectors(con, self.embedder, self.cache)

    def _recover(self) -> None:
        """A journal beside the index is an in-place update killed halfway: a read-write
        open rolls it back (read-only readers cannot).  An index that cannot be recovered
        goes, journal last, so that no journal outlives the file it belongs to."""
        journal = self.path.with_name(self.path.name + "-journal")
        if not journal.exists():
            return
        try:
            con = sqlite3.connect(self.path)
            try:
                con.execute("SELECT count(*) FROM meta").fetchone()
            finally:
                con.close()
        except sqlite3.Error:
            fsio.unlink(self.path, missing_ok=True)
        fsio.unlink(journal, missing_ok=True)

    def _changed_since_index(self, snapshot: Snapshot) -> set[str] | None:
        """Ids whose rows must be replaced to turn the published index into
        ``snapshot``'s, or None when only a full build is safe (or cheaper)."""
        meta = index_meta(self.path)
        if (
            meta is None
            or (meta.get("format"), meta.get("tool"), meta.get("analyzer"))
            != (FORMAT, __version__, "stem")
            or meta.get("revision") in (None, snapshot.revision)  # asked to rebuild it
            or not vec.can_update(meta)
        ):
            return None
        prev = snapshot.previous
        if prev is None or prev.revision != meta["revision"]:
            try:
                prev = load_snapshot(self.layout.snapshots, snapshot.objects, meta["revision"])
            except (EvidenceError, ValueError):
                return None
        # A stamp proves the rows as holds() does; else they are read and compared.
        if self._stamped() != prev.revision and index_entries(self.path) != {
            e.id: e.content_hash for e in prev.entries()
        }:
            return None  # drifted from its snapshot: never carry a drift forward
        if snapshot.changed is not None and prev is snapshot.previous:
            drop = set(snapshot.changed)  # told by the derivation that made it: no compare
        else:
            before, after = prev.by_id(), snapshot.by_id()
            # derive keeps an unchanged entry's object: identity settles most of them.
            drop = {
                uid
                for uid, e in after.items()
                if not e.same_object(b := before.get(uid)) and b != e
            }
            drop |= before.keys() - after.keys()
        # Mostly new: build.
        return drop if len(drop) <= snapshot.view.unit_count() // 2 else None


def _give_up(prebuild: Prebuild) -> None:
    """Stop a build begun ahead and remove its unpublished file."""
    prebuild.cancel()
    fsio.discard_temp(prebuild.tmp)


def _pairs(path: Path, sql: str) -> dict[str, str] | None:
    """Two-column rows of the index as a dict; None if absent or unreadable."""
    if not path.is_file():
        return None
    try:
        with open_readonly(path) as con:
            return dict(con.execute(sql).fetchall())
    except sqlite3.Error:
        return None


def index_meta(path: Path) -> dict[str, str] | None:
    """The index's meta rows (revision, format, tool, units)."""
    return _pairs(path, "SELECT key, value FROM meta")


def index_revision(path: Path) -> str | None:
    """The revision the index at ``path`` was built for; None if absent or unreadable."""
    return (index_meta(path) or {}).get("revision")


def index_entries(path: Path) -> dict[str, str] | None:
    """Unit id -> content hash held by the index; None if absent or unreadable."""
    return _pairs(path, "SELECT id, content_hash FROM units")


@dataclass(frozen=True)
class LexicalRow:
    """One BM25 hit: the unit's JSON record, its BM25 (higher is better) and its three
    FTS columns with the matched words marked by ``\x01...\x02``."""

    record: str
    bm25: float
    title: str
    body: str
    applies_to: str
    rank: float = 0.0  # BM25 over the best hit's, plus the name boost (names.py)
    # The marks made when first asked (postings.py: hybrid fuses 100 rows, shows 10).
    lazy: Callable[[], tuple[str, str, str]] | None = None

    @property
    def marked(self) -> tuple[str, str, str]:
        return self.lazy() if self.lazy is not None else (self.title, self.body, self.applies_to)


def _boosted(
    lexical: dict[str, LexicalRow], query: str, boost: float, revision: str
) -> dict[str, LexicalRow]:
    """``lexical`` re-ranked: each row's BM25 over the best one's, plus ``boost`` when the
    question names the unit in full (names.py); best first, ties by id."""
    best = max((row.bm25 for row in lexical.values()), default=0.0)
    stems = query_stems(query) if boost else frozenset()
    out = []
    for uid, row in lexical.items():
        base = row.bm25 / best if best > 0 else 0.0
        bonus = boost if boost and named(_record(row.record, revision), stems) else 0.0
        out.append((uid, replace(row, rank=base + bonus)))
    out.sort(key=lambda item: (-item[1].rank, item[0]))
    return dict(out)


@dataclass(frozen=True)
class Filters:
    kind: str | None = None
    purpose: str | None = None
    language: str | None = None
    table: str | None = None


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
    meta = (postings.meta if postings is not None else index_meta(path)) or {}
    if meta.get("format") != FORMAT:
        raise IntegrityError(
            f"the search index {path} has format {meta.get('format', 'unknown')}, this "
            f"version reads format {FORMAT}; rebuild it with 'tht workspace evidence consolidate'",
            code="E702",
            path=str(path),
        )
    if mode is not None and mode not in MODES:
        raise UsageError(f"unknown search mode '{mode}'; the modes are: {', '.join(MODES)}")
    analyzer = meta.get("analyzer", "stem")
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
    revision = meta.get("revision", "")
    dense_path: str | None = None  # which dense ranking served: "vec" or "python"
    # The stdlib's sqlite3 unless the index holds vec_units (then the driver that loads it).
    connect = vec.connect if vec.META_KEY in meta else sqlite3.connect
    try:
        with contextlib.ExitStack() as stack:
            # The postings keep a connection to their file per thread.
            kept = postings.reading(connect) if postings is not None else None
            con = (stack.enter_context(kept) if kept else None) or stack.enter_context(
                open_readonly(path, connect)
            )
            if postings is not None:  # the revision this connection reads, not the postings'
                held = con.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
                revision = str(held[0]) if held else ""
            if filters.table:
                filters = replace(filters, table=resolve_table(con, filters.table, schemas))
            where, args = _where(filters)
            has_vectors = index_model(con) is not None
            if mode is None and default_mode in MODES and (has_vectors or default_mode == "bm25"):
                mode = default_mode
            mode = mode or ("hybrid" if has_vectors else "bm25")
            # bm25 reads as deep as hybrid: the name boost may lift a unit from below the limit.
            depth = max(limit, FUSION_DEPTH)
            lexical = None
            if postings is not None and mode != "dense" and analyzer == "stem":
                keep = limit if mode == "bm25" else depth
                lexical = postings.lexical(con, query, filters, depth, keep, name_boost)
            if lexical is None:
                lexical = _bm25_rows(con, texts, where, args, depth) if mode != "dense" else {}
                lexical = _boosted(lexical, query, name_boost, revision)
            dense: list[tuple[str, float]] = []
            model = _query_model(con, embedder) if mode != "bm25" else None
            # Hybrid ranks a question its model does not serve by its words alone.
            if model is not None and (mode == "dense" or serves(model, query_language(query))):
                vector = model.embed([query])[0]
                found = postings.dense(con, vector, filters, depth) if postings else None
                dense, dense_path = found or ranked(con, vector, where, args, depth)
            records = _records(con, [uid for uid, _ in dense if uid not in lexical])
    except vec.errors() as exc:
        raise IntegrityError(
            f"the search index {path} is unreadable ({exc}); rebuild it with "
            "'tht workspace evidence consolidate'",
            code="E702",
            path=str(path),
        ) from None
    if mode == "bm25":
        rows = list(lexical.values())[:limit]
        # Scaled by the best hit: a word most units hold gets FTS5's smallest IDF (1e-6), and
        # its raw BM25 values are all near zero although their ratios still rank the hits.
        best = rows[0].rank if rows else 0.0
        hits = [_hit(row, best, revision, analyzer) for row in rows]
    else:
        hits = _fused_hits(lexical, dense, records, limit, revision, mode, analyzer, fusion)
    warning = vec.probe().warning() if dense_path else None
    rankings = (["bm25"] if mode != "dense" else []) + (["dense"] if dense_path else [])
    return SearchResult(
        revision,
        query,
        mode,
        tuple(hits),
        tuple(rankings),
        dense_path,
        (warning,) if warning else (),
    )


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


# bm25()'s weight of each fts column (id, title, body, applies_to); postings.py reads it.
COLUMN_WEIGHTS = (0.0, 4.0, 1.0, 2.0)
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


def _records(con: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for start in range(0, len(ids), 500):  # under SQLite's bound-variable limit
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        out.update(con.execute(f"SELECT id, record FROM units WHERE id IN ({marks})", chunk))
    return out


def _fused_hits(
    lexical: dict[str, LexicalRow],
    dense: list[tuple[str, float]],
    records: dict[str, str],
    limit: int,
    revision: str,
    mode: str,
    analyzer: str = "stem",
    fusion: Fusion = DEFAULT_FUSION,
) -> list[Hit]:
    """Hits of a ``dense`` or ``hybrid`` search, each with its BM25 (None: no query word)
    and cosine similarity.  A dense hit scores its cosine; a hybrid hit its fused score
    (0..1, ``fusion``): scores that say how close, not where in the list."""
    similarity = dict(dense)
    if mode == "dense":
        order = list(dense)
    else:
        order = fuse([(uid, row.rank) for uid, row in lexical.items()], dense, fusion)
    hits = []
    for uid, score in order[:limit]:
        row = lexical.get(uid)
        marked = row.marked if row else ("", "", "")
        r = _record(row.record if row else records[uid], revision)
        cosine = round(similarity[uid], 4) if uid in similarity else None
        matched = _matched(r, analyzer, *marked)
        bm25 = row.bm25 if row else None
        hits.append(Hit.of(r, round(score, 4), matched, Scoring.FUSED, bm25, cosine))
    return hits


def _record(record_json: str, revision: str) -> IndexRecord:
    """The unit's record as the index stores it, with the revision the index serves."""
    return IndexRecord({"revision": revision, **json.loads(record_json)})


def _hit(row: LexicalRow, best: float, revision: str, analyzer: str = "stem") -> Hit:
    r = _record(row.record, revision)
    score = round(row.rank / best, 4) if best > 0 else 0.0
    return Hit.of(r, score, _matched(r, analyzer, *row.marked), Scoring.BM25, row.bm25)


_MARKED = re.compile("\x01(.*?)\x02", re.S)


def _holds(text: str, words: set[str]) -> bool:
    """Does ``text`` hold one of ``words`` as a whole word (``_`` and ``.`` separate)?"""
    return any(re.search(rf"(?<![^\W_]){re.escape(w)}(?![^\W_])", text, re.I) for w in words if w)


def _holds_stem(text: str, stems: set[str], language: str) -> bool:
    """Does ``text``, analysed for ``language``, hold one of ``stems``?"""
    return not stems.isdisjoint(_analysed(text, language))


# A server shows the same units' fields again and again: their analysis is kept (bounded).
@functools.lru_cache(maxsize=4096)
def _analysed(text: str, language: str) -> frozenset[str]:
    return frozenset(analyse(text, language).split())


def _matched(
    record: IndexRecord, analyzer: str, title: str, body: str, applies_to: str
) -> list[str]:
    """The fields a hit matched: ``title``, payload fields (``rule``, ``sql``, ...) and
    ``applies_to.*`` lists, named as in the unit's JSON record."""
    out = ["title"] if "\x01" in title else []
    lang = record.language
    holds: Callable[[str, set[str]], bool] = (
        (lambda text, words: _holds_stem(text, words, lang)) if analyzer == "stem" else _holds
    )
    for column, section, prefix in (
        (body, record.payload, ""),
        (applies_to, record.applies_to, "applies_to."),
    ):
        words = set(_MARKED.findall(column))
        out += [
            prefix + key
            for key, value in section.items()
            if words and holds("\n".join(_flatten(value)), words)
        ]
    return out
