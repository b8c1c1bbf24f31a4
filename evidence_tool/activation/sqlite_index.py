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
import json
import os
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

from evidence_tool import __version__, fsio
from evidence_tool.activation import vec
from evidence_tool.activation._speed.prebuild import Prebuild
from evidence_tool.activation.dense import (
    write_vectors,
)
from evidence_tool.activation.sqlite_schema import (
    FORMAT,
    INDEX_NAME,
    PREPARED_NAME,
    RACY_NS,
    STAMP_NAME,
    index_entries,
    index_meta,
    index_revision,
    open_readonly,
)
from evidence_tool.activation.sqlite_search import MODES, Filters, search, search_path
from evidence_tool.activation.sqlite_write import build_index, update_in_place
from evidence_tool.archive.port import Capabilities
from evidence_tool.archive.snapshot import Snapshot, load_snapshot
from evidence_tool.embedding import DenseEmbedder
from evidence_tool.embedding.cache import EmbeddingCache
from evidence_tool.errors import (
    ActivationError,
    EmbeddingError,
    EvidenceError,
    EvidenceWarning,
)
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

# The index's public names stay importable from here, the backend's module, as before the
# split: schema and meta (sqlite_schema), rows (sqlite_write), search (sqlite_search); their
# private helpers are imported from the module that defines them.
__all__ = [
    "INDEX_NAME",
    "MODES",
    "Filters",
    "SqliteBackend",
    "build_index",
    "index_entries",
    "index_revision",
    "open_readonly",
    "search",
    "search_path",
    "update_in_place",
]


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

    @property
    def capabilities(self) -> Capabilities:
        """All four: an index to check, a full build ahead, init's baseline, W702."""
        return Capabilities(index=self, ahead=self, prepare=self, warnings=self)

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
        if not self._vectors_match(meta):
            return False  # re-activate
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
        if not self._vectors_match(stamp) or not isinstance(revision, str):
            return None
        if not isinstance(taken, int):
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

    def _vectors_match(self, meta: dict[str, Any]) -> bool:
        """Do ``meta`` (the index's rows, or a stamp) vouch for vectors of this model (or
        none, if none are wanted), with ``vec_units`` exactly when sqlite-vec serves here?"""
        model = self._model_id()
        return meta.get("embedding") == model and meta.get(vec.META_KEY) == vec.wanted(model)

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
        with contextlib.closing(vec.connect(tmp)) as con:
            self._vectors(con)
            con.commit()

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
            with contextlib.closing(sqlite3.connect(self.path)) as con:
                con.execute("SELECT count(*) FROM meta").fetchone()
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
