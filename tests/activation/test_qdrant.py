"""The ``qdrant`` backend, with qdrant-client in local mode (a real client on a tmp path).

Library tests wrap the real client in a proxy that records upserts; CLI tests
configure the backend through ``--installation`` and tamper with the collection
through the client between commands (local mode allows one client per path, so
each is closed before the CLI opens its own).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import (
    ACTOR,
    FORMULA,
    FORMULA_PATH,
    Tht,
    active_entries,
    active_records,
    add_word,
    stage_document,
    stage_retirement,
    state,
    tokens,
    unit_file,
    write_installation,
)
from helpers import codes

from evidence_tool.activation.qdrant_index import VECTOR, QdrantBackend, point_id
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import DescriptorError, NotReadyError
from evidence_tool.workspace.layout import Layout

qdrant_client = pytest.importorskip("qdrant_client")
models = qdrant_client.models

COLLECTION = "psd_test"
DELETED = "evidence:clinical:sdo"
RETIRED = "evidence:clinical:numero-nosologico"


class CountingClient:
    """A real client whose ``upsert`` and ``delete`` calls are recorded."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.upserts: list[list[str]] = []
        self.deletes: int = 0

    def upsert(self, collection_name: str, points: list[Any], **kw: Any) -> Any:
        self.upserts.append([str(p.id) for p in points])
        return self.real.upsert(collection_name, points=points, **kw)

    def delete(self, collection_name: str, **kw: Any) -> Any:
        self.deletes += 1
        return self.real.delete(collection_name, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@contextmanager
def opened(path: Path) -> Iterator[Any]:
    client = qdrant_client.QdrantClient(path=str(path))
    try:
        yield client
    finally:
        client.close()


def _all_points(client: Any, with_vectors: bool = False) -> dict[str, Any]:
    points, offset = client.scroll(COLLECTION, limit=10_000, with_vectors=with_vectors)
    assert offset is None
    return {str(p.id): p for p in points}


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    return {"kind": "qdrant", "path": str(tmp_path / "qdrant"), "collection": COLLECTION}


@pytest.fixture
def backend(workspace: Path, settings: dict[str, Any]) -> Iterator[QdrantBackend]:
    real = qdrant_client.QdrantClient(path=settings["path"])
    yield QdrantBackend(Layout.at(workspace), settings, client=CountingClient(real))
    real.close()


def _consolidate(root: Path, backend: QdrantBackend) -> dict[str, Any]:
    return LocalEvidenceArchive(root).consolidate(ACTOR, backend).to_json()


# -- library: what is written ------------------------------------------------------------


def test_every_active_unit_is_upserted_with_typed_payload_and_provenance(
    workspace: Path, backend: QdrantBackend
) -> None:
    source_id = stage_document(workspace, FORMULA, "giornate di degenza")
    result = _consolidate(workspace, backend)
    assert result["status"] == "activated"
    assert backend.last_written == 48 and backend.last_deleted == 0
    assert [len(batch) for batch in backend.client.upserts] == [48]  # one batched call

    records = {r["id"]: r for r in active_records(workspace)}
    points = _all_points(backend.client, with_vectors=True)
    assert set(points) == {point_id(uid) for uid in records}
    for uid, r in records.items():
        p = points[point_id(uid)].payload
        assert p["id"] == uid and p["kind"] == r["kind"] and p["language"] == r["language"]
        assert p["purposes"] == r["metadata"]["purposes"]
        assert p["tables"] == r["metadata"].get("applies_to", {}).get("tables", [])
        assert p["title"] == r["title"] and p["payload"] == r["payload"]
        assert p["path"] == r["path"] and p["content_hash"] == r["content_hash"]
        assert p["provenance"] == r["provenance"]
        assert p["provenance_kind"] == r["provenance"]["kind"]
        vector = points[point_id(uid)].vector[VECTOR]
        assert vector.indices and len(vector.indices) == len(vector.values)
    formula = points[point_id(FORMULA)].payload
    assert formula["provenance_kind"] == "document"
    assert formula["provenance"]["source_id"] == source_id
    assert formula["provenance"]["excerpts"] == ["giornate di degenza"]
    assert {p.payload["provenance_kind"] for p in points.values()} == {"manual", "document"}


def test_reactivating_the_same_revision_writes_no_point(
    workspace: Path, backend: QdrantBackend
) -> None:
    _consolidate(workspace, backend)
    client = backend.client
    assert len(client.upserts) == 1
    snapshot = LocalEvidenceArchive(workspace).active_snapshot()
    assert snapshot is not None

    backend(snapshot)
    assert backend.last_written == 0 and backend.last_deleted == 0
    assert len(client.upserts) == 1 and client.deletes == 0
    assert _consolidate(workspace, backend)["status"] == "unchanged"
    assert len(client.upserts) == 1

    # One edited unit: one point written, nothing else.
    add_word(workspace / FORMULA_PATH, "riveduto")
    assert _consolidate(workspace, backend)["status"] == "activated"
    assert client.upserts[1:] == [[point_id(FORMULA)]] and backend.last_written == 1


def test_points_of_deleted_and_retired_units_are_deleted(
    workspace: Path, backend: QdrantBackend
) -> None:
    _consolidate(workspace, backend)
    unit_file(workspace, DELETED).unlink()
    stage_retirement(workspace, RETIRED)
    unit_file(workspace, RETIRED).unlink()
    result = _consolidate(workspace, backend)
    assert result["status"] == "activated"
    assert sorted(result["changes"]["deleted"]) == sorted([DELETED, RETIRED])
    assert backend.last_deleted == 2 and backend.last_written == 0
    points = _all_points(backend.client)
    assert point_id(DELETED) not in points and point_id(RETIRED) not in points
    assert {p.payload["id"] for p in points.values()} == set(active_entries(workspace))
    assert len(points) == 46
    reasons = {
        d.id: d.reason
        for d in LocalEvidenceArchive(workspace).active_snapshot().deletions  # type: ignore[union-attr]
    }
    assert reasons == {DELETED: "removed", RETIRED: "retired-by-replace"}


@pytest.mark.parametrize(
    ("word", "kind", "purpose"),
    [
        ("degenza", "formula", None),
        ("ricovero", None, "disambiguation"),
        ("ricovero", "enum", "sql_generation"),
        ("admission", "domain", None),
    ],
)
def test_search_filters_by_kind_and_purpose_in_the_payload(
    workspace: Path, backend: QdrantBackend, word: str, kind: str | None, purpose: str | None
) -> None:
    _consolidate(workspace, backend)
    expected = {
        r["id"]
        for r in active_records(workspace)
        if word in tokens(r, identifiers=True)
        and (kind is None or r["kind"] == kind)
        and (purpose is None or purpose in r["metadata"]["purposes"])
    }
    assert expected
    hits = backend.search(word, kind=kind, purpose=purpose, limit=100)
    assert {h.payload["id"] for h in hits} == expected
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_repair_writes_only_damaged_points_and_deletes_foreign_ones(
    workspace: Path, backend: QdrantBackend
) -> None:
    _consolidate(workspace, backend)
    real = backend.client.real
    _tamper(real)
    snapshot = LocalEvidenceArchive(workspace).active_snapshot()
    assert snapshot is not None and not backend.holds(snapshot)
    assert _consolidate(workspace, backend)["status"] == "reindexed"
    assert sorted(backend.client.upserts[-1]) == sorted([point_id(DELETED), point_id(FORMULA)])
    assert backend.last_written == 2 and backend.last_deleted == 2
    assert backend.holds(snapshot)


# -- a dense embedding service plugged in through evidence.activation.embedder ----------

DENSE = '''
import zlib

class Dense:
    """A toy dense embedder: 32 buckets of hashed words."""

    sparse = False
    dim = 32

    def embed(self, texts):
        out = []
        for text in texts:
            v = [0.0] * self.dim
            for w in text.lower().split():
                v[zlib.crc32(w.encode()) % self.dim] += 1.0
            out.append(v if any(v) else [1.0] + [0.0] * (self.dim - 1))
        return out

def make():
    return Dense()

class NoDim(Dense):
    dim = None

def broken():
    return NoDim()

def terms_again():
    from evidence_tool.activation.qdrant_index import TermEmbedder
    return TermEmbedder()
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "toy_dense_embedder.py").write_text(DENSE)
    monkeypatch.syspath_prepend(str(tmp_path / "plug"))
    return "toy_dense_embedder"


def test_a_dense_embedder_plugs_in_by_module_and_factory(
    workspace: Path, settings: dict[str, Any], plugin: str
) -> None:
    with opened(Path(settings["path"])) as client:
        dense = QdrantBackend(
            Layout.at(workspace), {**settings, "embedder": "toy_dense_embedder:make"}, client
        )
        assert _consolidate(workspace, dense)["status"] == "reindexed"
        info = client.get_collection(COLLECTION)
        assert info.config.params.vectors[VECTOR].size == 32
        assert dense.last_written == 48
        hits = dense.search("giornate di degenza", kind="formula", limit=3)
        assert hits and all(h.payload["kind"] == "formula" for h in hits)
    with pytest.raises(DescriptorError, match="'dim' must be a positive integer"):
        QdrantBackend(Layout.at(workspace), {**settings, "embedder": "toy_dense_embedder:broken"})
    with pytest.raises(DescriptorError, match="cannot be loaded"):
        QdrantBackend(Layout.at(workspace), {**settings, "embedder": "toy_dense_embedder:nope"})


def test_another_embedder_re_embeds_every_unit(
    workspace: Path, backend: QdrantBackend, settings: dict[str, Any], plugin: str
) -> None:
    """Vectors of two embedders never mix: the embedder's name is part of each entry."""
    _consolidate(workspace, backend)
    other = QdrantBackend(
        Layout.at(workspace), {**settings, "embedder": f"{plugin}:terms_again"}, backend.client
    )
    assert _consolidate(workspace, other)["status"] == "reindexed"
    assert other.last_written == 48
    assert _consolidate(workspace, other)["status"] == "unchanged"
    embedders = {p.payload["embedder"] for p in _all_points(backend.client).values()}
    assert embedders == {f"{plugin}:terms_again"}


# -- the CLI with an installation descriptor ----------------------------------------------


def _tamper(client: Any) -> str:
    """Missing, stale and two foreign points; returns the foreign point's id."""
    client.delete(COLLECTION, points_selector=models.PointIdsList(points=[point_id(DELETED)]))
    # Only content_hash changes: entry_hash still matches, yet the point is stale.
    client.set_payload(COLLECTION, payload={"content_hash": "0" * 64}, points=[point_id(FORMULA)])
    vector = {VECTOR: models.SparseVector(indices=[7], values=[1.0])}
    foreign = str(uuid.uuid4())
    client.upsert(
        COLLECTION,
        points=[
            models.PointStruct(id=foreign, vector=vector, payload={"id": "evidence:ghost"}),
            models.PointStruct(id=str(uuid.uuid4()), vector=vector, payload={"note": "no id"}),
        ],
    )
    return foreign


def test_verify_index_reports_drift_and_consolidate_repairs_it(
    workspace: Path, tht: Tht, tmp_path: Path, settings: dict[str, Any]
) -> None:
    inst = write_installation(tmp_path / "installation.yaml", settings)
    first = tht("consolidate", installation=inst).json["result"]
    assert first["status"] == "reindexed" and first["revision"] == state(workspace).active
    clean = tht("verify", "--index", installation=inst)
    assert clean.exit_code == 0
    assert clean.json["result"]["index"] | {"active": None} == {
        "backend": "qdrant",
        "active": None,
        "checked": True,
        "expected": 48,
        "held": 48,
        "drift": 0,
    }

    with opened(Path(settings["path"])) as client:
        foreign = _tamper(client)
    result = tht("verify", "--index", installation=inst)
    assert result.exit_code == 7
    assert codes(result.json) == ["E702"] * 4
    by_unit = {e["unit_id"]: e["message"] for e in result.json["errors"]}
    assert "missing" in by_unit.pop(DELETED)
    assert "stale" in by_unit.pop(FORMULA)
    assert f"evidence:ghost@point:{foreign}" in by_unit
    assert all("not active" in m for m in by_unit.values()) and len(by_unit) == 2

    assert tht("consolidate", installation=inst).json["result"]["status"] == "reindexed"
    assert tht("verify", "--index", installation=inst).exit_code == 0
    with opened(Path(settings["path"])) as client:
        points = _all_points(client)
    assert set(points) == {point_id(uid) for uid in active_entries(workspace)}


def test_an_unreachable_server_fails_activation_and_keeps_the_candidate_pending(
    workspace: Path, tht: Tht, tmp_path: Path
) -> None:
    inst = write_installation(
        tmp_path / "installation.yaml",
        {"kind": "qdrant", "url": "http://127.0.0.1:9", "collection": COLLECTION},
    )
    add_word(workspace / FORMULA_PATH, "riveduto")
    before = state(workspace).active
    result = tht("consolidate", installation=inst)
    assert result.exit_code == 4 and codes(result.json) == ["E401"]
    assert state(workspace).active == before
    assert state(workspace).pending == result.json["result"]["revision"]
    # Reading the collection fails the same way: a coded error, never an internal one.
    verified = tht("verify", "--index", installation=inst)
    assert verified.exit_code == 7 and codes(verified.json) == ["E702"]
    assert "cannot be read" in verified.json["errors"][0]["message"]
    assert tht("consolidate", "--no-activate").exit_code == 0  # the snapshot is recorded
    assert tht("consolidate", installation=inst).exit_code == 4


# qdrant-client (1.20) leaks its '.lock' file handle when the folder is locked: it raises
# from the constructor without closing it.  Upstream, harmless here; not ours to fix.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_collection_locked_by_another_local_client_is_reported_not_crashed(
    workspace: Path, tht: Tht, tmp_path: Path, settings: dict[str, Any]
) -> None:
    inst = write_installation(tmp_path / "installation.yaml", settings)
    assert tht("consolidate", installation=inst).exit_code == 0
    with opened(Path(settings["path"])):  # local mode: one client per folder
        verified = tht("verify", "--index", installation=inst)
        assert verified.exit_code == 7 and codes(verified.json) == ["E702"]
        consolidated = tht("consolidate", installation=inst)
        assert consolidated.exit_code == 4 and codes(consolidated.json) == ["E401"]
    assert tht("verify", "--index", installation=inst).exit_code == 0


def test_a_collection_never_built_is_a_not_ready_error_naming_it_and_consolidate(
    backend: QdrantBackend,
) -> None:
    # Before any consolidate the collection is absent: search and eval both refuse so.
    with pytest.raises(NotReadyError) as caught:
        backend.require_collection()
    assert f"'{COLLECTION}' does not exist yet" in caught.value.message
    assert "tht workspace evidence consolidate" in caught.value.message
