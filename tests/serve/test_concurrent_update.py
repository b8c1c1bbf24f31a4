"""Searches that never pause do not keep another process's index update from committing.

SQLite's rollback journal lets a writer commit only once no reader holds the file; readers
of one process share one OS lock, so threads whose reads overlap without a gap would keep
it forever and the other process's ``consolidate`` would fail with "database is locked"
(E401).  The server's reads overlap, yet the update in place must commit.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

from serve_helpers import child_env, consolidate, tht_argv

from bench.generate import WORDS_EN, generate
from evidence_tool.activation.sqlite_index import INDEX_NAME, index_revision
from evidence_tool.archive.state import read_state
from evidence_tool.serve import EvidenceService, serve_settings

READERS = 8
MAX_SEARCHES = 20_000  # per reader: the loops are bounded by count, not by a clock


def test_an_index_update_elsewhere_commits_while_readers_search_without_pause(
    tmp_path: Path,
) -> None:
    root = generate(2000, tmp_path / "ws", seed=13)
    before = consolidate(root)
    index = root / ".evidence-cache" / INDEX_NAME
    inode = os.stat(index).st_ino
    service = EvidenceService(serve_settings(None, str(root)))

    started = threading.Event()
    stop = threading.Event()
    counts = [0] * READERS
    during = [0] * READERS  # searches answered while the other process ran
    failures: list[str] = []
    running = threading.Event()

    def read(n: int) -> None:
        words = WORDS_EN[n:] + WORDS_EN[:n]
        for i in range(MAX_SEARCHES):
            if stop.is_set():
                return
            # Many words the units share: most of the index's time is SQLite's.
            query = " ".join(words[(i + k) % len(words)] for k in range(0, 48, 4))
            try:
                service.search_evidence({"query": query, "mode": "bm25", "limit": 1})
            except Exception as exc:  # every failure is reported, none ends the others
                failures.append(f"{type(exc).__name__}: {exc}")
                return
            counts[n] += 1
            if running.is_set():
                during[n] += 1
            if counts[n] == 3:
                started.set()

    readers = [threading.Thread(target=read, args=(n,)) for n in range(READERS)]
    for t in readers:
        t.start()
    try:
        assert started.wait(120), failures
        edited = next(iter(sorted((root / "evidence/curated/glossary").glob("*.md"))))
        text = edited.read_text("utf-8")
        edited.write_text(text.replace("\n# ", "\n# Edited while served ", 1), "utf-8")
        running.set()
        done = subprocess.run(
            tht_argv(
                "workspace", "evidence", "consolidate", "--workspace-root", str(root), "--json"
            ),
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        running.clear()
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["status"] == "activated", result
    after = result["revision"]
    assert after != before
    assert read_state(root / "evidence/.local/state.yaml").active == after
    # Updated in place (the path that needs the readers' gap), not swapped for a new file.
    assert os.stat(index).st_ino == inode
    assert index_revision(index) == after
    assert failures == []
    # The readers really were searching while the update ran, every one of them.
    assert all(n > 0 for n in during), during
    assert sum(counts) >= READERS * 3


def test_the_read_gate_holds_new_reads_until_those_in_flight_are_done() -> None:
    from evidence_tool.serve.service import ReadGate

    gate = ReadGate()
    gate.DRAIN_AFTER_S = 0.0  # reads have overlapped too long as soon as two do
    release = threading.Event()
    inside = threading.Event()
    entered: list[str] = []

    def first() -> None:
        with gate.reading():
            entered.append("first")
            inside.set()
            release.wait(60)

    def second() -> None:
        with gate.reading():
            entered.append("second")

    a = threading.Thread(target=first)
    a.start()
    assert inside.wait(60)
    b = threading.Thread(target=second)
    b.start()
    for _ in range(6000):  # until the second read waits for the gap (bounded)
        if gate.drains:
            break
        threading.Event().wait(0.01)
    assert gate.drains == 1
    assert entered == ["first"]  # held back while the first read is in flight
    release.set()
    a.join(60)
    b.join(60)
    assert entered == ["first", "second"]
    with gate.reading():  # alone: no gap to make
        pass
    assert gate.drains == 1
