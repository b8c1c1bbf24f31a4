"""Fixtures for source tests: the HTTP document server and a network installation."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from source_helpers import DRAFT, DocServer, installation


@pytest.fixture(scope="session")
def _doc_server() -> Iterator[DocServer]:
    server = DocServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def http_server(_doc_server: DocServer) -> DocServer:
    _doc_server.requests.clear()
    _doc_server.docs = {"doc": DRAFT}
    _doc_server.secret = ""
    return _doc_server


@pytest.fixture
def net_installation(tmp_path: Path) -> Callable[..., Path]:
    def make(**extra: Any) -> Path:
        network = {"allowed_hosts": ["127.0.0.1"], "timeout_s": 2, "max_bytes": 1024 * 1024}
        return installation(tmp_path, network=network, **extra)

    return make
