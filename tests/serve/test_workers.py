"""``serve --workers N``: N HTTP processes on one port, forked by a supervisor that reads
each new activation and replaces them, all stopped by one SIGTERM (or by the
supervisor's death); and the /v1
dispatcher's own answers (a wrong method, an oversized body) in the envelope."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from serve_helpers import (
    Server,
    bound_url,
    child_env,
    free_port,
    http_server,
    tht_argv,
    wait_ready,
)
from test_switch import _consolidate_elsewhere

EDITED = "evidence:clinical:giornate-di-degenza"
QUERY = {"query": "giornate degenza ricovero", "limit": 5, "mode": "bm25"}


def _workers(server: Server) -> list[int]:
    pid = server.process.pid
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _fresh(server: Server, n: int, threads: int) -> list[dict[str, object]]:
    """``n`` searches, each on a connection of its own (the kernel hands new connections
    to whichever process accepts first), from ``threads`` threads at once."""
    answers: list[dict[str, object]] = []

    def run() -> None:
        for _ in range(n // threads):
            with server.client() as http:
                response = http.get("/v1/search", params=QUERY)
            assert response.status_code == 200, response.text
            answers.append(response.json()["result"])

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=120)
    return answers


def _renewed(server: Server, old: set[int], n: int) -> list[int]:
    """The workers once ``n`` of them are none of ``old`` and every one of ``old`` is gone."""
    deadline = time.monotonic() + 120  # a bound, not a pause: forks on a loaded machine
    while time.monotonic() < deadline:
        now = _workers(server)
        if len(now) == n and not old & set(now) and not any(_alive(p) for p in old):
            return now
        time.sleep(0.05)
    raise AssertionError(f"the workers {sorted(old)} were not replaced: {_workers(server)}")


def test_fresh_workers_serve_a_new_activation_and_sigterm_stops_them_all(served: Path) -> None:
    """The supervisor reads the new revision and forks fresh workers; the old ones stop
    (they loaded nothing: one copy of the revision, not one a worker).  A worker that
    dies is replaced."""
    formula = served / "evidence/curated/formula/giornate-di-degenza.md"
    with http_server(served, workers=3) as server:
        first = _workers(server)
        assert len(first) == 3
        before = _fresh(server, 24, 4)
        (old,) = {a["revision"] for a in before}
        text = formula.read_text("utf-8").replace(
            "# Giornate di degenza\n", "# Giornate di degenza in reparto\n"
        )
        formula.write_text(text, "utf-8")
        new = _consolidate_elsewhere(served)
        assert new != old
        time.sleep(1.0)  # the switch is served within a second, by every process
        after = _fresh(server, 60, 6)
        assert len(after) == 60
        assert {a["revision"] for a in after} == {new}
        titles = {h["title"] for a in after for h in a["hits"] if h["id"] == EDITED}  # type: ignore[attr-defined]
        assert titles == {"Giornate di degenza in reparto"}
        second = _renewed(server, set(first), 3)
        os.kill(second[0], signal.SIGKILL)
        third = _renewed(server, {second[0]}, 3)
        assert set(third) - set(second) and len(set(third) & set(second)) == 2
        settled = _fresh(server, 12, 3)
        assert {a["revision"] for a in settled} == {new} and len(settled) == 12
        assert server.stop() == 0
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in third) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in third)


def test_the_workers_stop_when_the_first_process_dies(served: Path) -> None:
    argv = tht_argv(
        "workspace", "evidence", "serve", "--transport", "http", "--port", "0",
        "--workspace-root", str(served), "--workers", "2",
    )  # fmt: skip
    process = subprocess.Popen(
        argv, env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    server = Server(process, "", None)
    try:
        server.url = bound_url(process)
        wait_ready(server)
        children = _workers(server)
        assert len(children) == 2
        process.kill()  # no handler runs: the workers notice the closed pipe themselves
        process.wait(timeout=60)
        deadline = time.monotonic() + 60
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        # Reparented to init (or a subreaper), which reaps them: gone, or zombies at most.
        assert not any(_alive(c) for c in children)
    finally:
        if process.poll() is None:
            process.kill()
        assert process.stderr is not None
        process.stderr.close()


def test_a_worker_count_out_of_range_is_a_coded_error(served: Path) -> None:
    for count in ("0", "65"):
        argv = tht_argv(
            "workspace", "evidence", "serve", "--transport", "http", "--port", str(free_port()),
            "--workspace-root", str(served), "--workers", count, "--json",
        )  # fmt: skip
        done = subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert '"E901"' in done.stdout and "--workers" in done.stdout


def test_the_v1_dispatcher_answers_a_wrong_method_and_a_large_body_in_the_envelope(
    served: Path,
) -> None:
    with http_server(served, workers=1) as server, server.client() as http:
        wrong = http.post("/v1/search", json={"query": "degenza"})
        assert wrong.status_code == 405 and wrong.headers["allow"] == "GET"
        assert [e["code"] for e in wrong.json()["errors"]] == ["E901"]
        assert http.get("/v1/cite-check").status_code == 405
        assert http.get("/v1/nowhere").status_code == 404  # not a /v1 endpoint: Starlette's
        big = http.post("/v1/cite-check", content=b" " * (300 * 1024))
        assert big.status_code == 400 and big.json()["errors"][0]["code"] == "E901"
        repeated = http.get(
            "/v1/search", params=[("query", "degenza"), ("tables", "admissions"), ("limit", "2")]
        )
        assert repeated.status_code == 200 and len(repeated.json()["result"]["hits"]) <= 2


def test_workers_start_before_the_index_exists_and_serve_it_once_it_does(workspace: Path) -> None:
    """No index to read before the fork (E905 from each worker); the index built by
    another process is then served by all of them."""
    with http_server(workspace, workers=2) as server:
        with server.client() as http:
            waiting = http.get("/v1/search", params=QUERY)
        assert waiting.status_code == 409 and waiting.json()["errors"][0]["code"] == "E905"
        argv = ("workspace", "evidence", "consolidate", "--workspace-root", str(workspace))
        done = subprocess.run(tht_argv(*argv), env=child_env(), capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
        answers = _fresh(server, 12, 3)
        assert len(answers) == 12 and all(a["hits"] for a in answers)


def test_a_worker_that_dies_at_every_start_is_reforked_ever_more_slowly(served: Path) -> None:
    """A worker that cannot start (here: a config that is no uvicorn one) is replaced
    after a pause that doubles, not every 50 ms: its first eight forks span the pauses
    (0.1 + 0.4 + 1.6 s at least for two such workers), not a few deaths' time."""
    import signal as signals

    from evidence_tool.serve import run
    from evidence_tool.serve.service import EvidenceService
    from evidence_tool.serve.workspaces import serve_settings

    listener = run._listen("127.0.0.1", 0)
    supervisor = run._Supervisor(
        EvidenceService(serve_settings(None, str(served))), object(), listener, 2
    )
    forks: list[float] = []
    fork = supervisor._fork

    def counted(ready: int | None) -> int:
        forks.append(time.monotonic())
        supervisor.stopping = supervisor.stopping or len(forks) >= 8
        return fork(ready)

    supervisor._fork = counted  # type: ignore[method-assign]
    handlers = {sig: signals.getsignal(sig) for sig in run.STOPS}
    stop = threading.Timer(60.0, lambda: setattr(supervisor, "stopping", True))
    stop.start()
    try:
        supervisor.run()  # the main thread's: it sets the stop signals' handlers
    finally:
        stop.cancel()
        listener.close()
        for sig, handler in handlers.items():
            signals.signal(sig, handler)
    assert len(forks) >= 8  # replaced each time, never given up
    assert forks[7] - forks[0] >= 1.5, [round(t - forks[0], 2) for t in forks]
    # What the supervisor froze for its forks is handed back when it stops: a process
    # that runs on (this test's, a host's) keeps no frozen heap (tests/perf/test_gc_resume).
    assert gc.get_freeze_count() == 0


def test_no_connection_is_dropped_while_workers_are_renewed(served: Path) -> None:
    """Clients that open a connection at any moment of a renewal get an answer: a retiring
    worker stops accepting, then answers what it had accepted before it stops (uvicorn's
    shutdown alone closed a connection accepted but not yet read, as idle)."""
    formula = served / "evidence/curated/formula/giornate-di-degenza.md"
    failures: list[str] = []
    answered = [0]
    done = threading.Event()
    with http_server(served, workers=2) as server:

        def hammer() -> None:
            while not done.is_set():
                try:
                    with server.client() as http:
                        response = http.get("/v1/search", params=QUERY)
                    if response.status_code == 200:
                        answered[0] += 1
                    else:
                        failures.append(f"{response.status_code} {response.text[:200]}")
                except Exception as exc:  # a dropped connection, counted
                    failures.append(repr(exc))

        pool = [threading.Thread(target=hammer) for _ in range(6)]
        for t in pool:
            t.start()
        renewed, workers = 0, set(_workers(server))
        try:
            for n in range(1, 7):
                title = "# Giornate di degenza" + " in reparto" * n
                text = formula.read_text("utf-8").replace("# Giornate di degenza", title, 1)
                formula.write_text(text, "utf-8")
                _consolidate_elsewhere(served)
                workers = set(_renewed(server, workers, 2))
                renewed += 1
        finally:
            done.set()
            for t in pool:
                t.join(timeout=60)
    assert renewed == 6 and answered[0] > 60, (renewed, answered[0])
    assert not failures, failures[:5]
