"""Each consolidation with the catalog step records, in its snapshot, the catalog
fingerprint it was checked against; without the step it records nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from drift_helpers import installation, new_workspace, run, warehouse

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.catalog.fingerprint import Fingerprint, parse_fingerprint
from evidence_tool.catalog.model import Catalog, Column, Relation
from evidence_tool.unit.yaml_strict import load


def _active(ws: Path) -> tuple[str, dict]:
    snap = LocalEvidenceArchive(ws).active_snapshot()
    assert snap is not None
    return snap.revision, snap.manifest


@pytest.mark.parametrize("kind", ["ddl", "sqlite"])
def test_consolidate_with_the_step_records_the_fingerprint_in_the_snapshot(
    tmp_path: Path, kind: str
) -> None:
    ws = new_workspace(tmp_path)
    inst = installation(tmp_path / "etc", kind, warehouse(kind, tmp_path / "dwh"))
    done = run(ws, "consolidate", installation=inst)
    assert done.exit_code == 0, done.stdout
    assert done.json["result"]["status"] == "activated"
    assert done.json["result"]["catalog"]["checked"] is True
    _, manifest = _active(ws)
    entry = manifest["catalog"]
    assert entry["kind"] == kind
    objects = ws / "evidence/.local/objects"
    data = (objects / entry["fingerprint"][:2] / entry["fingerprint"][2:]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["fingerprint"]
    fp = parse_fingerprint(data)
    # 19 relations in the fixture warehouse: the DDL has one view more than SQLite keeps
    assert entry["relations"] == len(fp.relations) >= 18
    assert "clinical.day_accesses" in fp.relations
    assert fp.relations["admin.drg_weights"].columns[3][0] == "tariff_eur"
    # The Git-reviewed mirror shows it too, and verify accepts the archive.
    mirror = load((ws / "evidence/local-manifest.yaml").read_text(encoding="utf-8")).value
    assert mirror["catalog"] == entry
    assert run(ws, "verify").exit_code == 0


def test_without_the_step_nothing_is_recorded_and_unchanged_units_keep_their_snapshot(
    tmp_path: Path,
) -> None:
    ws = new_workspace(tmp_path)
    plain = run(ws, "consolidate")
    assert plain.exit_code == 0, plain.stdout
    first, manifest = _active(ws)
    assert "catalog" not in manifest and "catalog" not in plain.json["result"]
    inst = installation(tmp_path / "etc", "ddl", warehouse("ddl", tmp_path / "dwh"))
    checked = run(ws, "consolidate", installation=inst)
    second, manifest = _active(ws)
    assert checked.exit_code == 0 and second != first and "catalog" in manifest
    # Nothing changed and nothing was checked: the checked snapshot stays.
    again = run(ws, "consolidate")
    assert again.json["result"]["status"] == "unchanged"
    assert _active(ws)[0] == second
    # A changed unit without the step: a snapshot that claims no check.
    unit = ws / "evidence/curated/enum/sex.md"
    unit.write_text(unit.read_text().replace("Attivo.", "Attivo, registrato."), encoding="utf-8")
    assert run(ws, "consolidate").exit_code == 0
    third, manifest = _active(ws)
    assert third not in (first, second) and "catalog" not in manifest
    # Older snapshots, with and without the record, stay valid.
    verified = run(ws, "verify")
    assert verified.exit_code == 0, verified.stdout
    assert verified.json["result"]["checked"]["snapshots"] == 3


def test_a_changed_warehouse_is_a_new_snapshot_when_the_step_runs(tmp_path: Path) -> None:
    ws = new_workspace(tmp_path)
    dwh = tmp_path / "dwh"
    inst = installation(tmp_path / "etc", "ddl", warehouse("ddl", dwh))
    assert run(ws, "consolidate", installation=inst).exit_code == 0
    first, before = _active(ws)
    assert run(ws, "consolidate", installation=inst).json["result"]["status"] == "unchanged"
    warehouse("ddl", dwh, changed=True)
    later = run(ws, "consolidate", installation=inst)
    second, after = _active(ws)
    assert later.json["result"]["status"] == "activated" and second != first
    assert after["units"] == before["units"]
    assert after["catalog"]["fingerprint"] != before["catalog"]["fingerprint"]


def test_a_snapshot_naming_a_missing_fingerprint_fails_verify(tmp_path: Path) -> None:
    ws = new_workspace(tmp_path)
    inst = installation(tmp_path / "etc", "ddl", warehouse("ddl", tmp_path / "dwh"))
    assert run(ws, "consolidate", installation=inst).exit_code == 0
    digest = _active(ws)[1]["catalog"]["fingerprint"]
    (ws / "evidence/.local/objects" / digest[:2] / digest[2:]).unlink()
    verified = run(ws, "verify")
    assert verified.exit_code == 7
    assert any("catalog fingerprint" in e["message"] for e in verified.json["errors"])


def _catalog(*rels: Relation, search: tuple[str, ...] = ("public",)) -> Catalog:
    return Catalog("ddl", rels, search)


def test_the_fingerprint_is_stable_and_says_what_a_hash_alone_cannot() -> None:
    a = Relation("s", "a", "table", (Column("id", "bigint"), Column("x", "text")))
    b = Relation("s", "B", "view", (Column("id", "bigint"),))
    one, two = Fingerprint.of(_catalog(a, b)), Fingerprint.of(_catalog(b, a))
    assert one.data == two.data and one.digest == two.digest  # order of reading is not content
    assert list(one.relations) == ['s."B"', "s.a"]
    assert json.loads(one.data)["relations"]["s.a"]["columns"] == [["id", "bigint"], ["x", "text"]]
    moved = Relation("s", "a", "table", (Column("x", "text"), Column("id", "bigint")))
    retyped = Relation("s", "a", "table", (Column("id", "integer"), Column("x", "text")))
    digests = {
        Fingerprint.of(c).digest
        for c in (
            _catalog(a, b),
            _catalog(moved, b),
            _catalog(retyped, b),
            _catalog(a),
            _catalog(a, b, search=("s", "public")),
        )
    }
    assert len(digests) == 5
    again = parse_fingerprint(one.data)
    assert again == one and Fingerprint.of(again.catalog()).digest == one.digest
