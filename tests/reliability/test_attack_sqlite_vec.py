"""Attack: the ``vec`` extra is installed but its extension cannot load (a wheel for another
platform, a truncated download).  Every command falls back to the plain-Python dense
ranking with W702 and answers as before: never a traceback, never a lost index.

The index is built with the real sqlite-vec in this process; the broken install runs in
real subprocesses whose ``sqlite_vec`` package loads a file that is not a shared library
through SQLite's own ``load_extension``."""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers import envelope

from evidence_tool.activation import vec

DIM = 24
QUERY = "length of stay of the admission in days"
BROKEN_PACKAGE = """
import os

def loadable_path():
    return os.path.join(os.path.dirname(__file__), "vec0")

def load(conn):
    conn.load_extension(loadable_path())
"""


def _encode(text: str) -> list[float]:
    """Deterministic bag-of-words vectors: hashed words, unit length (no model needed)."""
    out = [0.0] * DIM
    for word in re.findall(r"\w+", text.lower()):
        out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM] += 1.0
    norm = math.sqrt(sum(x * x for x in out)) or 1.0
    return [x / norm for x in out]


@pytest.fixture
def service() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = [{"index": i, "embedding": _encode(t)} for i, t in enumerate(body["input"])]
            raw = json.dumps({"data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/embeddings"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def _broken_extra(tmp: Path) -> Path:
    """A ``sqlite_vec`` package whose extension file is not a shared library."""
    folder = tmp / "broken-extra"
    (folder / "sqlite_vec").mkdir(parents=True)
    (folder / "sqlite_vec" / "__init__.py").write_text(BROKEN_PACKAGE)
    (folder / "sqlite_vec" / "vec0.so").write_bytes(b"\x7fELF" + b"\x00" * 40)  # truncated
    return folder


def _schema(index: Path) -> tuple[set[str], dict[str, str]]:
    con = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        names = {row[0] for row in con.execute("SELECT name FROM sqlite_master")}
        return names, dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()


def test_attack_sqlite_vec_extension_that_cannot_load_falls_back_with_w702(
    cli: Callable[[list[str]], Any],
    workspace: Path,
    tmp_path: Path,
    service: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("THT_ACTOR", "alice")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)
    inst = tmp_path / "installation.json"
    settings = {"kind": "http", "url": service, "model": "hashed", "dimensions": DIM}
    inst.write_text(json.dumps({"installation_version": 1, "evidence": {"embedding": settings}}))
    base = ["--installation", str(inst), "workspace", "evidence"]
    tail = ["--workspace-root", str(workspace), "--json"]
    index = workspace / ".evidence-cache" / "index.sqlite"

    assert vec.driver() is not None  # the real extra, in this process
    assert cli([*base, "consolidate", *tail]).exit_code == 0
    assert "vec_units" in _schema(index)[0]
    searches = {
        mode: cli([*base, "search", QUERY, "--mode", mode, "--limit", "12", *tail])
        for mode in ("dense", "hybrid")
    }
    assert all(r.json["result"]["dense_path"] == "vec" for r in searches.values())

    broken = _broken_extra(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "THT_ACTOR": "alice", "PYTHONPATH": str(broken)}

    def tht(*args: str) -> Any:
        out = subprocess.run(
            [sys.executable, "-c", "from evidence_tool.cli.main import main; main()",
             *base, *args, *tail],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert "Traceback" not in out.stderr, out.stderr
        return out

    def w702(data: dict[str, Any]) -> list[str]:
        return [w["message"] for w in data["warnings"] if w["code"] == "W702"]

    runs = 0
    for mode, served in searches.items():
        out = tht("search", QUERY, "--mode", mode, "--limit", "12")
        data = envelope(out.stdout)
        assert out.returncode == 0, out.stdout
        assert data["result"]["dense_path"] == "python"
        assert data["result"]["hits"] == served.json["result"]["hits"]  # the same answer
        [message] = w702(data)
        assert "vec0" in message and "plain Python" in message
        runs += 1
    assert runs == 2

    status = tht("status")
    data = envelope(status.stdout)
    assert status.returncode == 0 and len(w702(data)) == 1
    assert data["result"]["search_index"]["dense_path"] == "python"

    # An edit: the index holding vec_units cannot be edited without the extension, so it
    # is rebuilt whole, without them; the previous index served until then.
    unit = sorted((workspace / "evidence" / "curated").rglob("*.md"))[3]
    unit.write_text(unit.read_text(encoding="utf-8").replace("\n# ", "\n# Edited ", 1))
    done = tht("consolidate")
    data = envelope(done.stdout)
    assert done.returncode == 0, done.stdout
    assert data["result"]["status"] == "activated" and len(w702(data)) == 1
    names, meta = _schema(index)
    assert "vec_units" not in names and "vec" not in meta and "vectors" in names
    again = envelope(tht("search", QUERY, "--mode", "dense").stdout)
    assert again["result"]["dense_path"] == "python" and again["result"]["hits"]
