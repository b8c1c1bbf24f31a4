"""The four verbs an agent calls, over the active revisions of the served workspaces.

Every answer is built from one pinned ``RevisionView``: the search index is asked, and
its hits are accepted only if each one is the pinned revision's unit (same id, same
content hash); otherwise the revision moved while the index answered, and the request
is asked again on the new one (a bounded number of times, within about a second).
So no answer mixes two revisions, and a deleted unit is never served.
"""

from __future__ import annotations

import difflib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from evidence_tool.activation.citations import classify
from evidence_tool.activation.records import SearchResult
from evidence_tool.activation.search import MODES, search_active, searchable_backend
from evidence_tool.activation.sqlite_index import INDEX_NAME, Filters, search_path
from evidence_tool.embedding import DenseEmbedder, embedder_for
from evidence_tool.embedding.batching import Batched
from evidence_tool.errors import (
    EmbeddingError,
    EvidenceError,
    EvidenceWarning,
    IntegrityError,
    NotReadyError,
    UnknownNameError,
    UsageError,
)
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.serve import limits, shapes
from evidence_tool.serve.applies import evidence_for
from evidence_tool.serve.revisions import ActiveReader, RevisionView
from evidence_tool.serve.workspaces import ServedWorkspace, ServeSettings
from evidence_tool.workspace.layout import Layout

if TYPE_CHECKING:
    from evidence_tool.activation._speed.postings import Postings, PostingsCache

PIN_ATTEMPTS = 40  # times 25 ms: a request waits at most about a second for a switch
PIN_PAUSE_S = 0.025
T = TypeVar("T")


@dataclass
class Answer:
    """A verb's result and the warnings that go with it (the envelope's two parts)."""

    workspace: ServedWorkspace
    result: JsonObject
    warnings: list[EvidenceWarning] = field(default_factory=list)


class EvidenceService:
    """Read-only answers over every served workspace's active revision."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.readers = {ws.name: ActiveReader(ws.root) for ws in settings.workspaces}
        self._index_reads = ReadGate()
        self._embedders: dict[str, DenseEmbedder | None] = {}
        self._embedders_made = threading.Lock()
        self._backends: dict[str, tuple[Layout, bool]] = {}
        self._postings: dict[str, PostingsCache] = {}
        self._follows = True  # load each new revision's postings (False: supervised)

    def _pin(self, ws: ServedWorkspace) -> RevisionView:
        view = self.readers[ws.name].current()
        if view is None:
            raise NotReadyError(
                f"workspace '{ws.name}' has no active revision yet: run "
                "'tht workspace evidence consolidate' there"
            )
        return view

    # -- search_evidence ----------------------------------------------------
    def searches_in_memory(self, args: JsonObject) -> bool:
        """Would this search be answered from memory alone: ``bm25`` over the loaded
        postings of the revision already read, no model, no file to load or parse?  (Or
        would it fail at once, on a bad workspace.)  The HTTP face runs such a search on
        its event loop, without a worker thread's hop."""
        try:
            ws = self.settings.workspace(limits.option(args.get("workspace"), "workspace"))
        except EvidenceError:
            return True
        mode = args.get("mode") or ws.retrieval.mode
        view = self.readers[ws.name].settled()
        cache = self._postings.get(ws.name)
        return (
            mode == "bm25" and view is not None and cache is not None and cache.holds(view.revision)
        )

    def search_evidence(self, args: JsonObject) -> Answer:
        ws = self.settings.workspace(limits.option(args.get("workspace"), "workspace"))
        query = limits.query(args.get("query"))
        mode = limits.option(args.get("mode"), "mode")
        if mode is not None and mode not in MODES:
            raise UsageError(f"unknown search mode '{mode}'; the modes are: {', '.join(MODES)}")
        count = limits.limit(args.get("limit", 10))
        tables = [t.lower() for t in limits.names(args.get("tables"), "tables")]
        columns = [c.lower() for c in limits.names(args.get("columns"), "columns")]
        base = Filters(
            limits.option(args.get("kind"), "kind"),
            limits.option(args.get("purpose"), "purpose"),
            limits.option(args.get("language"), "language"),
        )
        warnings: list[EvidenceWarning] = []

        # Columns are checked on the hits: the index is asked for more, so that filtering
        # leaves up to ``count`` of them.
        depth = min(1000, count * 10) if columns else count

        def attempt(view: RevisionView) -> JsonObject | None:
            found = self._ranked(ws, view.revision, query, base, tables, depth, mode, warnings)
            if not _same_revision(view, found):
                return None
            hits = [h for h in found.hits if _names_columns(h.record.applies_to, columns)]
            return {
                "workspace": ws.name,
                "revision": view.revision,
                "query": query,
                "mode": found.mode,
                "hits": [shapes.hit(view, h, found.mode) for h in hits[:count]],
            }

        result = self._pinned(ws, attempt)
        return Answer(ws, result, _unique(warnings))

    def _ranked(
        self,
        ws: ServedWorkspace,
        revision: str,
        query: str,
        base: Filters,
        tables: list[str],
        count: int,
        mode: str | None,
        warnings: list[EvidenceWarning],
    ) -> SearchResult:
        """The index's ranking; per table when several are named (merged by score)."""
        runs = [Filters(base.kind, base.purpose, base.language, t) for t in tables] or [base]
        results = [self._search(ws, revision, query, f, count, mode, warnings) for f in runs]
        if len(results) == 1:
            return results[0]
        merged = {h.id: h for r in results for h in sorted(r.hits, key=lambda h: h.score)}
        hits = sorted(merged.values(), key=lambda h: (-h.score, h.id))
        first = results[0]
        revisions = {r.revision for r in results}  # runs on two revisions: none accepted
        revision = first.revision if len(revisions) == 1 else ""
        return SearchResult(revision, query, first.mode, tuple(hits))

    def _search(
        self,
        ws: ServedWorkspace,
        revision: str,
        query: str,
        filters: Filters,
        count: int,
        mode: str | None,
        warnings: list[EvidenceWarning],
    ) -> SearchResult:
        try:
            with self._index_reads.reading():
                return self._index_search(ws, revision, query, filters, count, mode)
        except EmbeddingError as exc:
            if mode == "bm25":
                raise
            # The service failing must not fail the agent: its words still rank.
            warnings.append(
                EvidenceWarning(
                    f"the embedding service failed ({exc.message}); this answer is "
                    "ranked by bm25 alone",
                    code="W402",
                )
            )
            with self._index_reads.reading():
                return self._index_search(ws, revision, query, filters, count, "bm25")

    def _index_search(
        self,
        ws: ServedWorkspace,
        revision: str,
        query: str,
        filters: Filters,
        count: int,
        mode: str | None,
    ) -> SearchResult:
        """``search_active``, but with the sqlite index and this server's one embedder per
        workspace (a local model loaded once, one HTTP client kept), not one per query.
        The index is not checked against ``state.yaml`` here (``sqlite_index.search``
        parses it per query): ``_same_revision`` checks every answer against the pinned
        revision, which is stricter.  The lexical side is ranked from the postings of the
        pinned revision once they are loaded (postings.py: the same hits as FTS5's)."""
        layout, sqlite = self._backend(ws)
        if not sqlite:
            run = (layout, ws.activation, ws.embedding, query, filters, count)
            return search_active(*run, mode, retrieval=ws.retrieval, schemas=ws.search_path)
        path = layout.cache / INDEX_NAME
        if not path.is_file():
            raise NotReadyError(
                "no search index yet: run 'tht workspace evidence consolidate' "
                "with the sqlite backend (the default)"
            )
        chosen = ws.retrieval
        return search_path(
            path,
            query,
            filters,
            count,
            mode,
            lambda: self._embedder(ws),
            fusion=chosen.fusion,
            default_mode=chosen.mode,
            schemas=ws.search_path,
            postings=self._lexicon(ws.name, path, revision),
        )

    def _lexicon(self, name: str, path: Path, revision: str) -> Postings | None:
        """The loaded postings of ``revision``'s index (None: FTS5 ranks, and they load
        in the background); never without numpy (the serve extra brings it)."""
        cache = self._cache(name, path)
        return cache.get(revision, self._follows) if cache is not None else None

    def _cache(self, name: str, path: Path) -> PostingsCache | None:
        cache = self._postings.get(name)
        if cache is None:
            try:
                from evidence_tool.activation._speed.postings import PostingsCache
            except ImportError:
                return None
            cache = self._postings.setdefault(name, PostingsCache(path))
        return cache

    def supervised(self) -> None:
        """This service's process forks the workers that serve (run.py): it reads each
        revision itself (``warm``), and they load nothing.  A worker forked before the
        newest activation answers that one from the index file until it is replaced."""
        self._follows = False
        for reader in self.readers.values():
            reader.background = False

    def warm(self) -> bool:
        """Read every served workspace's active revision, its texts and its postings now,
        in this thread (a supervisor about to fork its workers, which share what it
        read); True if anything new was read."""
        fresh = False
        for ws in self.settings.workspaces:
            reader = self.readers[ws.name]
            loads = reader.loads
            try:
                view = reader.current()
            except (EvidenceError, OSError):
                continue  # answered, coded, by the requests that ask
            if view is None:
                continue
            if reader.loads != loads:
                view.warm_texts()
                fresh = True
            layout, sqlite = self._backend(ws)
            cache = self._cache(ws.name, layout.cache / INDEX_NAME) if sqlite else None
            # The index moves before state.yaml does: it is read once the revision is.
            if cache is not None and not cache.holds(view.revision) and cache.path.is_file():
                fresh = cache.load_now() or fresh
        return fresh

    def _backend(self, ws: ServedWorkspace) -> tuple[Layout, bool]:
        """The workspace's layout and whether its backend is sqlite: settled by the
        installation the server started with, so worked out once."""
        found = self._backends.get(ws.name)
        if found is None:
            layout = ws.layout
            found = (layout, searchable_backend(ws.activation, layout).kind == "sqlite")
            self._backends[ws.name] = found
        return found

    def _embedder(self, ws: ServedWorkspace) -> DenseEmbedder | None:
        """The workspace's embedder, made on the first search that needs it; questions
        asked while a pass runs share the next one (embedding/batching.py)."""
        with self._embedders_made:
            if ws.name not in self._embedders:
                made = embedder_for(ws.embedding)
                self._embedders[ws.name] = Batched(made) if made is not None else None
            return self._embedders[ws.name]

    def _pinned(self, ws: ServedWorkspace, attempt: Callable[[RevisionView], T | None]) -> T:
        """``attempt`` on the active revision, again on the next one if the index answered
        for another; E702 if the index never caught up."""
        for n in range(PIN_ATTEMPTS):
            view = self._pin(ws)
            try:
                done = attempt(view)
            except IntegrityError as exc:
                if exc.code != "E702" or n == PIN_ATTEMPTS - 1:
                    raise
                done = None  # the index is between two revisions: ask again
            if done is not None:
                return done
            time.sleep(PIN_PAUSE_S)
        raise IntegrityError(
            f"the search index of workspace '{ws.name}' does not serve its active revision: "
            "run 'tht workspace evidence consolidate' there",
            code="E702",
        )

    # -- get_evidence -------------------------------------------------------
    def get_evidence(self, args: JsonObject) -> Answer:
        ws = self.settings.workspace(limits.option(args.get("workspace"), "workspace"))
        uid = limits.unit_id(args.get("id"))
        view = self._pin(ws)
        base: JsonObject = {"workspace": ws.name, "revision": view.revision}
        record = view.record(uid)
        if record is not None:
            return Answer(ws, {**base, "status": "active", "unit": shapes.unit(view, record)})
        deletion = view.deletions.get(uid)
        if deletion is not None:
            return Answer(ws, {**base, **shapes.retired(deletion)})
        known = [*view.entries, *view.deletions]
        near = difflib.get_close_matches(uid, known, n=5, cutoff=0.6)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        exc = UnknownNameError(
            f"workspace '{ws.name}' holds no unit '{uid}' (active or retired){hint}",
            unit_id=uid,
        )
        exc.add_result(**base, id=uid, candidates=list[JsonValue](near))
        raise exc

    # -- evidence_for -------------------------------------------------------
    def evidence_for(self, args: JsonObject) -> Answer:
        ws = self.settings.workspace(limits.option(args.get("workspace"), "workspace"))
        tables = limits.names(args.get("tables"), "tables")
        columns = limits.names(args.get("columns"), "columns")
        if not tables and not columns:
            raise UsageError("name at least one table or column")
        view = self._pin(ws)
        found = evidence_for(view, tables, columns, ws.search_path)
        return Answer(ws, {"workspace": ws.name, "revision": view.revision, **found})

    # -- check_citations ----------------------------------------------------
    def check_citations(self, args: JsonObject) -> Answer:
        ws = self.settings.workspace(limits.option(args.get("workspace"), "workspace"))
        cited = limits.names(args.get("cited"), "cited")
        retrieved = limits.names(args.get("retrieved"), "retrieved")
        if not cited and not retrieved:
            raise UsageError("give the cited ids (and the retrieved ones)")
        view = self._pin(ws)
        checked = classify(view.citation_context(), cited, retrieved).to_json()
        return Answer(ws, {"workspace": ws.name, **checked})

    # -- health -------------------------------------------------------------
    def health(self) -> JsonObject:
        """The active revision of every served workspace (None: nothing active yet)."""
        served: list[JsonValue] = []
        for ws in self.settings.workspaces:
            try:
                view = self.readers[ws.name].current()
                active: JsonValue = view.revision if view else None
            except EvidenceError as exc:
                active = None
                served.append({"workspace": ws.name, "active": active, "error": exc.code})
                continue
            served.append({"workspace": ws.name, "active": active})
        return {"workspaces": served}


class ReadGate:
    """Index reads run side by side, but never longer than ``DRAIN_AFTER_S`` without one
    moment when none is in flight.

    An in-place index update (another process's ``consolidate``) commits only once no
    reader holds the file, and the readers of one process share one OS lock: threads
    whose reads overlap without a gap would hold it for ever, and the update fails with
    "database is locked" (E401).  Once the writer waits to commit, SQLite holds back new
    readers itself, so one gap is enough: when reads have overlapped for longer than
    ``DRAIN_AFTER_S``, a new read waits until those in flight are done.
    """

    DRAIN_AFTER_S = 0.2

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._active = 0
        self._draining = False
        self._idle_at = time.monotonic()
        self.drains = 0  # how many gaps were made (tests count them)

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._changed:
            while self._draining or (
                self._active and time.monotonic() - self._idle_at > self.DRAIN_AFTER_S
            ):
                if not self._draining:
                    self._draining = True
                    self.drains += 1
                    self._changed.wait_for(lambda: self._active == 0)
                    self._draining = False
                    self._changed.notify_all()
                else:
                    self._changed.wait()
            self._active += 1
        try:
            yield
        finally:
            with self._changed:
                self._active -= 1
                if self._active == 0:
                    self._idle_at = time.monotonic()
                    self._changed.notify_all()


def _same_revision(view: RevisionView, found: SearchResult) -> bool:
    """Every hit is the pinned revision's unit, as that revision holds it."""
    if found.revision != view.revision:
        return False
    return all(view.content_hash(h.id) == h.record.content_hash for h in found.hits)


def _names_columns(applies_to: JsonObject, columns: list[str]) -> bool:
    """Does the unit's ``applies_to.columns`` name one of ``columns`` (by its full name or
    its trailing parts)?"""
    if not columns:
        return True
    held = applies_to.get("columns")
    names = [c.lower() for c in held if isinstance(c, str)] if isinstance(held, list) else []
    return any(n == c or n.endswith("." + c) for n in names for c in columns)


def _unique(warnings: list[EvidenceWarning]) -> list[EvidenceWarning]:
    return list({w.message: w for w in warnings}.values())
