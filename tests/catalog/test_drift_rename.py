"""``catalog diff`` reports a likely column rename (same type, similar name, same
position) as a rename with the units it touches, not as a drop plus an add (issue 34
item 11); anything less alike stays a drop and an add."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from catalog_helpers import WAREHOUSE, build_sqlite
from drift_helpers import installation, new_workspace, run

SEX_UNIT = "evidence:test:sex"  # the enum on admin.patients.sex (drift_helpers.UNITS)


def _release(kind: str, folder: Path, sql: str) -> list[str]:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if kind == "sqlite":
        return build_sqlite(folder, sql)
    shutil.copytree(WAREHOUSE, folder / "ddl")
    if sql:
        (folder / "ddl" / "99-release.sql").write_text(sql, encoding="utf-8")
    return [str(folder / "ddl")]


def _diff_after(tmp_path: Path, kind: str, sql: str) -> tuple[dict, str]:
    ws = new_workspace(tmp_path)
    dwh = tmp_path / "dwh"
    inst = installation(tmp_path / "etc", kind, _release(kind, dwh, ""))
    assert run(ws, "consolidate", installation=inst).exit_code == 0
    _release(kind, dwh, sql)
    out = run(ws, "catalog", "diff", installation=inst)
    pre = ["--installation", str(inst)]
    from cli_runner import invoke

    text = invoke([*pre, "workspace", "evidence", "catalog", "diff", "--workspace-root", str(ws)])
    return out.json, text.stdout


@pytest.mark.parametrize("kind", ["ddl", "sqlite"])
def test_a_renamed_column_is_reported_as_a_rename_with_its_units(tmp_path: Path, kind: str) -> None:
    out, text = _diff_after(
        tmp_path, kind, "ALTER TABLE admin.patients RENAME COLUMN sex TO sex_cd;\n"
    )
    changes = out["result"]["changes"]
    assert [(c["change"], c["column"], c.get("renamed_to")) for c in changes] == [
        ("column_renamed", "sex", "sex_cd")
    ], changes
    assert changes[0]["units"] == [SEX_UNIT]
    [item] = out["errors"]
    assert item["code"] == "E191" and item["unit_id"] == SEX_UNIT
    assert "renamed to sex_cd" in item["message"], item
    assert "renamed to sex_cd" in text and SEX_UNIT in text, text


def test_a_drop_and_an_unlike_add_stay_a_drop_and_an_add(tmp_path: Path) -> None:
    # Same position and type, but nothing alike in the name: not taken for a rename.
    out, _ = _diff_after(
        tmp_path, "ddl", "ALTER TABLE admin.patients RENAME COLUMN sex TO gender;\n"
    )
    kinds = sorted((c["change"], c["column"]) for c in out["result"]["changes"])
    assert kinds == [("column_added", "gender"), ("column_dropped", "sex")]


def test_a_similar_name_of_another_type_is_no_rename(tmp_path: Path) -> None:
    out, _ = _diff_after(
        tmp_path,
        "ddl",
        "ALTER TABLE admin.patients RENAME COLUMN sex TO sex_cd;\n"
        "ALTER TABLE admin.patients ALTER COLUMN sex_cd TYPE integer;\n",
    )
    kinds = sorted((c["change"], c["column"]) for c in out["result"]["changes"])
    assert kinds == [("column_added", "sex_cd"), ("column_dropped", "sex")]
