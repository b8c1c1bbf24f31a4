"""BIRD inputs for bench/importers.py, and the importer's own cost without the pipeline.

    python bench/importers.py --format bird --repeat 1        # 1,534 questions, full refresh
    python bench/importers.py --format bird-csv --repeat 1    # 200,000 described columns
    python bench/importers_bird.py [--questions 1534] [--rows 200000]

``questions`` writes BIRD's dev layout: N questions over 11 databases (1-3
evidence fragments each: formulas, terms and rules, a third of them hints
repeated within the database, as BIRD repeats them) and each database's
description CSVs (8 tables x 12 columns, a BOM, CRLF, multi-line cells, code
lists).  ``csv_rows`` writes one table describing N columns.  Deterministic.

Run alone, this file times only ``BirdImporter.read`` over each input in a
child process and prints seconds, microseconds per element and the child's
peak RSS: the importer's share of a refresh.  Nothing asserts: the figures go
into docs/performance.md (## Importers).
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
    for k, w in enumerate(
        ["port", "clinic", "school", "card", "film", "race", "shop", "bank", "loan", "hotel", "zoo"]
    )
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
        elif roll < 0.8:
            frags.append(f"term {q}_{k} refers to `Col {k * 5} Name` = 'v{q}'")
        elif roll < 0.9:
            frags.append(f"t0_c{k} = {q}")  # a condition on a described column: a rule
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


def questions(folder: Path, n: int) -> tuple[str, int]:
    """BIRD's dev layout: n questions over 11 databases with their description CSVs.
    Elements: the questions plus the described columns (11 x 8 x 12)."""
    for k, db in enumerate(DBS):
        write_descriptions(folder, db, 8, 12, k)
    write_questions(folder, n, 7)
    return f"imports/{folder.name}", n + len(DBS) * 8 * 12


def csv_rows(folder: Path, n: int) -> tuple[str, int]:
    """One database whose one table describes n columns (one 64-byte CSV record each)."""
    write_descriptions(folder, "wide", 1, n, 3)
    return f"imports/{folder.name}", n


# -- measured in a child ---------------------------------------------------------------


def child_read(root: str) -> None:
    sys.path.insert(0, str(REPO))
    from evidence_tool.importers.base import ImportInput, SourceFile
    from evidence_tool.importers.bird import BirdImporter

    found = sorted(p for p in Path(root).rglob("*") if p.is_file())
    files = tuple(SourceFile(p.relative_to(root).as_posix(), p, p.stat().st_size) for p in found)
    source = ImportInput(files, {}, "en", 100 << 20, root="imports/bird")
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = BirdImporter().read(source)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--questions", type=int, default=1534)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--child-read")
    args = ap.parse_args()
    if args.child_read:
        child_read(args.child_read)
        return
    for make, n in ((questions, args.questions), (csv_rows, args.rows)):
        root = OUT / "importers" / f"bird-{make.__name__}-{n}"
        shutil.rmtree(root, ignore_errors=True)
        _, elements = make(root, n)
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        read = run_read(root)
        per = 1e6 * float(read["seconds"]) / elements  # type: ignore[arg-type]
        print(
            f"{make.__name__}: {elements} elements, {size / 1e6:.1f} MB; importer "
            f"{read['seconds']:.2f} s ({per:.0f} µs/element), peak RSS "
            f"{int(read['rss_kib']) / 1024:.0f} MiB (after imports "  # type: ignore[call-overload]
            f"{int(read['base_kib']) / 1024:.0f} MiB), units {read['units']}"  # type: ignore[call-overload]
        )


if __name__ == "__main__":
    main()
