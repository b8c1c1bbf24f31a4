"""The ``qdrant`` backend: active units with typed payload and provenance in a collection.

One scroll reads what the collection holds; only points whose unit id,
content hash or entry hash differ are upserted, in batches, and every other
point (units no longer active, points written by hand) is deleted, so
re-activating the same revision writes nothing.
"""

from __future__ import annotations

import hashlib
import importlib
import math
import re
import uuid
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

from evidence_tool.activation.analysis import fold, query_language
from evidence_tool.activation.dense import FUSION_DEPTH
from evidence_tool.activation.fusion import DEFAULT as DEFAULT_FUSION
from evidence_tool.activation.fusion import Fusion, fuse
from evidence_tool.activation.records import IndexRecord, index_records
from evidence_tool.activation.settings import (
    QDRANT_TIMEOUT_S,
    ActivationSettings,
    activation_settings,
)
from evidence_tool.archive.port import Capabilities
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.embedding import DenseEmbedder, serves
from evidence_tool.embedding.cache import EmbeddingCache
from evidence_tool.embedding.text import flatten, unit_text
from evidence_tool.embedding.vectors import from_blob
from evidence_tool.errors import ActivationError, DescriptorError, EmbeddingError, NotReadyError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.redact import redact

_NAMESPACE = uuid.UUID("2f1b5c8e-7d0a-4c55-9a51-3e1d6f0b9a11")
BATCH = 256
VECTOR = "terms"
DENSE = "dense"  # the named vector of evidence.embedding, beside the sparse terms
_CHECKED = ("id", "content_hash", "entry_hash")


# -- the built-in embedder: sparse term vectors (hashed terms, log-scaled counts) --------
# It needs no model download, so the backend works offline and in CI; another embedder
# (dense or sparse) plugs in through the ``Embedder`` protocol (docs/activation.md).

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Sparse:
    indices: list[int]
    values: list[float]


class Embedder(Protocol):
    """Turns texts into vectors; ``sparse`` says which kind of vector it returns."""

    sparse: bool
    dim: int | None

    def embed(self, texts: list[str]) -> list[Sparse] | list[list[float]]: ...


def terms(text: str) -> Counter[str]:
    return Counter(fold(w) for w in _WORD.findall(text) if len(w) > 1 or w.isdigit())


class TermEmbedder:
    sparse = True
    dim = None

    def embed(self, texts: list[str]) -> list[Sparse]:
        out = []
        for text in texts:
            counts: dict[int, float] = {}
            for term, n in terms(text).items():
                index = zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF
                counts[index] = counts.get(index, 0.0) + 1.0 + math.log(n)
            norm = math.sqrt(sum(v * v for v in counts.values())) or 1.0
            keys = sorted(counts)
            out.append(Sparse(keys, [counts[k] / norm for k in keys]))
        return out


@dataclass(frozen=True, slots=True)
class ScoredPoint:
    """One point a query ranked: its score (higher is better) and its payload."""

    score: float
    payload: JsonObject  # JSON boundary: the payload as the qdrant server holds it

    @property
    def unit_id(self) -> str:
        return str(self.payload.get("id"))


def point_id(unit_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, unit_id))


def _text(record: IndexRecord) -> str:
    return "\n".join([record.title, *flatten(record.payload), *flatten(record.applies_to)])


BUILTIN_EMBEDDER = "builtin:terms-v1"


def payload_of(record: IndexRecord, embedder: str = BUILTIN_EMBEDDER) -> JsonObject:
    """The point's payload; ``entry_hash`` covers it all, the embedder's name included, so
    configuring another embedder re-embeds every unit instead of mixing old vectors."""
    applies = record.applies_to
    # JSON boundary: the point's payload, stored by the server (in this key order)
    body: JsonObject = {k: getattr(record, k) for k in ("id", "kind", "language")}
    body["purposes"] = record.metadata.get("purposes")
    body |= {k: applies.get(k, []) for k in ("tables", "columns", "concepts")}
    for key in ("title", "payload", "path", "content_hash", "provenance", "provenance_kind"):
        body[key] = getattr(record, key)
    body["embedder"] = embedder
    body["entry_hash"] = hashlib.sha256(canonical_json(body)).hexdigest()
    return body


def load_embedder(spec: str | None) -> Embedder:
    """``module:factory`` from the installation, or the built-in term embedder."""
    if not spec:
        return TermEmbedder()  # type: ignore[return-value]  # dim: None is the sparse case
    module, _, name = spec.partition(":")
    try:
        embedder = getattr(importlib.import_module(module), name)()
    except (ImportError, AttributeError) as exc:
        raise DescriptorError(
            f"evidence.activation.embedder {spec!r} cannot be loaded: {exc}"
        ) from None
    sparse = getattr(embedder, "sparse", None)
    dim = getattr(embedder, "dim", None)
    if not isinstance(sparse, bool) or not callable(getattr(embedder, "embed", None)):
        raise DescriptorError(
            f"evidence.activation.embedder {spec!r} must return an object with "
            "'sparse' (bool), 'dim' and 'embed(texts)'"
        )
    if not sparse and not (isinstance(dim, int) and dim > 0):
        raise DescriptorError(
            f"evidence.activation.embedder {spec!r} returns dense vectors: 'dim' must be "
            f"a positive integer (the vector size), not {dim!r}"
        )
    return embedder  # type: ignore[no-any-return,unused-ignore]


def _filter(kind: str | None, purpose: str | None, language: str | None, table: str | None) -> Any:
    """The payload filter of a search (None: every point); exact values."""
    from qdrant_client import models

    must: list[Any] = []
    pairs = (("kind", kind), ("purposes", purpose), ("language", language), ("tables", table))
    for key, value in pairs:
        if value:
            must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))
    return models.Filter(must=must) if must else None


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _reason(exc: BaseException) -> str:
    """The error's text, URL credentials scrubbed (a client error may quote its URL)."""
    return str(redact(str(exc) or type(exc).__name__))


def _vector(embedder: Embedder, v: Any) -> Any:
    """The client's vector for one embedding: a SparseVector, or the dense list as is."""
    from qdrant_client import models

    return models.SparseVector(indices=v.indices, values=v.values) if embedder.sparse else v


class QdrantBackend:
    def __init__(
        self,
        layout: Layout,
        settings: ActivationSettings | JsonObject,
        client: Any = None,
        dense: DenseEmbedder | None = None,
    ) -> None:
        self.layout = layout
        self.settings = settings = activation_settings(settings, layout)
        self.collection = settings.collection
        self.embedder = load_embedder(settings.embedder)
        self.embedder_name = settings.embedder or BUILTIN_EMBEDDER
        # evidence.embedding: a dense named vector beside the sparse terms (hybrid).
        self.dense = dense
        if dense is not None:
            if not self.embedder.sparse:
                raise DescriptorError(
                    "evidence.activation.embedder is dense and evidence.embedding is set: "
                    "keep one source of dense vectors (remove the embedder for hybrid search)"
                )
            self.embedder_name += f"+{dense.model_id}"
        self.cache: EmbeddingCache | None = None
        self._client = client
        self.last_written: int | None = None  # points upserted by the last activation
        self.last_deleted: int | None = None

    @property
    def capabilities(self) -> Capabilities:
        """A collection it can check against a snapshot (``holds``)."""
        return Capabilities(index=self)

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                from qdrant_client import QdrantClient
            except ImportError:
                raise ActivationError(
                    "the qdrant backend needs the 'qdrant' extra: "
                    "pip install 'evidence-tool[qdrant]'"
                ) from None
            if self.settings.url:
                import os

                key_env = self.settings.api_key_env
                # No background version probe: its thread warns on stderr at a random
                # moment (and fails loudly under -W error); an incompatible server
                # still fails the first call, which becomes E401.
                self._client = QdrantClient(
                    url=self.settings.url,
                    api_key=os.environ.get(key_env) if key_env else None,
                    timeout=max(1, round(_or(self.settings.timeout_s, QDRANT_TIMEOUT_S))),
                    check_compatibility=False,
                )
            else:
                path = self.settings.path or str(self.layout.cache / "qdrant")
                self._client = QdrantClient(path=path)
        return self._client

    def _ensure_collection(self) -> None:
        from qdrant_client import models

        if self.client.collection_exists(self.collection):
            if self._shape_matches():
                return
            # Derived data in the wrong shape (another model's size, no dense vector):
            # rebuilt, as a model change re-embeds everything anyway.
            self.client.delete_collection(self.collection)
        # The sparse terms, beside the dense vector of evidence.embedding if any; or the
        # configured embedder's dense vectors under the terms' name.
        cosine, vectors = models.Distance.COSINE, {}
        if self.dense is not None:
            vectors[DENSE] = models.VectorParams(size=self.dense.dim, distance=cosine)
        elif not self.embedder.sparse:
            vectors[VECTOR] = models.VectorParams(size=int(self.embedder.dim or 0), distance=cosine)
        sparse = None if VECTOR in vectors else {VECTOR: models.SparseVectorParams()}
        self.client.create_collection(
            self.collection, vectors_config=vectors, sparse_vectors_config=sparse
        )
        if self.settings.url:  # local mode filters without indexes (and warns on them)
            for field in ("kind", "language", "purposes", "tables", "provenance_kind"):
                self.client.create_payload_index(
                    self.collection, field, models.PayloadSchemaType.KEYWORD
                )

    def _shape_matches(self) -> bool:
        """The collection has the dense vector (and size) this configuration writes."""
        if self.dense is None:
            return True  # as before: the configured embedder's shape is the operator's
        vectors = self.client.get_collection(self.collection).config.params.vectors
        params = vectors.get(DENSE) if isinstance(vectors, dict) else None
        return params is not None and int(params.size) == self.dense.dim

    def _dense_vectors(self, batch: list[tuple[IndexRecord, JsonObject]]) -> list[Any]:
        """The dense vectors of a batch of records, through the embedding cache."""
        if self.dense is None:
            return [None] * len(batch)
        if self.cache is None:
            self.cache = EmbeddingCache(self.layout.cache / "embeddings", self.dense)
        blobs = self.cache.vectors([(r.content_hash, unit_text(r.to_json())) for r, _ in batch])
        return [list(from_blob(blobs[r.content_hash])) for r, _ in batch]

    def _points(self) -> dict[str, tuple[Any, JsonObject]]:
        """Every point: str(point id) -> (point id, payload: id, both hashes, embedder)."""
        out: dict[str, tuple[Any, JsonObject]] = {}  # JSON boundary: payloads as stored
        offset = None
        try:
            if not self.client.collection_exists(self.collection):
                return {}
            # Local mode sorts every point id for each page: read it as one page (payloads
            # are small), else 50,000 points take four times as long.  A server pages.
            limit = 1024
            if not self.settings.url:
                limit = self.client.count(self.collection, exact=True).count + 1
            while True:
                points, offset = self.client.scroll(
                    self.collection,
                    limit=limit,
                    offset=offset,
                    with_vectors=False,
                    with_payload=["id", "content_hash", "entry_hash", "embedder"],
                )
                for p in points:
                    out[str(p.id)] = (p.id, dict(p.payload or {}))
                if offset is None:
                    return out
        except ActivationError:
            raise
        except Exception as exc:  # transport, API and local-mode lock errors alike
            raise ActivationError(
                f"the qdrant collection '{self.collection}' cannot be read: {_reason(exc)}"
            ) from None

    def entries(self) -> dict[str, JsonObject]:
        """What the collection holds: unit id -> payload (id, content_hash, entry_hash).

        A point that is not where this backend puts its unit (no unit id in the
        payload, or another point id: written by hand or by another tool) is listed
        under ``<unit id or ?>@point:<point id>``, so drift reports it as extra.
        """
        out: dict[str, JsonObject] = {}  # JSON boundary: payloads as the server holds them
        for key, (_, payload) in self._points().items():
            uid = payload.get("id")
            if isinstance(uid, str) and key == point_id(uid):
                out[uid] = payload
            else:
                out[f"{uid if isinstance(uid, str) else '?'}@point:{key}"] = payload
        return out

    def holds(self, snapshot: Snapshot) -> bool:
        """True when the collection holds exactly the snapshot's units and contents,
        embedded by the configured embedder."""
        entries = self.entries()
        if any(p.get("embedder") != self.embedder_name for p in entries.values()):
            return False
        held = {uid: p.get("content_hash") for uid, p in entries.items()}
        return held == {e.id: e.content_hash for e in snapshot.entries()}

    def __call__(self, snapshot: Snapshot) -> None:
        from qdrant_client import models

        try:
            self._ensure_collection()
            held = self._points()
            wanted = {
                point_id(r.id): (r, payload_of(r, self.embedder_name))
                for r in index_records(snapshot.records())
            }
            # Compare every hash, not only entry_hash: a point whose payload was altered
            # (by hand, by another tool) is rewritten, so consolidate repairs E702 drift.
            changed = [
                (r, body)
                for key, (r, body) in wanted.items()
                if {k: held.get(key, (None, {}))[1].get(k) for k in _CHECKED}
                != {k: body[k] for k in _CHECKED}
            ]
            for start in range(0, len(changed), BATCH):
                batch = changed[start : start + BATCH]
                vectors = self.embedder.embed([_text(r) for r, _ in batch])
                dense = self._dense_vectors(batch)
                points = []
                for (r, body), v, d in zip(batch, vectors, dense, strict=True):
                    named = {VECTOR: _vector(self.embedder, v)} | ({DENSE: d} if d else {})
                    points.append(models.PointStruct(id=point_id(r.id), vector=named, payload=body))
                self.client.upsert(self.collection, points=points, wait=True)
            # Delete by the ids the points really have: extra points need not sit at
            # point_id(their unit id).
            gone = [pid for key, (pid, _) in sorted(held.items()) if key not in wanted]
            if gone:
                self.client.delete(
                    self.collection,
                    points_selector=models.PointIdsList(points=gone),
                    wait=True,
                )
            self.last_written = len(changed)
            self.last_deleted = len(gone)
        except ActivationError:
            raise
        except EmbeddingError as exc:
            raise ActivationError(f"embedding the units failed: {exc}") from None
        except Exception as exc:  # qdrant raises transport and API errors of many types
            raise ActivationError(f"qdrant activation failed: {_reason(exc)}") from None

    def require_collection(self) -> None:
        """A not-ready error while the collection was never built (a consolidate builds it)."""
        if not self.client.collection_exists(self.collection):
            raise NotReadyError(
                f"the qdrant collection '{self.collection}' does not exist yet: run "
                "'tht workspace evidence consolidate'"
            )

    def search(
        self,
        query: str,
        *,
        kind: str | None = None,
        purpose: str | None = None,
        language: str | None = None,
        table: str | None = None,
        limit: int = 10,
        mode: str | None = None,
        fusion: Fusion = DEFAULT_FUSION,
    ) -> list[ScoredPoint]:
        """Points ranked by the sparse terms (``bm25``: the lexical mode), the dense
        vector (``dense``) or both, each ranking normalised and mixed by ``fusion`` as
        the sqlite index does (``hybrid``, the default when the collection has dense
        vectors); filters apply inside each ranking."""
        mode = mode or ("hybrid" if self.dense is not None else "bm25")
        if mode != "bm25" and self.dense is None:
            raise DescriptorError(
                f"--mode {mode} needs dense vectors: configure evidence.embedding in the "
                "installation and run 'tht workspace evidence consolidate', or use --mode bm25"
            )
        if mode == "hybrid" and self.dense and not serves(self.dense, query_language(query)):
            mode = "bm25"  # a question its model does not serve is ranked by its words alone
        flt = _filter(kind, purpose, language, table)

        def ranked(vector: Any, using: str, depth: int = limit) -> list[Any]:
            return list(
                self.client.query_points(
                    self.collection, query=vector, using=using, limit=depth, query_filter=flt
                ).points
            )

        vec: Any = self.embedder.embed([query])[0]
        sparse = _vector(self.embedder, vec)
        if mode == "bm25":
            if self.embedder.sparse and not vec.indices:
                return []  # no term of the query can match anything
            points = ranked(sparse, VECTOR)
        else:
            dense = self.dense.embed([query])[0] if self.dense else []
            if mode == "dense" or (self.embedder.sparse and not vec.indices):
                points = ranked(dense, DENSE)
            else:
                depth = max(limit, FUSION_DEPTH)
                sides = [ranked(sparse, VECTOR, depth), ranked(dense, DENSE, depth)]
                payloads = {str(p.id): dict(p.payload or {}) for side in sides for p in side}
                lexical, semantic = ([(str(p.id), float(p.score)) for p in side] for side in sides)
                fused = fuse(lexical, semantic, fusion)[:limit]
                return [ScoredPoint(score, payloads[pid]) for pid, score in fused]
        return [ScoredPoint(float(p.score), dict(p.payload or {})) for p in points]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
