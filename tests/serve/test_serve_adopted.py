"""The server ranks as `tht ... search` does: with the workspace's adopted search settings
(workspace.yaml `retrieval`, written by `eval --adopt`), not the built-in defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import tht

from evidence_tool.activation.fusion import Retrieval
from evidence_tool.serve import EvidenceService, serve_settings


def _adopt(root: Path, mode: str) -> None:
    descriptor = root / "workspace.yaml"
    descriptor.write_text(descriptor.read_text("utf-8") + f"retrieval:\n  mode: {mode}\n", "utf-8")


def test_the_served_workspace_carries_the_adopted_settings(served: Path) -> None:
    _adopt(served, "dense")
    (ws,) = serve_settings(None, str(served)).workspaces
    assert ws.retrieval == Retrieval.from_json({"mode": "dense"})
    assert ws.retrieval.mode == "dense"


def test_the_adopted_settings_are_decoded_once_not_per_search(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _adopt(served, "bm25")
    service = EvidenceService(serve_settings(None, str(served)))
    decoded = []
    real = Retrieval.from_json.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Retrieval], raw: object) -> Retrieval:
        decoded.append(raw)
        return real(cls, raw)  # type: ignore[no-any-return]

    monkeypatch.setattr(Retrieval, "from_json", classmethod(counted))
    for query in ("ricovero", "reparto", "esame"):
        answer = service.search_evidence({"query": query, "limit": 3})
        assert answer.result["mode"] == "bm25"
        service.searches_in_memory({"query": query})  # the HTTP face asks it first
    assert decoded == []


def test_an_adopted_bm25_answers_as_search_does(served: Path) -> None:
    _adopt(served, "bm25")
    cli = tht(served, "search", "ricovero", "--limit", "5")
    assert cli.exit_code == 0, cli.stdout + cli.stderr
    answer = EvidenceService(serve_settings(None, str(served))).search_evidence(
        {"query": "ricovero", "limit": 5}
    )
    ids = [h["id"] for h in answer.result["hits"]]  # type: ignore[index, union-attr]
    assert ids and ids == [h["id"] for h in cli.json["result"]["hits"]]
    assert answer.result["mode"] == "bm25"  # type: ignore[index, call-overload]
