"""The server writes nothing under a workspace, and with the qdrant backend it keeps no
index of its own: a restarted server answers exactly as the first one did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import consolidate, http_server

KNOWN = "evidence:clinical:giornate-di-degenza"


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``root`` with its size, mtime and inode (a write changes one)."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _session(server: Any) -> list[Any]:
    """One fixed round of questions, every verb of the JSON API."""
    with server.client() as http:
        answers = [
            http.get("/v1/search", params={"query": q, "limit": 5}).json()
            for q in ("degenza", "ricoveri validi", "diagnosis role")
        ]
        answers.append(http.get(f"/v1/units/{KNOWN}").json())
        answers.append(http.get("/v1/units/evidence:clinical:nope").json())
        answers.append(http.get("/v1/evidence-for", params={"tables": "admissions"}).json())
        cited = {"cited": [KNOWN], "retrieved": [KNOWN, "evidence:clinical:sdo"]}
        answers.append(http.post("/v1/cite-check", json=cited).json())
        answers.append(http.get("/v1/health").json())
    return answers


def test_serving_writes_nothing_under_the_workspace(served: Path) -> None:
    before = _tree(served)
    with http_server(served) as server:
        answers = _session(server)
    assert [a["ok"] for a in answers] == [True] * 4 + [False] + [True] * 3
    assert _tree(served) == before


def test_with_qdrant_a_restarted_server_answers_identically(
    workspace: Path, tmp_path: Path
) -> None:
    pytest.importorskip("qdrant_client")
    activation = {"kind": "qdrant", "path": str(tmp_path / "qdrant"), "collection": "psd"}
    installation = tmp_path / "installation.yaml"
    installation.write_text(
        json.dumps({"installation_version": 1, "evidence": {"activation": activation}}), "utf-8"
    )
    consolidate(workspace, {"activation": activation})
    assert not (workspace / ".evidence-cache/index.sqlite").exists()  # no index but Qdrant's
    before = _tree(workspace)
    rounds = []
    for _ in range(2):
        with http_server(workspace, installation=installation) as server:
            rounds.append(_session(server))
    first, second = rounds
    assert first == second
    assert first[0]["result"]["hits"] and first[0]["result"]["mode"] == "bm25"
    assert _tree(workspace) == before
