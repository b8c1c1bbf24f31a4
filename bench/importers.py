"""Import-source benchmark: a large real-shaped input per format, one refresh timed.

    python bench/importers.py [--format vanna] [--n 20000] [--repeat 3]
    python bench/importers.py --format bird-dev --dev-json PATH/dev.json   # real BIRD

For each format it writes a deterministic input under bench/out/importers/<format>/
inside a copy of the example workspace, adds it with ``sources add``, and runs in a
child process (so peak RSS is the refresh's own): a first ``refresh`` of that source
(hash, import, span verification, comparison; the proposal cache cleared before each
run), then a second, unchanged one (hash only).  It prints seconds, microseconds per
source element and the child's peak RSS.  Nothing here asserts: the figures go into
docs/performance.md (## Importers) with the command that produced them.

A format adds itself to GENERATORS: a function (folder, n) -> (path to add, elements),
where elements counts what the importer reads (rows, columns, questions).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out" / "importers"
FIXTURE = REPO / "fixtures" / "workspace"
THT = [sys.executable, "-m", "evidence_tool.cli.main"]


def vanna(folder: Path, n: int) -> tuple[str, int]:
    """``df.to_json(orient="records")`` of n rows: 3 in 5 sql, 1 documentation, 1 ddl."""
    rows = []
    for i in range(n):
        kind = ("sql", "sql", "sql", "documentation", "ddl")[i % 5]
        content = {
            "sql": f"SELECT ward_code, count(*) AS stays\nFROM clinical.admissions\n"
            f"WHERE admission_year = {2000 + i % 25} AND ward_code <> 'W{i}'\nGROUP BY 1",
            "documentation": f"Ward W{i} reports its stays under the code of its department; "
            "day-hospital visits are not stays.",
            "ddl": f"CREATE TABLE clinical.t{i} (id int, ward_code text)",
        }[kind]
        question = f"How many stays did each ward record in {2000 + i % 25} (case {i})?"
        rows.append(
            {
                "id": f"{i:08x}-4c55-9d7e-{kind}",
                "question": question if kind == "sql" else None,
                "content": content,
                "training_data_type": kind,
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps(rows, separators=(",", ":")).replace("/", "\\/")
    (folder / "training.json").write_text(data)
    return "imports/vanna", n


def dbt(folder: Path, n: int) -> tuple[str, int]:
    """A dbt project with n documented columns: 20 per model, 50 models per property file;
    every fifth column an accepted_values test whose meanings a bullet list gives, every
    model a docs block, a legacy semantic model with two measures and a ratio metric."""
    per_model, per_file = 20, 50
    models = (n + per_model - 1) // per_model
    (folder / "models").mkdir(parents=True, exist_ok=True)
    (folder / "dbt_project.yml").write_text("name: bench_clinic\nmodel-paths: [models]\n")
    docs, column = [], 0
    for f in range((models + per_file - 1) // per_file):
        lines = ["version: 2", "models:"]
        sm = ["semantic_models:"]
        metrics = ["metrics:"]
        for m in range(f * per_file, min(models, (f + 1) * per_file)):
            docs.append(
                f"{{% docs model_{m} %}}\nStays of ward group {m}, one row per night.\n{{% enddocs %}}\n"
            )
            lines += [
                f"  - name: stays_{m}",
                f"    description: \"{{{{ doc('model_{m}') }}}}\"",
                "    columns:",
            ]
            for c in range(per_model):
                if column >= n:
                    break
                column += 1
                lines.append(f"      - name: col_{c}")
                if c % 5 == 0:
                    lines += [
                        "        description: |",
                        f"          Bed state of column {c} in model {m}.",
                        "          - `O`: occupied",
                        "          - `F`: free",
                        "        data_tests:",
                        "          - accepted_values:",
                        "              values: ['O', 'F']",
                    ]
                else:
                    lines.append(
                        f"        description: Measured value {c} of ward group {m}, in days."
                    )
            sm += [
                f"  - name: sm_{m}",
                f"    model: ref('stays_{m}')",
                "    entities:",
                "      - name: stay",
                "        type: primary",
                "        expr: col_1",
                "    measures:",
                f"      - name: nights_{m}",
                "        agg: sum",
                "        expr: col_2",
                f"      - name: stays_count_{m}",
                "        agg: count",
                "        expr: col_1",
            ]
            metrics += [
                f"  - name: nights_per_stay_{m}",
                "    type: ratio",
                "    type_params:",
                f"      numerator: nights_metric_{m}",
                f"      denominator: stays_metric_{m}",
                f"  - name: nights_metric_{m}",
                "    type: simple",
                "    type_params:",
                f"      measure: nights_{m}",
                f"  - name: stays_metric_{m}",
                "    type: simple",
                "    type_params:",
                f"      measure: stays_count_{m}",
            ]
        (folder / "models" / f"part_{f:03d}.yml").write_text("\n".join(lines + sm + metrics) + "\n")
    (folder / "models" / "docs.md").write_text("\n".join(docs))
    return "imports/dbt", n


def dbt_manifest(folder: Path, n: int, size: int = 95 * 10**6) -> tuple[str, int]:
    """A manifest.json (v12) of n documented columns (20 per model, every fifth with an
    accepted_values test), padded with macros to ``size`` bytes as real manifests are
    (macros and compiled SQL are most of one); written node by node."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "manifest.json"
    models = (n + 19) // 20
    with path.open("w", encoding="utf-8") as out:
        out.write('{"metadata": {"dbt_schema_version": ')
        out.write('"https://schemas.getdbt.com/dbt/manifest/v12.json"}, "nodes": {')
        first = True
        for m in range(models):
            cols = range(m * 20, min(n, m * 20 + 20))
            node = {
                "resource_type": "model",
                "name": f"stays_{m}",
                "schema": "clinical",
                "alias": f"stays_{m}",
                "description": f"Stays of ward group {m}, one row per night.",
                "raw_code": "select * from {{ ref('src') }} -- " + "x" * 3000,
                "columns": {
                    f"col_{c}": {
                        "name": f"col_{c}",
                        "description": f"Value {c} of group {m}."
                        + ("\n- `O`: occupied\n- `F`: free" if c % 5 == 0 else ""),
                    }
                    for c in cols
                },
            }
            out.write(("" if first else ",") + f'"model.bench.stays_{m}": ' + json.dumps(node))
            first = False
            for c in cols[::5]:
                test = {
                    "resource_type": "test",
                    "attached_node": f"model.bench.stays_{m}",
                    "column_name": f"col_{c}",
                    "test_metadata": {"name": "accepted_values", "kwargs": {"values": ["O", "F"]}},
                }
                out.write(f',"test.bench.av_{m}_{c}": ' + json.dumps(test))
        out.write('}, "macros": {')
        body = json.dumps("{% macro m() %} select 1 {% endmacro %} " * 100)
        k = 0
        while out.tell() < size - 10_000:
            out.write(("," if k else "") + f'"macro.bench.m{k}": {{"macro_sql": {body}}}')
            k += 1
        out.write("}}")
    return "imports/dbt-manifest/manifest.json", n


DEV_JSON: Path | None = None  # --dev-json: a real BIRD dev.json (never committed)


def bird_dev(folder: Path, n: int) -> tuple[str, int]:
    """A real BIRD ``dev.json`` (``--dev-json``), copied alone: its questions are the elements."""
    if DEV_JSON is None:
        raise SystemExit("--format bird-dev needs --dev-json PATH (BIRD's dev.json)")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DEV_JSON, folder / "dev.json")
    return f"imports/{folder.name}", len(json.loads(DEV_JSON.read_bytes()))


from importers_bird import csv_rows as bird_csv  # noqa: E402 (bench/ is sys.path[0])
from importers_bird import questions as bird  # noqa: E402

GENERATORS: dict[str, Callable[[Path, int], tuple[str, int]]] = {
    "vanna": vanna,
    "dbt": dbt,
    "dbt-manifest": dbt_manifest,
    "bird": bird,
    "bird-csv": bird_csv,
    "bird-dev": bird_dev,
}
DEFAULT_N = {
    "vanna": 20_000,
    "dbt": 10_000,
    "dbt-manifest": 10_000,
    "bird": 1534,
    "bird-csv": 200_000,
    "bird-dev": 0,  # the file's own questions
}
FORMAT_OF = {
    "dbt-manifest": "dbt",
    "bird-csv": "bird",
    "bird-dev": "bird",
}  # a generator named apart from the format it writes


def tht(ws: Path, *args: str) -> dict[str, object]:
    proc = subprocess.run(
        [*THT, "workspace", "evidence", *args, "--workspace-root", str(ws), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"tht {' '.join(args)} failed: {proc.stdout[-2000:]}{proc.stderr}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def refresh_child(ws: Path, sid: str) -> tuple[float, float, float]:
    """(seconds, CPU seconds, peak RSS in MiB) of one refresh of ``sid`` in a child
    process, from that child's own resource usage (``wait4``): RUSAGE_CHILDREN's peak is
    the largest of every child so far, an earlier format's ``decide`` included.  The CPU
    time (user + system) is what a busy machine inflates least: compare runs by it when
    other jobs share the cores."""
    args = [*THT, "workspace", "evidence", "refresh", "--source-id", sid]
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*args, "--workspace-root", str(ws), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()  # to its end: the child has exited or is exiting
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, with its own usage
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"tht refresh failed: {out[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def prepare(fmt: str, n: int) -> tuple[Path, str, int]:
    ws = OUT / fmt / f"ws-{n}"
    if ws.exists():
        shutil.rmtree(ws)
    shutil.copytree(FIXTURE, ws, ignore=shutil.ignore_patterns(".evidence-cache"))
    rel, elements = GENERATORS[fmt](ws / "imports" / fmt, n)
    added = tht(ws, "sources", "add", "--format", FORMAT_OF.get(fmt, fmt), str(ws / rel))
    return ws, str(added["result"]["source_id"]), elements  # type: ignore[index]


def run(fmt: str, n: int, repeat: int) -> None:
    load = os.getloadavg()[0]
    ws, sid, elements = prepare(fmt, n)
    size = sum(p.stat().st_size for p in (ws / "imports").rglob("*") if p.is_file())
    firsts, first_cpu, rss = [], [], 0.0
    for _ in range(repeat):
        shutil.rmtree(ws / ".evidence-cache" / "proposals", ignore_errors=True)
        (ws / "evidence/.local/sources.json").unlink(missing_ok=True)
        seconds, cpu, peak = refresh_child(ws, sid)
        firsts.append(seconds)
        first_cpu.append(cpu)
        rss = max(rss, peak)
    comp = json.loads((ws / "evidence/.local/sources.json").read_text())["sources"][sid]
    proposed = len(comp["comparison"]["proposed"])
    first = statistics.median(firsts)
    # Decide once, then time the unchanged refresh: hashing only, the importer does not run.
    rev = comp["comparison"]["revision"]
    tht(ws, "decide", "--source-id", sid, "--revision", rev, "--decision", "replace")
    again = [refresh_child(ws, sid) for _ in range(repeat)]
    unchanged = statistics.median(r[0] for r in again)
    unchanged_cpu = statistics.median(r[1] for r in again)
    cpu = statistics.median(first_cpu)
    print(f"{fmt}: {elements} elements, {size / 1e6:.1f} MB, {proposed} units proposed")
    print(
        f"  medians of {repeat}; load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} now"
    )
    print(
        f"  first refresh     {first:8.2f} s  {first / elements * 1e6:8.0f} µs/element"
        f"  (CPU {cpu:.2f} s, {cpu / elements * 1e6:.0f} µs/element)"
    )
    print(
        f"  unchanged refresh {unchanged:8.2f} s  {unchanged / elements * 1e6:8.0f} µs/element"
        f"  (CPU {unchanged_cpu:.2f} s)"
    )
    print(f"  peak RSS (refresh child) {rss:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", action="append", choices=sorted(GENERATORS))
    parser.add_argument("--n", type=int, help="elements (default per format)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dev-json", type=Path, help="a real BIRD dev.json, for bird-dev")
    args = parser.parse_args()
    global DEV_JSON
    DEV_JSON = args.dev_json
    for fmt in args.format or sorted(set(GENERATORS) - {"bird-dev"}):
        run(fmt, args.n or DEFAULT_N[fmt], args.repeat)


if __name__ == "__main__":
    main()
