"""BIRD import cost: 1,534 generated questions, and a 200,000-row description CSV.

    python bench/importers_bird.py [--questions 1534] [--rows 200000] [--skip-refresh-rows]

Generates (once, deterministic) under bench/out/:

- ``bird-q<N>/``: BIRD's dev layout, N questions over 11 databases (1-3 evidence
  fragments each, formulas, terms and rules, a third of them repeated, as BIRD
  repeats hints) and each database's description CSVs (8 tables x 12 columns,
  a BOM, multi-line code lists);
- ``bird-rows<R>/``: one database whose one table has R described columns.

Then measures, each in a child process (so peak RSS is the case's own):
``read`` runs only the importer over the files; ``refresh`` runs
``tht workspace evidence refresh`` in a copy of fixtures/workspace with the
source added (hash, import, verify every span, render, compare, record).
Prints seconds, microseconds per source element and the child's peak RSS.
Nothing asserts: the figures go into docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
HEADER = "original_column_name,column_name,column_description,data_format,value_description"
DBS = [
    f"db{k:02d}_{w}"
    for k, w in enumerate(["port", "clinic", "school", "card", "film", "race", "shop", "bank", "loan", "hotel", "zoo"])
]


def _csv_row(rng: random.Random, table: int, col: int) -> str:
    name = f"Col {col} Name" if col % 5 == 0 else f"t{table}_c{col}"
    if col % 4 == 1:
        values = '"0: no; 1: yes;\n2: unknown"'
    elif col % 4 == 2:
        values = f"unit: {rng.choice(['kg', 'km', 'EUR'])}"
    else:
        values = ""
    return f'{name} ,{name.lower()},"the {rng.choice(["size", "code", "date"])} of\nrow {col}",text,{values}'


def write_descriptions(root: Path, db: str, tables: int, columns: int, seed: int) -> int:
    rng = random.Random(seed)
    folder = root / "dev_databases" / db / "database_description"
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for t in range(tables):
        with (folder / f"table_{t}.csv").open("w", encoding="utf-8", newline="") as out:
            out.write("\ufeff" + HEADER + "\r\n")
            for c in range(columns):
                out.write(_csv_row(rng, t, c) + "\r\n")
                n += 1
    return n


def _evidence(rng: random.Random, db: str, q: int, shared: list[str]) -> str:
    frags = []
    for k in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.33 and shared:
            frags.append(rng.choice(shared))
        elif roll < 0.6:
            frags.append(f"rate {q}_{k} = DIVIDE(SUM(t0_c{k}), COUNT(t1_c{k})) * 100")
        elif roll < 0.85:
            frags.append(f"term {q}_{k} refers to `Col {k * 5} Name` = 'v{q}'")
        else:
            frags.append(f"the phrase {q}_{k} means the newest row")
    return "; ".join(frags)


def write_questions(root: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    shared = {db: [f"common {db} {i} refers to t0_c1 = {i}" for i in range(20)] for db in DBS}
    questions = []
    for q in range(n):
        db = DBS[q % len(DBS)]
        questions.append(
            {
                "question_id": q,
                "db_id": db,
                "question": f"How many rows of table {q % 8} in {db} match case {q}?",
                "evidence": _evidence(rng, db, q, shared[db]),
                "SQL": f"SELECT COUNT(*) FROM table_{q % 8} WHERE t{q % 8}_c1 = {q}",
                "difficulty": rng.choice(["simple", "moderate", "challenging"]),
            }
        )
    (root / "dev.json").write_text(json.dumps(questions, indent=4), encoding="utf-8")


def generate_questions(n: int) -> Path:
    root = OUT / f"bird-q{n}"
    if not (root / "dev.json").exists():
        for k, db in enumerate(DBS):
            write_descriptions(root, db, 8, 12, k)
        write_questions(root, n, 7)
    return root


def generate_rows(rows: int) -> Path:
    root = OUT / f"bird-rows{rows}"
    if not (root / "dev_databases").exists():
        write_descriptions(root, "wide", 1, rows, 3)
    return root


# -- measured in a child ---------------------------------------------------------------


def child_read(root: str) -> None:
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "tests/sources/importers"))
    import bird_fixture

    from evidence_tool.sources.importers.bird import BirdImporter

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = BirdImporter().read(bird_fixture.source_input(Path(root)))
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kinds: dict[str, int] = {}
    for item in result.units:
        kinds[item.unit.kind] = kinds.get(item.unit.kind, 0) + 1
    print(json.dumps({"seconds": seconds, "rss_kib": peak, "base_kib": base, "units": kinds}))


def run_read(root: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child-read", str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def run_refresh(root: Path) -> dict[str, object]:
    ws = OUT / f"ws-{root.name}"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(REPO / "fixtures/workspace", ws)
    shutil.copytree(root, ws / "imports/bird")
    tht = [str(Path(sys.executable).parent / "tht"), "workspace", "evidence"]
    add = [*tht, "sources", "add", "--format", "bird", "imports/bird", "--language", "en"]
    subprocess.run(add, cwd=ws, check=True, capture_output=True)
    start = time.perf_counter()
    proc = subprocess.run([*tht, "refresh", "--json"], cwd=ws, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        return {"seconds": seconds, "error": proc.stdout[-2000:] + proc.stderr[-2000:]}
    sources = json.loads(proc.stdout)["result"]["sources"]
    return {"seconds": seconds, "rss_kib_children_max": peak, "status": sources[0]["status"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--questions", type=int, default=1534)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--skip-refresh-rows", action="store_true")
    ap.add_argument("--child-read")
    args = ap.parse_args()
    if args.child_read:
        child_read(args.child_read)
        return
    cases = [("questions", generate_questions(args.questions), args.questions + 11 * 8 * 12)]
    cases.append(("rows", generate_rows(args.rows), args.rows))
    for name, root, elements in cases:
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        read = run_read(root)
        per = 1e6 * float(read["seconds"]) / elements  # type: ignore[arg-type]
        print(
            f"{name}: {elements} elements, {size / 1e6:.1f} MB; read {read['seconds']:.2f} s "
            f"({per:.0f} µs/element), peak RSS {int(read['rss_kib']) / 1024:.0f} MiB "  # type: ignore[call-overload]
            f"(after imports {int(read['base_kib']) / 1024:.0f} MiB), units {read['units']}"
        )  # type: ignore[call-overload]
        if name == "rows" and args.skip_refresh_rows:
            continue
        refreshed = run_refresh(root)
        per = 1e6 * float(refreshed["seconds"]) / elements  # type: ignore[arg-type]
        print(f"{name}: refresh {refreshed['seconds']:.2f} s ({per:.0f} µs/element), {refreshed}")


if __name__ == "__main__":
    main()
