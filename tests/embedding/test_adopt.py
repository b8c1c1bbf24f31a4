"""``eval --adopt`` on the fixture set with all-MiniLM-L6-v2 behind a loopback service:
the choice is written into workspace.yaml (valid, reviewable), never loses to a part on
the questions it was chosen on, and ``search`` without ``--mode`` runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from embed_server import ServerState
from helpers import envelope

from evidence_tool.unit.yaml_strict import load_unique
from evidence_tool.workspace.descriptor import load_workspace_descriptor

QUESTIONS = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "questions.yaml"


@pytest.fixture
def tht(cli: Callable[[list[str]], Any], workspace: Path, tmp_path: Path) -> Callable[..., Any]:
    def run(*args: str, installation: Path | None = None) -> Any:
        argv = ["--installation", str(installation)] if installation else []
        result = cli(
            [*argv, "workspace", "evidence", *args, "--workspace-root", str(workspace), "--json"]
        )
        envelope(result)
        return result

    return run


def _installation(tmp: Path, url: str) -> Path:
    path = tmp / "inst.yaml"
    settings = {"kind": "http", "url": url, "model": "minilm", "dimensions": 384}
    path.write_text(json.dumps({"installation_version": 1, "evidence": {"embedding": settings}}))
    return path


def test_the_adopted_fusion_never_loses_and_search_runs_it(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    inst = _installation(tmp_path, server[0])
    assert tht("consolidate", installation=inst).exit_code == 0
    before = (workspace / "workspace.yaml").read_text()
    result = tht("eval", str(QUESTIONS), "--adopt", installation=inst)
    assert result.exit_code == 0, result.stdout
    adopted = result.json["result"]["adopted"]
    section = load_workspace_descriptor(workspace).retrieval
    assert section is not None and section["mode"] == adopted["mode"]
    # The descriptor keeps what it held and gains only the retrieval section.
    after = load_unique((workspace / "workspace.yaml").read_text()).value
    previous = load_unique(before).value
    assert {k: v for k, v in after.items() if k != "retrieval"} == previous
    figures = section["adopted"]["figures"]
    chosen = (
        f"hybrid {section['fusion']['method']} {section['fusion']['weight']:g}"
        if section["mode"] == "hybrid"
        else section["mode"]
    )
    for metric in ("recall", "mrr", "ndcg"):
        best_part = max(figures["bm25"][metric], figures["dense"][metric])
        assert figures[chosen][metric] >= best_part, (metric, figures)
    # eval's own hybrid run (after the adoption) uses the adopted fusion: same figures.
    if section["mode"] == "hybrid":
        runs = result.json["result"]["runs"][0]["modes"]
        hybrid = next(m for m in runs if m["mode"] == "hybrid")
        assert hybrid["recall"] == figures[chosen]["recall"]
        assert hybrid["mrr"] == figures[chosen]["mrr"]
    found = tht("search", "length of stay", installation=inst)
    assert found.json["result"]["mode"] == section["mode"]
    hybrid = tht("search", "length of stay", "--mode", "hybrid", installation=inst)
    hits = hybrid.json["result"]["hits"]
    lexical = [h for h in hits if h["bm25"] is not None]
    assert lexical and all(h["matched"] for h in lexical)  # the fields the words matched
    assert all(h["matched"] == [] for h in hits if h["bm25"] is None)


def test_a_hand_written_mode_is_what_search_runs(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    inst = _installation(tmp_path, server[0])
    assert tht("consolidate", installation=inst).exit_code == 0
    descriptor = workspace / "workspace.yaml"
    descriptor.write_text(descriptor.read_text() + "retrieval:\n  mode: bm25\n")
    found = tht("search", "length of stay", installation=inst)
    assert found.json["result"]["mode"] == "bm25"  # though the index holds vectors
    asked = tht("search", "length of stay", "--mode", "dense", installation=inst)
    assert asked.json["result"]["mode"] == "dense"  # --mode still wins
    descriptor.write_text(descriptor.read_text() + "  fusion: {method: zscore, weight: 2}\n")
    refused = tht("search", "length of stay", installation=inst)
    assert refused.exit_code == 2 and "retrieval.fusion" in refused.stdout
