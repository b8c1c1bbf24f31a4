"""One model pass for the questions a server's requests ask together (``serve``).

A server embeds one question per search; with several clients, questions arrive while
the model is busy with another.  ``Batched`` wraps an embedder: a caller that finds no
pass running runs one; callers arriving meanwhile queue, and when the pass ends the
first of them runs one pass for every queued question.  Nobody waits on a timer: a lone
question is embedded at once, as without the wrapper, and each caller gets exactly its
own texts' vectors, or the pass's error (a failing service degrades each search alike).

One pass over n questions costs far less than n passes (all-MiniLM-L6-v2 on ONNX
Runtime, one thread: 4.4 ms for one question, 24 ms for eight).  A question's vector
from a padded batch equals its vector alone on ONNX Runtime (the padding is masked out
and each row is computed alike: 0.0 apart on the bench's questions,
tests/embedding/test_batching.py); on sentence-transformers (torch) it may differ in the
last bits (up to 1.5e-7 a component measured), which can swap two hits only when their
scores are that close (docs/serve.md, "Questions embedded together").
"""

from __future__ import annotations

import threading

from evidence_tool.embedding import DenseEmbedder

MAX_TEXTS = 32  # a pass's texts at most: beyond it the batch's longest text dominates


class _Ask:
    __slots__ = ("done", "error", "lead", "texts", "vectors")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.done = threading.Event()
        self.lead = False  # woken to run the next pass, not with its answer
        self.vectors: list[list[float]] | None = None
        self.error: BaseException | None = None


class Batched:
    """``inner`` with concurrent ``embed`` calls joined into shared passes."""

    def __init__(self, inner: DenseEmbedder, max_texts: int = MAX_TEXTS) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.languages = getattr(inner, "languages", None)
        self.max_texts = max_texts
        self._lock = threading.Lock()
        self._queue: list[_Ask] = []
        self._running = False
        self.passes = 0  # model passes run (tests count them)

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        ask = _Ask(texts)
        with self._lock:
            self._queue.append(ask)
            lead = not self._running
            self._running = True
        while not lead:
            ask.done.wait()
            if not ask.lead:
                break
            ask.lead, lead = False, True
            ask.done.clear()
        if lead:
            self._lead(ask)
        if ask.error is not None:
            raise ask.error
        assert ask.vectors is not None
        return ask.vectors

    def _lead(self, mine: _Ask) -> None:
        """Run passes until ``mine`` is answered, then hand the queue to its first caller."""
        try:
            while not mine.done.is_set():
                with self._lock:
                    batch = self._take()
                self._pass(batch)
        finally:
            with self._lock:
                if self._queue:
                    nxt = self._queue[0]
                    nxt.lead = True
                    nxt.done.set()
                else:
                    self._running = False

    def _take(self) -> list[_Ask]:
        """The queue's first asks, up to ``max_texts`` texts (at least one ask)."""
        count, size = 0, 0
        for ask in self._queue:
            if count and size + len(ask.texts) > self.max_texts:
                break
            count, size = count + 1, size + len(ask.texts)
        batch, self._queue[:count] = self._queue[:count], []
        return batch

    def _pass(self, batch: list[_Ask]) -> None:
        texts = [t for ask in batch for t in ask.texts]
        try:
            vectors = self.inner.embed(texts)
            self.passes += 1
        except BaseException as exc:  # every caller of the pass gets its error
            for ask in batch:
                ask.error = exc
                ask.done.set()
            if not isinstance(exc, Exception):
                raise
            return
        start = 0
        for ask in batch:
            ask.vectors = vectors[start : start + len(ask.texts)]
            start += len(ask.texts)
            ask.done.set()
