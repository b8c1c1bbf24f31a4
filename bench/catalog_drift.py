"""Catalog drift cost: N generated units, a 500-table DDL catalog recorded in the active
snapshot, then a release that drops one column of every table.

    python bench/catalog_drift.py [--n 10000] [--repeat 3]

Measures, in-process: the plain check (validate + catalog + every unit), the same
run with the drift pass (each unit resolved again against the recorded catalog, the
changes compared, the units they touch found), and the whole catalog step of a
consolidation compared with a consolidation without it.  Nothing asserts: the
figures go into docs/performance.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.catalog_check import OUT, write_ddl  # noqa: E402
from bench.generate import generate  # noqa: E402


def timed(fn: object, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def cpu(fn: object, repeat: int) -> float:
    """CPU seconds of this process (the drift pass runs here; validation's parse workers
    do not): steadier than wall time on a machine shared with other jobs."""
    runs = []
    for _ in range(repeat):
        start = time.process_time()
        fn()  # type: ignore[operator]
        runs.append(time.process_time() - start)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.catalog.review import run_catalog
    from evidence_tool.catalog.settings import CatalogSettings
    from evidence_tool.catalog.workspace_check import check_workspace

    ws = OUT / f"drift-ws-{args.n}"
    if ws.exists():
        shutil.rmtree(ws)
    generate(args.n, ws)
    ddl = write_ddl(OUT / "drift-catalog-500")
    settings = CatalogSettings("ddl", (str(ddl),))
    archive = LocalEvidenceArchive(ws)
    start = time.perf_counter()
    archive.consolidate("bench")
    t_plain = time.perf_counter() - start
    start = time.perf_counter()
    step = run_catalog(ws, settings, record=False)
    t_step = time.perf_counter() - start
    fp = step.fingerprint
    start = time.perf_counter()
    archive.consolidate("bench", catalog=(fp.record(), fp.data))
    t_record = time.perf_counter() - start
    state = archive.state()
    assert state.newest is not None
    archive.consolidate("bench", lambda snap: None)  # activate: drift compares with it
    release = (ddl / "warehouse.sql").read_text(encoding="utf-8")
    (ddl / "warehouse.sql").write_text(release.replace(", c12 numeric(12,2)", ""), encoding="utf-8")
    t_check = timed(lambda: check_workspace(ws, settings), args.repeat)
    t_drift = timed(lambda: run_catalog(ws, settings, record=False), args.repeat)
    c_check = cpu(lambda: check_workspace(ws, settings), args.repeat)
    c_drift = cpu(lambda: run_catalog(ws, settings, record=False), args.repeat)
    drift = run_catalog(ws, settings, record=False).drift
    assert drift is not None
    n = args.n
    print(f"units {n}, changes {len(drift.changes)}, units with items {len(drift.items)}")
    print(f"first consolidate, no step     {t_plain:8.3f} s")
    print(f"the step's check (no drift)    {t_step:8.3f} s  {t_step / n * 1e6:8.0f} µs/unit")
    print(f"consolidate recording it       {t_record:8.3f} s")
    print(f"check                          {t_check:8.3f} s  {t_check / n * 1e6:8.0f} µs/unit")
    print(f"check + drift                  {t_drift:8.3f} s  {t_drift / n * 1e6:8.0f} µs/unit")
    print(f"drift alone (wall)             {(t_drift - t_check) / n * 1e6:8.0f} µs/unit")
    print(f"check, main process CPU        {c_check:8.3f} s")
    print(f"drift alone (CPU)              {(c_drift - c_check) / n * 1e6:8.0f} µs/unit")


if __name__ == "__main__":
    main()
