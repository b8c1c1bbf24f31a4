"""Catalog check cost: N generated units against a 500-table DDL catalog (DDL path).

    python bench/catalog_check.py [--n 10000] [--repeat 3]

Generates (once) the benchmark workspace under bench/out/ and a DDL folder of
500 tables (the 485 tables the generated units name, 15 of their ``_hist``
tables), then measures, in-process: reading the DDL into a catalog, a full
``validate`` of the workspace, and the whole check (validate + catalog + every
unit checked).  The check's own cost per unit is the difference of the last two.
Nothing asserts: the figures go into docs/performance.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.generate import SCHEMAS, generate  # noqa: E402

OUT = HERE / "out"
COLUMNS = ["id bigint", "valid_from date"] + [f"c{k} numeric(12,2)" for k in range(13)]


def write_ddl(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tables = [f"{s}.t{t}" for s in SCHEMAS for t in range(97)]
    tables += [f"{s}.t{t}_hist" for s in SCHEMAS for t in range(3)]
    assert len(tables) == 500
    body = "".join(f"CREATE SCHEMA {s};\n" for s in SCHEMAS)
    body += "".join(f"CREATE TABLE {t} ({', '.join(COLUMNS)});\n" for t in tables)
    (folder / "warehouse.sql").write_text(body, encoding="utf-8")
    return folder


def timed(fn: object, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from evidence_tool.catalog import CatalogSettings, check_workspace, read_ddl
    from evidence_tool.workspace import validate_workspace

    ws = OUT / f"ws-{args.n}"
    if not (ws / "workspace.yaml").exists():
        generate(args.n, ws)
    ddl = write_ddl(OUT / "catalog-500")
    settings = CatalogSettings("ddl", (str(ddl),))
    t_ddl = timed(lambda: read_ddl([str(ddl)]), args.repeat)
    t_validate = timed(lambda: validate_workspace(ws), args.repeat)
    result = check_workspace(ws, settings)
    t_check = timed(lambda: check_workspace(ws, settings), args.repeat)
    n = args.n
    print(f"units {n}, relations {len(result.catalog.relations)}, findings {len(result.errors)}")
    print(f"read 500-table DDL      {t_ddl:8.3f} s")
    print(f"validate                {t_validate:8.3f} s  {t_validate / n * 1e6:8.0f} µs/unit")
    print(f"check (validate + all)  {t_check:8.3f} s  {t_check / n * 1e6:8.0f} µs/unit")
    extra = (t_check - t_validate - t_ddl) / n * 1e6
    print(f"catalog checks alone    {extra:8.0f} µs/unit")


if __name__ == "__main__":
    main()
