"""``catalog diff``: what changed in the warehouse since the active snapshot's catalog,
the units each change touches, and the review items it raises (exactly those units)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke
from drift_helpers import ITEMS, installation, new_workspace, run, warehouse

from evidence_tool.catalog.review import read_record
from evidence_tool.report import collect
from evidence_tool.workspace.layout import Layout

UNIT = "evidence:test:{}".format


def _setup(tmp_path: Path, kind: str) -> tuple[Path, Path, Path]:
    ws = new_workspace(tmp_path)
    dwh = tmp_path / "dwh"
    inst = installation(tmp_path / "etc", kind, warehouse(kind, dwh))
    done = run(ws, "consolidate", installation=inst)
    assert done.exit_code == 0, done.stdout
    return ws, dwh, inst


def _items(ws: Path, inst: Path) -> dict[str, list[dict]]:
    return run(ws, "status", installation=inst).json["result"]["catalog"]["review_items"]


@pytest.mark.parametrize("kind", ["ddl", "sqlite"])
def test_diff_shows_each_change_and_raises_items_on_exactly_the_affected_units(
    tmp_path: Path, kind: str
) -> None:
    ws, dwh, inst = _setup(tmp_path, kind)
    clean = run(ws, "catalog", "diff", installation=inst)
    assert clean.exit_code == 0, clean.stdout
    assert clean.json["result"]["changes"] == [] and clean.json["errors"] == []
    warehouse(kind, dwh, changed=True)
    diff = run(ws, "catalog", "diff", installation=inst)
    assert diff.exit_code == 1, diff.stdout
    changes = {
        (c["change"], c["relation"], c.get("column")): c for c in diff.json["result"]["changes"]
    }
    assert set(changes) == {
        ("column_dropped", "admin.drg_weights", "tariff_eur"),
        ("type_changed", "clinical.day_accesses", "access_date"),
        ("relation_dropped", "admin.patient_merges", None),
        ("relation_added", "admin.patient_links", None),
    }
    assert changes[("relation_dropped", "admin.patient_merges", None)]["renamed_to"] == (
        "admin.patient_links"
    )
    touched = {k[0]: set(c["units"]) for k, c in changes.items()}
    assert touched == {
        "column_dropped": {UNIT("tariff")},
        "type_changed": {UNIT("day-count"), UNIT("access-dates")},
        "relation_dropped": {UNIT("merges")},
        "relation_added": set(),
    }
    # One review item per affected unit, E191, on the unit's file; the same set in status.
    errors = diff.json["errors"]
    assert {e["unit_id"] for e in errors} == ITEMS and len(errors) == 3
    assert {e["code"] for e in errors} == {"E191"}
    assert {e["path"] for e in errors if e["unit_id"] == UNIT("tariff")} == {
        "evidence/curated/domain/tariff.md"
    }
    # Each item points at the name as written: the bullet, the flow-list entry.
    where = {e["unit_id"]: (e["line"], e["column"]) for e in errors}
    assert where == {UNIT("tariff"): (9, 13), UNIT("merges"): (8, 12), UNIT("day-count"): (19, 3)}
    items = _items(ws, inst)
    assert set(items) == ITEMS
    assert "type from date to timestamp" in items[UNIT("day-count")][0]["message"]


def test_fixing_the_unit_clears_its_item_and_the_drift_going_away_clears_the_rest(
    tmp_path: Path,
) -> None:
    ws, dwh, inst = _setup(tmp_path, "ddl")
    warehouse("ddl", dwh, changed=True)
    assert run(ws, "catalog", "diff", installation=inst).exit_code == 1
    raised_at = _items(ws, inst)[UNIT("merges")][0]["raised_at"]
    text = invoke(["workspace", "evidence", "status", "--workspace-root", str(ws)]).stdout
    shown = [ln for ln in text.splitlines() if ln.startswith("catalog review item on ")]
    assert {ln.split()[4].rstrip(":") for ln in shown} == ITEMS and len(shown) == 3
    tariff = ws / "evidence/curated/domain/tariff.md"
    tariff.write_text(tariff.read_text().replace("tariff_eur", "relative_weight"), encoding="utf-8")
    # The check records too: the fixed unit's item is gone, the others stay as raised.
    checked = run(ws, "check", installation=inst)
    assert {e["unit_id"] for e in checked.json["errors"] if e["code"] == "E191"} == ITEMS - {
        UNIT("tariff")
    }
    assert set(_items(ws, inst)) == ITEMS - {UNIT("tariff")}
    assert _items(ws, inst)[UNIT("merges")][0]["raised_at"] == raised_at
    warehouse("ddl", dwh, changed=False)
    gone = run(ws, "catalog", "diff", installation=inst)
    assert gone.exit_code == 0, gone.stdout
    assert _items(ws, inst) == {}


def test_consolidating_with_the_step_records_the_new_catalog_and_leaves_the_findings(
    tmp_path: Path,
) -> None:
    ws, dwh, inst = _setup(tmp_path, "ddl")
    warehouse("ddl", dwh, changed=True)
    done = run(ws, "consolidate", installation=inst)
    assert done.exit_code == 0, done.stdout  # block is off: it reports, never refuses
    warned = {(w["code"], w["path"]) for w in done.json["warnings"]}
    assert ("E181", "evidence/curated/domain/tariff.md") in warned
    assert ("E191", "evidence/curated/formula/day-count.md") in warned
    # The new snapshot was checked against the changed warehouse: nothing drifted since.
    assert _items(ws, inst) == {}
    assert run(ws, "catalog", "diff", installation=inst).json["result"]["changes"] == []
    # The dropped column a unit still names is still a finding of every check.
    check = run(ws, "check", installation=inst)
    assert [(e["code"], e["unit_id"]) for e in check.json["errors"]] == [
        ("E180", UNIT("merges")),  # applies_to.tables
        ("E180", UNIT("merges")),  # the table of applies_to.columns
        ("E181", UNIT("tariff")),
    ]


def test_diff_without_a_recorded_fingerprint_says_what_to_do(tmp_path: Path) -> None:
    ws = new_workspace(tmp_path)
    inst = installation(tmp_path / "etc", "ddl", warehouse("ddl", tmp_path / "dwh"))
    fresh = run(ws, "catalog", "diff", installation=inst)
    assert fresh.exit_code == 2 and fresh.json["errors"][0]["code"] == "E905"
    assert "consolidate" in fresh.json["errors"][0]["message"]
    assert run(ws, "consolidate").exit_code == 0  # without the step: nothing recorded
    unchecked = run(ws, "catalog", "diff", installation=inst)
    assert unchecked.exit_code == 2
    message = unchecked.json["errors"][0]["message"]
    assert "records no catalog fingerprint" in message and "evidence.catalog" in message


def test_the_review_page_shows_each_units_catalog_status_from_the_last_run(
    tmp_path: Path,
) -> None:
    ws, dwh, inst = _setup(tmp_path, "ddl")
    warehouse("ddl", dwh, changed=True)
    run(ws, "catalog", "diff", installation=inst)
    # The page reads the record: the warehouse can be gone by then.
    warehouse("ddl", dwh)
    (dwh / "ddl").rename(dwh / "gone")
    data = collect(ws)
    status = {c.unit.id: c.catalog for c in data.units}
    assert status[UNIT("sex")].status == "clean"
    assert status[UNIT("tariff")].status == "findings"
    assert status[UNIT("tariff")].codes == ("E181", "E191")
    assert status[UNIT("access-dates")].status == "clean"
    assert {uid for uid, s in status.items() if s.review_items} == ITEMS
    assert data.catalog is not None and data.catalog.drift is not None
    assert len(data.catalog.drift) == 4
    page = run(ws, "report", installation=inst)
    assert page.exit_code == 0, page.stdout
    html = Path(page.json["result"]["path"]).read_text(encoding="utf-8")
    assert 'id="catalog"' in html and "admin.patient_merges" in html
    assert html.count('class="catalog-status findings"') == 3


def test_a_unit_edited_since_the_last_run_is_not_checked_on_the_page(tmp_path: Path) -> None:
    ws, _dwh, inst = _setup(tmp_path, "ddl")
    assert run(ws, "check", installation=inst).exit_code == 0
    unit = ws / "evidence/curated/enum/sex.md"
    unit.write_text(unit.read_text().replace("Attivo.", "Attivo (A)."), encoding="utf-8")
    status = {c.unit.id: c.catalog for c in collect(ws).units}
    assert status[UNIT("sex")].status == "not checked"
    assert status[UNIT("weight")].status == "clean"
    record = read_record(Layout.at(ws))
    assert record["base"] and json.dumps(record).count("E191") == 0


def test_on_the_fixture_workspace_items_land_on_exactly_the_units_an_outside_reading_names(
    workspace: Path, tmp_path: Path
) -> None:
    """48 units checked against the fixture warehouse; a release drops a column and retypes
    another.  The expected units come from reading the units directly, not from check.py."""
    import shutil

    from catalog_helpers import WAREHOUSE

    from evidence_tool.unit import ExamplePayload, FormulaPayload, MappingPayload, parse

    dwh = tmp_path / "dwh"
    shutil.copytree(WAREHOUSE, dwh)
    inst = installation(tmp_path / "etc", "ddl", [str(dwh)])
    done = run(workspace, "consolidate", installation=inst)
    assert done.exit_code == 0, done.stdout
    assert done.json["result"]["catalog"]["units_checked"] == 48
    (dwh / "99-release.sql").write_text(
        "ALTER TABLE clinical.discharges DROP COLUMN discharge_date;\n"
        "ALTER TABLE clinical.admissions ALTER COLUMN admission_date TYPE timestamp;\n",
        encoding="utf-8",
    )
    names_dropped, formula_retyped = set(), set()
    units = sorted((workspace / "evidence/curated").rglob("*.md"))
    assert len(units) == 48
    for path in units:
        unit = parse(path.read_bytes(), path=str(path))
        payload = unit.payload
        columns = set(unit.metadata.applies_to.columns)
        if isinstance(payload, MappingPayload | FormulaPayload):
            columns |= set(payload.columns)
        sql = payload.sql if isinstance(payload, FormulaPayload) else ""
        # an example's SQL names what it reads too
        example = payload.interpretation if isinstance(payload, ExamplePayload) else ""
        if "clinical.discharges.discharge_date" in columns or "discharge_date" in sql + example:
            names_dropped.add(unit.id)
        if isinstance(payload, FormulaPayload) and (
            "clinical.admissions.admission_date" in payload.columns or "admission_date" in sql
        ):
            formula_retyped.add(unit.id)
    assert len(names_dropped) >= 3 and formula_retyped  # the oracle found real cases
    diff = run(workspace, "catalog", "diff", installation=inst)
    assert diff.exit_code == 1, diff.stdout
    assert {e["unit_id"] for e in diff.json["errors"]} == names_dropped | formula_retyped
    by_change = {c["change"]: set(c["units"]) for c in diff.json["result"]["changes"]}
    assert set(by_change) == {"column_dropped", "type_changed"}
    assert by_change["column_dropped"] == names_dropped
    assert by_change["type_changed"] >= formula_retyped


def test_diff_of_an_unreadable_catalog_is_an_availability_error(tmp_path: Path) -> None:
    ws, dwh, inst = _setup(tmp_path, "sqlite")
    for db in dwh.glob("*.db"):
        db.unlink()
    gone = run(ws, "catalog", "diff", installation=inst)
    assert gone.exit_code == 6, gone.stdout
    assert gone.json["errors"][0]["code"] == "E186"
    assert _items(ws, inst) == {}  # the last record (no drift) stays as it was


def test_status_drops_the_items_of_a_unit_deleted_since_the_last_run(tmp_path: Path) -> None:
    """A unit removed after the run that raised its item (consolidated without the step,
    or not consolidated at all) has nothing left to review: status must not list it."""
    ws, dwh, inst = _setup(tmp_path, "ddl")
    warehouse("ddl", dwh, changed=True)
    assert run(ws, "catalog", "diff", installation=inst).exit_code == 1
    assert set(_items(ws, inst)) == ITEMS
    (ws / "evidence/curated/domain/merges.md").unlink()
    status = run(ws, "status").json["result"]["catalog"]
    assert set(status["review_items"]) == ITEMS - {UNIT("merges")}
    assert status["deleted_since"] == [UNIT("merges")]
    assert run(ws, "consolidate").exit_code == 0  # without the step: the record stays
    after = run(ws, "status").json["result"]["catalog"]
    assert set(after["review_items"]) == ITEMS - {UNIT("merges")}
    text = invoke(["workspace", "evidence", "status", "--workspace-root", str(ws)]).stdout
    shown = [ln for ln in text.splitlines() if ln.startswith("catalog review item on ")]
    assert len(shown) == 2 and not any(UNIT("merges") in ln for ln in shown)
    # An edited unit keeps its item (the next run says whether the edit settled it), marked.
    tariff = ws / "evidence/curated/domain/tariff.md"
    tariff.write_text(tariff.read_text() + "\nMore prose.\n", encoding="utf-8")
    edited = run(ws, "status").json["result"]["catalog"]
    assert edited["edited_since"] == [UNIT("tariff")] and UNIT("tariff") in edited["review_items"]
