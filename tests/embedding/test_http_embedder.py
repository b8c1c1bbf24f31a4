"""``kind: http`` against a real loopback /v1/embeddings server backed by all-MiniLM-L6-v2:
batching, retries with backoff, timeouts, refused requests, and the key kept secret."""

from __future__ import annotations

from typing import Any

import pytest
from embed_server import ServerState
from helpers import codes

from evidence_tool.embedding import embedder_for
from evidence_tool.embedding.vectors import dot
from evidence_tool.errors import EmbeddingError

KEY = "sk-loopback-7c1e9a"


def _embedder(url: str, **settings: Any) -> Any:
    return embedder_for(
        {"kind": "http", "url": url, "model": "minilm", "dimensions": 384, **settings}
    )


def test_texts_go_in_batches_of_batch_size_in_order(
    server: tuple[str, ServerState], minilm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, state = server
    monkeypatch.setenv("EMBED_KEY", KEY)
    texts = [f"ricoveri ordinari del reparto {n}" for n in range(17)]
    vectors = _embedder(url, batch_size=4, api_key_env="EMBED_KEY").embed(texts)
    assert [len(r["input"]) for r in state.requests] == [4, 4, 4, 4, 1]
    assert {r["auth"] for r in state.requests} == {f"Bearer {KEY}"}
    # The server answers out of order: each vector is its own text's (the model's own).
    expected = minilm.embed(texts)
    assert len(vectors) == 17
    assert all(dot(v, e) > 0.999 for v, e in zip(vectors, expected, strict=True))


def test_a_service_failing_twice_then_answering_is_retried(
    server: tuple[str, ServerState],
) -> None:
    url, state = server
    state.fail_next, state.fail_status = 2, 429
    vectors = _embedder(url, retries=3, backoff_s=0.01).embed(["degenza media", "DRG"])
    assert len(vectors) == 2
    assert [r["status"] for r in state.requests] == [429, 429, 200]


def test_attack_service_failing_past_the_retries_echoes_the_key(
    server: tuple[str, ServerState], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, state = server
    monkeypatch.setenv("EMBED_KEY", KEY)
    state.fail_next, state.fail_status = 100, 503
    embedder = _embedder(url, retries=2, backoff_s=0.01, api_key_env="EMBED_KEY")
    with pytest.raises(EmbeddingError) as err:
        embedder.embed(["pazienti dimessi"])
    assert codes(err.value) == ["E402"]
    assert len(state.requests) == 3  # one try and two retries, then no more
    assert "503" in err.value.message and "overloaded" in err.value.message
    assert KEY not in err.value.message


def test_a_refused_request_is_not_retried(server: tuple[str, ServerState]) -> None:
    url, state = server
    state.fail_next, state.fail_status = 100, 401
    with pytest.raises(EmbeddingError, match="refused"):
        _embedder(url, retries=4, backoff_s=0.01).embed(["x"])
    assert len(state.requests) == 1


def test_a_stalled_service_times_out_on_every_try(server: tuple[str, ServerState]) -> None:
    url, state = server
    state.sleep_s = 3.0
    with pytest.raises(EmbeddingError, match="timed out") as err:
        _embedder(url, timeout_s=0.3, retries=1, backoff_s=0.01).embed(["esito"])
    assert codes(err.value) == ["E402"]
    assert len(state.requests) == 2


def test_vectors_of_another_size_are_refused(server: tuple[str, ServerState]) -> None:
    url, _ = server
    with pytest.raises(EmbeddingError, match="384 dimension"):
        _embedder(url, dimensions=768).embed(["x"])


def test_a_dead_port_fails_with_e402(server: tuple[str, ServerState]) -> None:
    url, _ = server
    dead = url.rsplit(":", 1)[0] + ":9/v1/embeddings"  # the discard port: nobody listens
    with pytest.raises(EmbeddingError) as err:
        _embedder(dead, retries=1, backoff_s=0.01).embed(["x"])
    assert codes(err.value) == ["E402"]
