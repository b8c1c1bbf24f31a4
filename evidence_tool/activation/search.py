"""``search`` over whichever backend the installation configures (sqlite or qdrant).

Both answer a ``SearchResult``: revision, query, mode and hits, each hit with id,
kind, language, title, score, path, provenance, purposes.  The score is BM25 scaled
by the best hit's (bm25), the cosine similarity (dense) or the fused score (hybrid,
0..1: fusion.py).  Without ``mode``, the workspace's adopted ``retrieval.mode``
(workspace.yaml, written by ``eval --adopt``) runs when the index can serve it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from evidence_tool.activation.fusion import Retrieval
from evidence_tool.activation.records import Hit, IndexRecord, SearchResult
from evidence_tool.activation.settings import ActivationSettings, activation_settings
from evidence_tool.activation.sqlite_index import MODES, Filters
from evidence_tool.embedding import embedder_for
from evidence_tool.errors import NotReadyError, UsageError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.layout import Layout

if TYPE_CHECKING:
    from evidence_tool.activation.qdrant_index import ScoredPoint

__all__ = ["MODES", "search_active", "searchable_backend"]


def search_active(
    layout: Layout,
    activation: JsonObject,
    embedding: JsonObject,
    query: str,
    filters: Filters,
    limit: int = 10,
    mode: str | None = None,
    *,
    retrieval: Retrieval | JsonObject | None = None,
    schemas: tuple[str, ...] = ("public",),
) -> SearchResult:
    """Search the index of the installation's ``evidence.activation`` backend.

    ``activation`` and ``embedding`` are the installation's sections as written (JSON
    boundary: the YAML file); each is read once into its settings here.  ``retrieval``
    is the workspace's section (its adopted mode and fusion; absent: the defaults);
    ``schemas`` the search path an unqualified ``--table`` is resolved through (sqlite)."""
    settings = searchable_backend(activation, layout)
    _require_served(layout)
    chosen = retrieval if isinstance(retrieval, Retrieval) else Retrieval.from_json(retrieval)
    if settings.kind == "qdrant":
        return _qdrant(layout, settings, embedding, query, filters, limit, mode, chosen)
    from evidence_tool.activation.sqlite_index import search

    return search(
        layout,
        query,
        filters,
        limit,
        mode,
        lambda: embedder_for(embedding),
        fusion=chosen.fusion,
        default_mode=chosen.mode,
        schemas=schemas,
    )


def _require_served(layout: Layout) -> None:
    """E905 saying why retrieval serves nothing, before any index is opened: an index
    may exist (init prepares the baseline's) while no revision is active."""
    from evidence_tool.archive.state import read_state

    state = read_state(layout.state)
    if state.active:
        return
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.archive.queries import serving

    reason = serving(LocalEvidenceArchive(layout.root), state).reason
    raise NotReadyError(f"retrieval serves nothing yet: {reason}")


def searchable_backend(
    activation: ActivationSettings | JsonObject, layout: Layout
) -> ActivationSettings:
    """The effective ``evidence.activation`` settings of a backend whose index this tool
    can search and evaluate (sqlite, qdrant); another kind is a usage error."""
    settings = activation_settings(activation, layout)
    kind = settings.kind
    if kind not in ("sqlite", "qdrant"):
        raise UsageError(
            f"the {kind} backend keeps no index this tool can search: search and eval work "
            "with the sqlite (default) and qdrant backends"
        )
    return settings


def _qdrant(
    layout: Layout,
    settings: ActivationSettings,
    embedding: JsonObject,
    query: str,
    filters: Filters,
    limit: int,
    mode: str | None,
    retrieval: Retrieval,
) -> SearchResult:
    from evidence_tool.activation.qdrant_index import QdrantBackend
    from evidence_tool.archive.state import read_state

    active = read_state(layout.state).active
    if active is None:
        raise NotReadyError("no active revision yet: run 'tht workspace evidence consolidate'")
    backend = QdrantBackend(layout, settings, dense=embedder_for(embedding))
    if mode is None and retrieval.mode in ("bm25", "dense", "hybrid") and backend.dense:
        mode = retrieval.mode
    elif mode is None and retrieval.mode == "bm25":
        mode = "bm25"
    try:
        backend.require_collection()
        # Filters' fields are the backend's filter keywords.
        points = backend.search(
            query, **asdict(filters), limit=limit, mode=mode, fusion=retrieval.fusion
        )
    finally:
        backend.close()
    used = mode or ("hybrid" if backend.dense is not None else "bm25")
    # Lexical scores are scaled by the best hit's; cosine and fused scores mean themselves.
    best = (points[0].score if points else 0.0) if used == "bm25" else 1.0
    hits = tuple(_hit(p, best) for p in points)
    return SearchResult(active, query, used, hits)


def _hit(point: ScoredPoint, best: float) -> Hit:
    """A qdrant point as a hit: its payload is the record (purposes at its top level)."""
    p = IndexRecord(point.payload)
    score = round(point.score / best, 4) if best > 0 else 0.0
    purposes = point.payload.get("purposes")
    held = tuple(x for x in purposes if isinstance(x, str)) if isinstance(purposes, list) else ()
    return Hit(p.id, p.kind, p.language, p.title, score, (), p.path, p.provenance_kind, held, p)
