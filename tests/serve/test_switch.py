"""A new activation by another process is served without a restart, no answer mixes two
revisions, and a deleted unit is never served again (get_evidence: retired)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from serve_helpers import ACTOR, child_env, http_server, tht_argv

from evidence_tool.archive import LocalEvidenceArchive

EDITED = "evidence:clinical:giornate-di-degenza"
DELETED = "evidence:clinical:sdo"
MAX_REQUESTS = 3000  # per client: the loops are bounded in count and in time
MAX_SECONDS = 90.0


def _consolidate_elsewhere(root: Path) -> str:
    """``tht ... consolidate --json`` in another process; the revision it activated."""
    done = subprocess.run(
        tht_argv("workspace", "evidence", "consolidate", "--workspace-root", str(root), "--json"),
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["status"] == "activated", result
    return str(result["revision"])


def _hashes(root: Path, revision: str) -> dict[str, str]:
    snap = LocalEvidenceArchive(root).snapshot(revision)
    return {e.id: e.content_hash for e in snap.entries()}


class Clients:
    """Threads that search and read while the revision changes, each answer timed."""

    def __init__(self, server: Any, count: int) -> None:
        self.server = server
        self.answers: list[tuple[float, float, dict[str, Any]]] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(count)]
        self.failures: list[str] = []

    def _run(self, n: int) -> None:
        deadline = time.monotonic() + MAX_SECONDS
        with self.server.client() as http:
            for i in range(MAX_REQUESTS):
                if self.stop.is_set() or time.monotonic() > deadline:
                    return
                start = time.monotonic()
                if (i + n) % 3 == 0:
                    response = http.get(f"/v1/units/{DELETED}")
                elif (i + n) % 3 == 1:
                    response = http.get(f"/v1/units/{EDITED}")
                else:
                    params = {"query": "degenza scheda dimissione ospedaliera", "limit": 20}
                    response = http.get("/v1/search", params=params)
                body = response.json()
                if response.status_code != 200:
                    self.failures.append(response.text)
                with self.lock:
                    self.answers.append((start, time.monotonic(), body["result"]))

    def __enter__(self) -> Clients:
        for t in self.threads:
            t.start()
        return self

    def wait_for(self, enough: Callable[[list[tuple[float, float, dict[str, Any]]]], bool]) -> None:
        """Until ``enough`` holds for the answers so far (or every client has ended)."""
        deadline = time.monotonic() + MAX_SECONDS
        while time.monotonic() < deadline and any(t.is_alive() for t in self.threads):
            with self.lock:
                if enough(self.answers):
                    return
            time.sleep(0.02)

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=MAX_SECONDS)


def _units_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    if "hits" in result:
        return list(result["hits"])
    return [result["unit"]] if result.get("status") == "active" else []


def test_an_activation_elsewhere_is_served_at_once_and_never_mixed(served: Path) -> None:
    before = LocalEvidenceArchive(served).state().active
    assert before is not None
    formula = served / "evidence/curated/formula/giornate-di-degenza.md"
    with http_server(served) as server, Clients(server, 3) as clients:
        clients.wait_for(lambda answers: len(answers) >= 30)  # on the first revision
        text = formula.read_text("utf-8").replace(
            "# Giornate di degenza\n", "# Giornate di degenza ospedaliera\n"
        )
        formula.write_text(text, "utf-8")
        (served / "evidence/curated/glossary/sdo.md").unlink()
        after = _consolidate_elsewhere(served)
        switched = time.monotonic()
        # Sixty answers to requests that started after the switch (those in flight at the
        # switch, or answered after it, may have started before it: not counted).
        clients.wait_for(lambda answers: sum(a[0] > switched for a in answers) >= 60)
    assert not clients.failures, clients.failures[:3]
    hashes = {before: _hashes(served, before), after: _hashes(served, after)}
    revisions = {result["revision"] for _, _, result in clients.answers}
    assert revisions == {before, after}
    mixed = [
        (result["revision"], u["id"])
        for _, _, result in clients.answers
        for u in _units_of(result)
        if hashes[result["revision"]].get(u["id"]) != u["content_hash"]
    ]
    assert mixed == [], mixed[:5]  # every unit is the one its answer's revision holds
    later = [result for start, _, result in clients.answers if start > switched]
    assert len(later) >= 60
    assert all(r["revision"] == after for r in later)  # the next request serves it
    assert all(DELETED not in [u["id"] for u in _units_of(r)] for r in later)
    retired = [r for r in later if r.get("id") == DELETED]
    assert retired and all(r["status"] == "retired" for r in retired)
    edited = [r for r in later if r.get("status") == "active" and r["unit"]["id"] == EDITED]
    assert edited and all(r["unit"]["title"] == "Giornate di degenza ospedaliera" for r in edited)


def test_a_deleted_unit_is_retired_with_when_and_by_whom(served: Path) -> None:
    before = LocalEvidenceArchive(served).state().active
    with http_server(served) as server, server.client() as http:
        assert http.get(f"/v1/units/{DELETED}").json()["result"]["status"] == "active"
        (served / "evidence/curated/glossary/sdo.md").unlink()
        after = _consolidate_elsewhere(served)
        got = http.get(f"/v1/units/{DELETED}").json()["result"]
        assert got["revision"] == after and got["status"] == "retired"
        assert got["retired_by"] == ACTOR and got["reason"] == "deleted"
        assert got["last_revision"] == before and got["retired_at"]
        assert got["replacement"] is None
        for query in ("SDO", "scheda di dimissione ospedaliera", "dimissione"):
            hits = http.get("/v1/search", params={"query": query, "limit": 100}).json()
            assert DELETED not in [h["id"] for h in hits["result"]["hits"]], query
        cited = {"cited": [DELETED], "retrieved": [DELETED]}
        checked = http.post("/v1/cite-check", json=cited).json()["result"]
        assert checked["inactive"] == [DELETED] and checked["grounded"] == []
        assert {"id": DELETED, "flag": "deleted"} in checked["flags"]
