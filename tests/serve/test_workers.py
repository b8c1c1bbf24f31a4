"""``serve --workers N``: several HTTP processes on one port, each following new
activations, all stopped by one SIGTERM (or by the first process's death); and the /v1
dispatcher's own answers (a wrong method, an oversized body) in the envelope."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from serve_helpers import Server, child_env, free_port, http_server, tht_argv, wait_ready
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


def test_every_worker_serves_a_new_activation_and_sigterm_stops_them_all(served: Path) -> None:
    formula = served / "evidence/curated/formula/giornate-di-degenza.md"
    with http_server(served, workers=3) as server:
        children = _workers(server)
        assert len(children) == 2
        before = _fresh(server, 24, 4)
        (old,) = {a["revision"] for a in before}
        text = formula.read_text("utf-8").replace(
            "# Giornate di degenza\n", "# Giornate di degenza in reparto\n"
        )
        formula.write_text(text, "utf-8")
        new = _consolidate_elsewhere(served)
        assert new != old
        time.sleep(1.0)  # the switch is served within a second, in every process
        after = _fresh(server, 60, 6)
        assert len(after) == 60
        assert {a["revision"] for a in after} == {new}
        titles = {h["title"] for a in after for h in a["hits"] if h["id"] == EDITED}  # type: ignore[attr-defined]
        assert titles == {"Giornate di degenza in reparto"}
        assert server.stop() == 0
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in children)


def test_the_workers_stop_when_the_first_process_dies(served: Path) -> None:
    port = free_port()
    argv = tht_argv(
        "workspace", "evidence", "serve", "--transport", "http", "--port", str(port),
        "--workspace-root", str(served), "--workers", "2",
    )  # fmt: skip
    process = subprocess.Popen(
        argv, env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    server = Server(process, f"http://127.0.0.1:{port}", None)
    try:
        wait_ready(server)
        (child,) = _workers(server)
        process.kill()  # no handler runs: the worker notices the closed pipe itself
        process.wait(timeout=30)
        deadline = time.monotonic() + 15
        while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
            time.sleep(0.05)
        # Reparented to init (or a subreaper), which reaps it: gone, or a zombie at most.
        assert not _alive(child)
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
        done = subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=60)
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
