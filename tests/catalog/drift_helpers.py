"""A small workspace whose units name known parts of the fixture warehouse, the same
warehouse as DDL files or SQLite databases, and the changes the drift tests make to it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from catalog_helpers import WAREHOUSE, build_sqlite, domain, enum, formula, write_units
from cli_runner import CliResult, invoke

# Three changes of a later warehouse release, written for each catalog kind (SQLite has
# no ALTER COLUMN TYPE: the table is made again).
CHANGES = {
    "ddl": (
        "ALTER TABLE admin.drg_weights DROP COLUMN tariff_eur;\n"
        "ALTER TABLE clinical.day_accesses ALTER COLUMN access_date TYPE timestamp;\n"
        "ALTER TABLE admin.patient_merges RENAME TO patient_links;\n"
    ),
    "sqlite": (
        "ALTER TABLE admin.drg_weights DROP COLUMN tariff_eur;\n"
        "DROP TABLE clinical.day_accesses;\n"
        "CREATE TABLE clinical.day_accesses (admission_id bigint NOT NULL, "
        "access_date timestamp NOT NULL);\n"
        "ALTER TABLE admin.patient_merges RENAME TO patient_links;\n"
    ),
}
UNITS = {
    # a formula over the column whose type changes: a review item
    "evidence/curated/formula/day-count.md": formula(
        "day-count",
        ["clinical.day_accesses"],
        ["clinical.day_accesses.access_date"],
        "count(DISTINCT access_date)",
    ),
    # names the same column outside a formula: touched, no review item
    "evidence/curated/domain/access-dates.md": domain(
        "access-dates", ["clinical.day_accesses"], ["clinical.day_accesses.access_date"]
    ),
    # names the dropped column: a review item
    "evidence/curated/domain/tariff.md": domain(
        "tariff", ["admin.drg_weights"], ["admin.drg_weights.tariff_eur"]
    ),
    # names the renamed table: a review item
    "evidence/curated/domain/merges.md": domain(
        "merges", ["admin.patient_merges"], ["admin.patient_merges.merged_ts"]
    ),
    # names the table that lost a column, but not the column: untouched
    "evidence/curated/formula/weight.md": formula(
        "weight",
        ["admin.drg_weights"],
        ["admin.drg_weights.relative_weight"],
        "relative_weight * 2",
    ),
    "evidence/curated/enum/sex.md": enum("sex", "admin.patients.sex"),
}
ITEMS = {"evidence:test:day-count", "evidence:test:tariff", "evidence:test:merges"}


def new_workspace(tmp: Path) -> Path:
    root = tmp / "ws"
    made = invoke(["workspace", "new", str(root), "--id", "drift", "--language", "en", "--json"])
    assert made.exit_code == 0, made.stdout
    write_units(root, UNITS)
    return root


def warehouse(kind: str, folder: Path, changed: bool = False) -> list[str]:
    """The descriptor's ``paths`` for the fixture warehouse (with the changes)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    extra = CHANGES[kind] if changed else ""
    if kind == "sqlite":
        return build_sqlite(folder, extra)
    shutil.copytree(WAREHOUSE, folder / "ddl")
    if extra:
        (folder / "ddl" / "99-release.sql").write_text(extra, encoding="utf-8")
    return [str(folder / "ddl")]


def installation(folder: Path, kind: str, paths: list[str], **more: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "installation.yaml"
    catalog = {"kind": kind, "paths": paths, **more}
    path.write_text(
        json.dumps({"installation_version": 1, "evidence": {"catalog": catalog}}), encoding="utf-8"
    )
    return path


def run(ws: Path, *args: str, installation: Path | None = None) -> CliResult:
    pre = ["--installation", str(installation)] if installation else []
    return invoke([*pre, "workspace", "evidence", *args, "--workspace-root", str(ws), "--json"])


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (links as their targets)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(root))] = b"->" + str(p.readlink()).encode()
        elif p.is_file():
            out[str(p.relative_to(root))] = p.read_bytes()
    return out
