"""The server ranks as `tht ... search` does: with the workspace's adopted search settings
(workspace.yaml `retrieval`, written by `eval --adopt`), not the built-in defaults."""

from __future__ import annotations

from pathlib import Path

from cli_runner import tht

from evidence_tool.serve import EvidenceService, serve_settings


def _adopt(root: Path, mode: str) -> None:
    descriptor = root / "workspace.yaml"
    descriptor.write_text(descriptor.read_text("utf-8") + f"retrieval:\n  mode: {mode}\n", "utf-8")


def test_the_served_workspace_carries_the_adopted_settings(served: Path) -> None:
    _adopt(served, "dense")
    (ws,) = serve_settings(None, str(served)).workspaces
    assert ws.retrieval == {"mode": "dense"}


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
