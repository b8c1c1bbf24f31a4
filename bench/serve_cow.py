"""What a forked serve worker copies of its supervisor's memory, and its CPU a search.

    python bench/serve_cow.py [--n 10000] [--searches 1,10,400,1600] [--seed 1]

Reads the bench/serve.py workspace of ``--n`` units (generated and consolidated once,
as that bench does), then does what ``serve --workers N``'s supervisor does: reads the
active revision, its texts and postings (``EvidenceService.warm``), collects and
freezes the heap (``gc.freeze``) and forks one worker.  The worker answers bm25
searches of bench/serve.py's kind straight through the service and the /v1 envelope's
JSON encoding (no HTTP: the sockets' and uvicorn's own memory is not the question), and
prints after each count of ``--searches`` its Private_Dirty (the pages it holds of its
own: the supervisor's it wrote to, reference counts included, and what it allocated)
and the median CPU of a search (``time.process_time``, which other processes' load
does not change).  Nothing asserts: the figures go into docs/performance.md.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.serve import WORDS, workspace  # noqa: E402


def private_dirty_kib() -> int:
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Private_Dirty:"):
            return int(line.split()[1])
    return 0


def worker(service: object, counts: list[int], seed: int) -> None:
    import msgspec

    from evidence_tool.serve.envelope import call
    from evidence_tool.serve.service import EvidenceService

    assert isinstance(service, EvidenceService)
    encode = msgspec.json.Encoder().encode
    rng = random.Random(seed)
    start = private_dirty_kib()
    print(f"forked: Private_Dirty {start / 1024:.1f} MiB", flush=True)
    done, cpu = 0, []
    for count in counts:
        while done < count:
            args = {"query": " ".join(rng.sample(WORDS, rng.randint(2, 4))), "mode": "bm25"}
            before = time.process_time()
            status, body = call("GET /v1/search", lambda a=args: service.search_evidence(a))
            encode(body)
            cpu.append(time.process_time() - before)
            assert status == 200, body
            done += 1
        grown = (private_dirty_kib() - start) / 1024
        recent = statistics.median(cpu[-min(len(cpu), 200) :]) * 1e3
        print(
            f"after {done:5d} searches: Private_Dirty +{grown:5.1f} MiB; "
            f"CPU a search (median of the last {min(len(cpu), 200)}) {recent:.2f} ms",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--searches", default="1,10,400,1600")
    parser.add_argument("--seed", type=int, default=1)
    opts = parser.parse_args()
    root = workspace(opts.n)

    from evidence_tool.serve.service import EvidenceService
    from evidence_tool.serve.workspaces import serve_settings

    service = EvidenceService(serve_settings(None, str(root)))
    service.supervised()
    started = time.process_time()
    service.warm()
    print(f"supervisor read the revision in {time.process_time() - started:.1f} s of CPU")
    objects = len(gc.get_objects())
    gc.collect()
    gc.freeze()
    print(f"supervisor: {objects} objects tracked by the collector", flush=True)
    pid = os.fork()
    if pid == 0:
        try:
            worker(service, [int(c) for c in opts.searches.split(",")], opts.seed)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
