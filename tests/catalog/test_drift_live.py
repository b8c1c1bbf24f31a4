"""Drift on the live PostgreSQL: consolidate with the catalog step against a database of
the throwaway cluster, ALTER that database (drop a column a unit names, retype a column
a formula uses, rename a table), and ``catalog diff``, ``status`` and the review page's
data show each change and raise E191 on exactly the units it makes wrong.

Each test loads its own database, so ALTERs never reach another test's warehouse."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from catalog_helpers import domain, enum, formula, write_units
from cli_runner import CliResult, invoke
from pg_cluster import Cluster, warehouse_sql

from evidence_tool.report import collect

_names = itertools.count()
UNIT = "evidence:live:{}".format

UNITS = {
    # averages the column whose type changes: a review item
    "evidence/curated/formula/mean-result.md": formula(
        "mean-result", ["lab.results"], ["lab.results.result_ts"], "avg(lab.results.value)"
    ),
    # names the retyped column outside a formula: touched, no item
    "evidence/curated/domain/result-values.md": domain(
        "result-values", ["lab.results"], ["lab.results.value"]
    ),
    # names the dropped column: a review item
    "evidence/curated/domain/atc.md": domain(
        "atc", ["pharmacy.drugs"], ["pharmacy.drugs.atc_code"]
    ),
    # names the renamed table: a review item
    "evidence/curated/domain/loinc.md": domain("loinc", ["lab.tests"], ["lab.tests.loinc_code"]),
    # the table that lost a column, another of its columns: untouched
    "evidence/curated/formula/ddd.md": formula(
        "ddd", ["pharmacy.drugs"], ["pharmacy.drugs.ddd_mg"], "max(ddd_mg) / 1000"
    ),
    # the retyped table, another column: untouched
    "evidence/curated/enum/result-status.md": enum("result-status", "lab.results.status"),
}
ITEMS = {UNIT("mean-result"), UNIT("atc"), UNIT("loinc")}
RELEASE = (
    "ALTER TABLE pharmacy.drugs DROP COLUMN atc_code;\n"
    "ALTER TABLE lab.results ALTER COLUMN value TYPE double precision;\n"
    "ALTER TABLE lab.tests RENAME TO test_catalogue;\n"
)


def _live(tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """A database of its own (its name), and a descriptor that reads it through the DSN
    variable: ``evidence.catalog: {kind: postgres}`` and nothing else."""
    name = f"drift{next(_names)}"
    monkeypatch.setenv("THT_CATALOG_DSN", cluster.create_database(name, *warehouse_sql()))
    path = tmp_path / "etc" / "installation.yaml"
    path.parent.mkdir(parents=True)
    descriptor = {"installation_version": 1, "evidence": {"catalog": {"kind": "postgres"}}}
    path.write_text(json.dumps(descriptor), encoding="utf-8")
    return name, path


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    made = invoke(["workspace", "new", str(root), "--id", "live", "--language", "en", "--json"])
    assert made.exit_code == 0, made.stdout
    units = {p: t.replace("evidence:test:", "evidence:live:") for p, t in UNITS.items()}
    write_units(root, units)
    return root


def run(ws: Path, inst: Path, *args: str) -> CliResult:
    pre = ["--installation", str(inst), "workspace", "evidence"]
    return invoke([*pre, *args, "--workspace-root", str(ws), "--json"])


def test_live_alters_show_in_diff_and_raise_items_on_exactly_the_affected_units(
    tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, inst = _live(tmp_path, pg_cluster, monkeypatch)
    ws = _workspace(tmp_path)
    done = run(ws, inst, "consolidate")
    assert done.exit_code == 0, done.stdout
    step = done.json["result"]["catalog"]
    assert step["kind"] == "postgres" and step["checked"] is True
    assert step["units_checked"] == len(UNITS) and step["findings"] == {}
    clean = run(ws, inst, "catalog", "diff")
    assert clean.exit_code == 0 and clean.json["result"]["changes"] == [], clean.stdout

    pg_cluster.execute(RELEASE, db)
    diff = run(ws, inst, "catalog", "diff")
    assert diff.exit_code == 1, diff.stdout
    changes = {
        (c["change"], c["relation"], c.get("column")): c for c in diff.json["result"]["changes"]
    }
    assert set(changes) == {
        ("column_dropped", "pharmacy.drugs", "atc_code"),
        ("type_changed", "lab.results", "value"),
        ("relation_dropped", "lab.tests", None),
        ("relation_added", "lab.test_catalogue", None),
    }
    retyped = changes[("type_changed", "lab.results", "value")]
    assert (retyped["old"], retyped["new"]) == ("numeric(12,3)", "double precision")
    assert changes[("relation_dropped", "lab.tests", None)]["renamed_to"] == "lab.test_catalogue"
    touched = {k[0]: set(c["units"]) for k, c in changes.items()}
    assert touched == {
        "column_dropped": {UNIT("atc")},
        "type_changed": {UNIT("mean-result"), UNIT("result-values")},
        "relation_dropped": {UNIT("loinc")},
        "relation_added": set(),
    }
    items = [e for e in diff.json["errors"] if e["code"] == "E191"]
    assert len(items) == 3 and {e["unit_id"] for e in items} == ITEMS
    assert all(e["line"] and e["column"] for e in items)

    # status and the review page read the record the diff left: the same set.
    status = run(ws, inst, "status").json["result"]["catalog"]
    assert set(status["review_items"]) == ITEMS
    assert (
        "from numeric(12,3) to double precision"
        in (status["review_items"][UNIT("mean-result")][0]["message"])
    )
    cards = {c.unit.id: c.catalog for c in collect(ws).units}
    assert {uid for uid, s in cards.items() if s.review_items} == ITEMS
    assert cards[UNIT("result-values")].status == "clean"
    assert cards[UNIT("ddd")].status == "clean"

    # Consolidating with the step again accepts the new warehouse: nothing drifted since.
    again = run(ws, inst, "consolidate")
    assert again.exit_code == 0, again.stdout
    assert run(ws, inst, "status").json["result"]["catalog"]["review_items"] == {}
    assert run(ws, inst, "catalog", "diff").json["result"]["changes"] == []
