"""The scan's parse on every core: forked workers read and parse a share of the files.

The plain path is ``curated.parse_file`` for each file in turn (``THT_SERIAL=1``, or
fewer than ``PARALLEL_MIN`` files); ``tests/perf/test_parallel_scan.py`` and
``tests/perf/test_flat_worker_results.py`` hold the two to the same report, hashes
and units.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from evidence_tool.errors import Diagnostic
from evidence_tool.unit.hashing import file_hash
from evidence_tool.workspace.children import die_with
from evidence_tool.workspace.curated import CuratedFile, parse_file, parse_unit, read_file, unread

if TYPE_CHECKING:
    from evidence_tool.unit.parse import FlatResult

Progress = Callable[[str, int, int], None]  # (label, done, total), as scan.Progress

# Parsing is per file: past this many files, both cores pay for the process start-up.
PARALLEL_MIN = 400


Parsed = tuple[str, "bytes | Diagnostic", "FlatResult | None", "str | None"]


def parse_chunk(items: list[tuple[str, str]], hashes: bool) -> list[Parsed]:
    """Read and parse ``items`` in a worker, results flat (cheap to send back); with
    ``hashes`` (a scan that records the stat cache) the file and content hashes are
    computed here too, on this core."""
    from evidence_tool.unit.parse import flatten

    out: list[Parsed] = []
    for path, rel in items:
        data = read_file(path)
        if isinstance(data, Diagnostic):
            out.append((path, data, None, None))
            continue
        flat = flatten(parse_unit(data, path=rel), content_hash=hashes)
        out.append((path, data, flat, file_hash(data) if hashes else None))
    return out


def parse_many(
    items: list[tuple[str, str]], progress: Progress | None, hashes: bool = False
) -> dict[str, CuratedFile]:
    """Read and parse files on every core when there are enough of them: this process
    and one forked worker per other core share the chunks, so no core waits idle for
    the workers' results, and this process's share never crosses a pipe.  ``hashes``:
    the workers compute each valid unit's hashes (parse_chunk)."""
    cores = min(os.cpu_count() or 1, 4)
    if len(items) < PARALLEL_MIN or cores < 2 or os.environ.get("THT_SERIAL"):
        return {}
    import multiprocessing
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    # Small chunks, so that neither side is left with a long last one.
    size = max(32, len(items) // (cores * 16))
    chunks = deque(items[i : i + size] for i in range(0, len(items), size))
    out: dict[str, CuratedFile] = {}
    rels = dict(items)

    def take(results: list[Parsed]) -> None:
        for path, data, flat, digest in results:
            rel = rels[path]
            if isinstance(data, Diagnostic):
                out[path] = CuratedFile(rel, path, b"", unread(rel, data))
            else:
                out[path] = CuratedFile(rel, path, data, _hash=digest, flat=flat)
        if progress:
            progress("validating", len(out), len(items))

    try:
        ctx = multiprocessing.get_context("fork")
        # Forked, not spawned: a fresh interpreter per worker costs more than the parse
        # saves.  A fork inherits every descriptor: the archive lock closes its own in the
        # child (archive.lock), and the workers die with this process (children.die_with).
        with ProcessPoolExecutor(
            max_workers=cores - 1,
            mp_context=ctx,
            initializer=die_with,
            initargs=(os.getpid(),),
        ) as pool:
            pending: set[Future[list[Parsed]]] = set()
            while chunks or pending:
                # Two chunks queued per worker: it never waits for this process to submit.
                while chunks and len(pending) < 2 * (cores - 1):
                    pending.add(pool.submit(parse_chunk, chunks.popleft(), hashes))
                if chunks:  # this process takes from the far end, keeping its typed results
                    out.update((path, parse_file(path, rel)) for path, rel in chunks.pop())
                    if progress:
                        progress("validating", len(out), len(items))
                    finished = {f for f in pending if f.done()}
                else:
                    finished = wait(pending, return_when=FIRST_COMPLETED).done
                for future in finished:
                    pending.discard(future)
                    take(future.result())
    except (OSError, RuntimeError):
        return {}  # no processes to be had here: parse in this one instead
    return out
