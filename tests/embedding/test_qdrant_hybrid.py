"""Qdrant (local mode, a real client on a tmp path) with dense + sparse named vectors in
one collection and Qdrant's own RRF fusion, searched through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from embed_server import ServerState
from helpers import envelope

from evidence_tool.archive.local import LocalEvidenceArchive

qdrant_client = pytest.importorskip("qdrant_client")


def _installation(tmp: Path, url: str) -> Path:
    data = {
        "installation_version": 1,
        "evidence": {
            "activation": {"kind": "qdrant", "path": str(tmp / "qdrant"), "collection": "hyb"},
            "embedding": {"kind": "http", "url": url, "model": "minilm", "dimensions": 384},
        },
    }
    path = tmp / "installation.yaml"
    path.write_text(json.dumps(data) + "\n")
    return path


@pytest.fixture
def tht(cli: Callable[[list[str]], Any], workspace: Path) -> Callable[..., Any]:
    def run(*args: str, installation: Path) -> Any:
        argv = ["--installation", str(installation), "workspace", "evidence", *args]
        result = cli([*argv, "--workspace-root", str(workspace), "--json"])
        envelope(result)
        return result

    return run


def test_hybrid_search_fuses_dense_and_sparse_in_qdrant(
    workspace: Path,
    tht: Callable[..., Any],
    server: tuple[str, ServerState],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("THT_ACTOR", "alice")
    url, state = server
    inst = _installation(tmp_path, url)
    result = tht("consolidate", installation=inst)
    assert result.exit_code == 0, result.stdout
    snap = LocalEvidenceArchive(workspace).active_snapshot()
    assert snap is not None
    n = len(list(snap.entries()))
    assert state.texts == n
    client = qdrant_client.QdrantClient(path=str(tmp_path / "qdrant"))
    try:
        params = client.get_collection("hyb").config.params
        assert params.vectors["dense"].size == 384 and "terms" in params.sparse_vectors
        assert client.count("hyb", exact=True).count == n
    finally:
        client.close()
    ranked: dict[str, list[dict[str, Any]]] = {}
    for mode in ("bm25", "dense", "hybrid"):
        found = tht(
            "search", "giornate di degenza", "--mode", mode, "--limit", "1000", installation=inst
        )
        assert found.exit_code == 0, found.stdout
        assert found.json["result"]["mode"] == mode
        ranked[mode] = found.json["result"]["hits"]
        assert ranked[mode]
        assert (ranked[mode][0]["score"] == 1.0) is (mode == "bm25")  # dense: the cosine
        low = -1 if mode == "dense" else 0  # a cosine may be negative
        assert all(low <= h["score"] <= 1 for h in ranked[mode])
    assert len(ranked["dense"]) == n  # every point has a dense vector
    # Hybrid holds what either ranking found: both normalised and mixed (fusion.py).
    assert {h["id"] for h in ranked["hybrid"]} == {h["id"] for h in ranked["dense"]}
    # A filter only the last-ranked unit's kind passes still yields its best unit.
    last = ranked["dense"][-1]
    wanted = next(h for h in ranked["dense"] if h["kind"] == last["kind"])
    only = tht(
        "search",
        "giornate di degenza",
        "--mode",
        "dense",
        "--kind",
        last["kind"],
        "--limit",
        "1",
        installation=inst,
    )
    assert [h["id"] for h in only.json["result"]["hits"]] == [wanted["id"]]
    assert tht("search", "giornate", installation=inst).json["result"]["mode"] == "hybrid"
