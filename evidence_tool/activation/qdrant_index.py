"""The ``qdrant`` backend: active units with typed payload and provenance in a collection.

One scroll reads what the collection holds; only points whose entry hash
changed are upserted, in batches, and points of units no longer active are
deleted, so re-activating the same revision writes nothing.
"""

from __future__ import annotations

import hashlib
import importlib
import uuid
from collections.abc import Iterable
from typing import Any

from evidence_tool.activation.terms import Embedder, TermEmbedder
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import ActivationError, DescriptorError
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.layout import Layout

_NAMESPACE = uuid.UUID("2f1b5c8e-7d0a-4c55-9a51-3e1d6f0b9a11")
BATCH = 256
VECTOR = "terms"


def point_id(unit_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, unit_id))


def _text(record: dict[str, Any]) -> str:
    def flat(v: Any) -> Iterable[str]:
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for x in v.values():
                yield from flat(x)
        elif isinstance(v, list):
            for x in v:
                yield from flat(x)

    return "\n".join(
        [record["title"], *flat(record["payload"]), *flat(record["metadata"].get("applies_to", {}))]
    )


def payload_of(record: dict[str, Any]) -> dict[str, Any]:
    meta = record["metadata"]
    applies = meta.get("applies_to", {})
    body = {
        "id": record["id"],
        "kind": record["kind"],
        "language": record["language"],
        "purposes": meta["purposes"],
        "tables": applies.get("tables", []),
        "columns": applies.get("columns", []),
        "concepts": applies.get("concepts", []),
        "title": record["title"],
        "payload": record["payload"],
        "path": record["path"],
        "content_hash": record["content_hash"],
        "provenance": record["provenance"],
        "provenance_kind": record["provenance_kind"],
    }
    body["entry_hash"] = hashlib.sha256(canonical_json(body)).hexdigest()
    return body


def load_embedder(spec: str | None) -> Embedder:
    """``module:factory`` from the installation, or the built-in term embedder."""
    if not spec:
        return TermEmbedder()
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)()  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as exc:
        raise DescriptorError(
            f"evidence.activation.embedder {spec!r} cannot be loaded: {exc}"
        ) from None


class QdrantBackend:
    def __init__(self, layout: Layout, settings: dict[str, Any], client: Any = None) -> None:
        self.layout = layout
        self.collection = settings.get("collection", "evidence")
        self.embedder = load_embedder(settings.get("embedder"))
        self.settings = settings
        self._client = client

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
            if self.settings.get("url"):
                import os

                key_env = self.settings.get("api_key_env")
                self._client = QdrantClient(
                    url=self.settings["url"], api_key=os.environ.get(key_env) if key_env else None
                )
            else:
                path = self.settings.get("path") or str(self.layout.cache / "qdrant")
                self._client = QdrantClient(path=path)
        return self._client

    def _ensure_collection(self) -> None:
        from qdrant_client import models

        if self.client.collection_exists(self.collection):
            return
        if self.embedder.sparse:
            self.client.create_collection(
                self.collection,
                vectors_config={},
                sparse_vectors_config={VECTOR: models.SparseVectorParams()},
            )
        else:
            self.client.create_collection(
                self.collection,
                vectors_config={
                    VECTOR: models.VectorParams(
                        size=int(self.embedder.dim or 0), distance=models.Distance.COSINE
                    )
                },
            )
        if self.settings.get("url"):  # local mode filters without indexes (and warns on them)
            for field in ("kind", "language", "purposes", "tables", "provenance_kind"):
                self.client.create_payload_index(
                    self.collection, field, models.PayloadSchemaType.KEYWORD
                )

    def entries(self) -> dict[str, dict[str, Any]]:
        """What the collection holds: unit id -> payload (id, content_hash, entry_hash)."""
        if not self.client.collection_exists(self.collection):
            return {}
        out: dict[str, dict[str, Any]] = {}
        offset = None
        while True:
            points, offset = self.client.scroll(
                self.collection,
                limit=1024,
                offset=offset,
                with_vectors=False,
                with_payload=["id", "content_hash", "entry_hash"],
            )
            for p in points:
                out[p.payload["id"]] = dict(p.payload)
            if offset is None:
                return out

    def holds(self, snapshot: Snapshot) -> bool:
        """True when the collection holds exactly the snapshot's units and contents."""
        held = {uid: p.get("content_hash") for uid, p in self.entries().items()}
        return held == {e.id: e.content_hash for e in snapshot.entries()}

    def __call__(self, snapshot: Snapshot) -> None:
        from qdrant_client import models

        try:
            self._ensure_collection()
            held = self.entries()
            records = list(snapshot.records())
            changed = [
                r
                for r in records
                if held.get(r["id"], {}).get("entry_hash") != payload_of(r)["entry_hash"]
            ]
            for start in range(0, len(changed), BATCH):
                batch = changed[start : start + BATCH]
                vectors = self.embedder.embed([_text(r) for r in batch])
                points = []
                for r, v in zip(batch, vectors, strict=True):
                    vec = (
                        models.SparseVector(indices=v.indices, values=v.values)
                        if self.embedder.sparse
                        else v
                    )  # type: ignore[union-attr]
                    points.append(
                        models.PointStruct(
                            id=point_id(r["id"]), vector={VECTOR: vec}, payload=payload_of(r)
                        )
                    )
                self.client.upsert(self.collection, points=points, wait=True)
            gone = sorted(set(held) - {r["id"] for r in records})
            if gone:
                self.client.delete(
                    self.collection,
                    points_selector=models.PointIdsList(points=[point_id(u) for u in gone]),
                    wait=True,
                )
            self.last_written = len(changed)
            self.last_deleted = len(gone)
        except ActivationError:
            raise
        except Exception as exc:  # qdrant raises transport and API errors of many types
            raise ActivationError(f"qdrant activation failed: {exc}") from None

    def search(
        self, query: str, *, kind: str | None = None, purpose: str | None = None, limit: int = 10
    ) -> list[dict[str, Any]]:
        from qdrant_client import models

        vec = self.embedder.embed([query])[0]
        must = []
        if kind:
            must.append(models.FieldCondition(key="kind", match=models.MatchValue(value=kind)))
        if purpose:
            must.append(
                models.FieldCondition(key="purposes", match=models.MatchValue(value=purpose))
            )
        q = (
            models.SparseVector(indices=vec.indices, values=vec.values)
            if self.embedder.sparse
            else vec
        )  # type: ignore[union-attr]
        res = self.client.query_points(
            self.collection,
            query=q,
            using=VECTOR,
            limit=limit,
            query_filter=models.Filter(must=must) if must else None,
        )
        return [{"id": p.payload["id"], "score": p.score, "payload": p.payload} for p in res.points]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
