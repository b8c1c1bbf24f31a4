"""Catalog check cost: N generated units against a 500-table catalog, DDL and live paths.

    python bench/catalog_check.py [--n 10000] [--repeat 3] [--no-live]

Generates (once) the benchmark workspace under bench/out/ and a DDL folder of
500 tables (the 485 tables the generated units name, 15 of their ``_hist``
tables), then measures, in-process: reading the DDL into a catalog, a full
``validate`` of the workspace, and the whole check (validate + catalog + every
unit checked).  The check's own cost per unit is the difference of the last two.

The live path loads the same 500 tables into a throwaway PostgreSQL cluster
(tests/pg_cluster.py: Debian's binaries, started and stopped here) and runs the
check against it: checks 1-3, every formula prepared and typed (check 4) and
every enum's values sampled (check 5); it prints the round trips counted.
Nothing asserts: the figures go into docs/performance.md (the bound on round trips
is asserted by tests/catalog/test_catalog_live.py, by counting).
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
    ap.add_argument("--no-live", action="store_true", help="skip the live PostgreSQL path")
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
    if not args.no_live:
        live(ws, ddl / "warehouse.sql", n, t_validate, args.repeat)


def live(ws: Path, ddl: Path, n: int, t_validate: float, repeat: int) -> None:
    """The same check against the 500 tables loaded into a throwaway cluster."""
    import os

    sys.path.insert(0, str(HERE.parent / "tests"))
    from pg_cluster import start_cluster

    from evidence_tool.catalog import CatalogSettings, check_workspace
    from evidence_tool.catalog.postgres import open_live, read_postgres
    from evidence_tool.catalog.values import sample_of

    cluster = start_cluster()
    try:
        os.environ["THT_BENCH_DSN"] = cluster.create_database("bench500", ddl)
        settings = CatalogSettings("postgres", dsn_env="THT_BENCH_DSN")
        result = check_workspace(ws, settings, sample_values=True)
        t_live = timed(lambda: check_workspace(ws, settings, sample_values=True), repeat)
        # the parts only the live path has, apart
        statements = [f.statement() for f in result.formulas]
        samples = [s for u, _, _ in result.enums if (s := sample_of(u, result.catalog))]
        t_read = timed(lambda: read_postgres("THT_BENCH_DSN", ("public",)), repeat)
        with open_live("THT_BENCH_DSN", ("public",)) as session:
            t_types = timed(lambda: session.describe(statements), repeat)
            t_samples = timed(lambda: session.sample(samples), repeat)
    finally:
        cluster.stop()
    typed = sum(1 for t in result.types if t.type)
    print(
        f"live: relations {len(result.catalog.relations)}, formulas {len(result.types)} "
        f"({typed} typed), enums sampled {result.values_checked}, "
        f"round trips {result.round_trips}, findings {len(result.errors)}"
    )
    print(f"live check (all)        {t_live:8.3f} s  {t_live / n * 1e6:8.0f} µs/unit")
    print(f"live catalog checks     {(t_live - t_validate) / n * 1e6:8.0f} µs/unit")
    print(f"connect + read catalog  {t_read:8.3f} s")
    print(
        f"type-check formulas     {t_types:8.3f} s  {t_types / len(statements) * 1e6:8.0f} µs/formula"
    )
    print(
        f"sample enum values      {t_samples:8.3f} s  {t_samples / len(samples) * 1e6:8.0f} µs/enum"
    )


if __name__ == "__main__":
    main()
