"""Activation updates the published index in place of a rebuild, and the result is the
index a rebuild would make (SPEC.md 8, 12): only changed units are parsed and written."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import (
    FORMULA,
    FORMULA_PATH,
    Tht,
    add_word,
    cache_leftovers,
    stage_document,
    state,
    unit_file,
)

from evidence_tool.activation import sqlite_index
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace.layout import Layout

INDEX = Path(".evidence-cache") / "index.sqlite"
BUILD = sqlite_index.build_index  # the reference, whatever a test spies on


def _content(path: Path) -> dict[str, Any]:
    """Everything the index holds, rowids aside, in a comparable form."""
    con = sqlite3.connect(path)
    try:
        return {
            "meta": sorted(con.execute("SELECT key, value FROM meta").fetchall()),
            "units": sorted(con.execute("SELECT * FROM units").fetchall()),
            "purposes": sorted(con.execute("SELECT * FROM unit_purposes").fetchall()),
            "tables": sorted(con.execute("SELECT * FROM unit_tables").fetchall()),
            "fts": sorted(con.execute("SELECT id, title, body, applies_to FROM fts").fetchall()),
            # Each fts row belongs to its unit's row: deletes by rowid must find it.
            "linked": con.execute(
                "SELECT count(*) FROM fts JOIN units u ON u.rowid = fts.rowid AND u.id = fts.id"
            ).fetchone()[0],
        }
    finally:
        con.close()


def _rebuilt(root: Path, tmp: Path) -> dict[str, Any]:
    snap = LocalEvidenceArchive(root).active_snapshot()
    assert snap is not None
    fresh = tmp / "fresh.sqlite"
    fresh.unlink(missing_ok=True)
    BUILD(fresh, snap.revision, snap.records())
    return _content(fresh)


class Calls:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
        # A full build may run in a forked child (activation/_speed/prebuild.py): it is counted
        # in a file, which the child's writes reach and its memory would not.
        self._builds = folder / "builds"
        self._builds.touch()
        self.updates: list[tuple[str, set[str]]] = []
        build, update = sqlite_index.build_index, sqlite_index.update_in_place

        def spy_build(path: Path, revision: str, records: Any) -> int:
            with open(self._builds, "a", encoding="utf-8") as fh:
                fh.write(revision + "\n")
            return build(path, revision, records)

        def spy_update(path: Path, revision: str, drop: Any, records: Any, finish: Any) -> int:
            self.updates.append((revision, set(drop)))
            return update(path, revision, drop, records, finish)

        monkeypatch.setattr(sqlite_index, "build_index", spy_build)
        monkeypatch.setattr(sqlite_index, "update_in_place", spy_update)

    @property
    def builds(self) -> list[str]:
        return self._builds.read_text(encoding="utf-8").splitlines()


def test_each_kind_of_change_updates_the_index_to_what_a_rebuild_makes(
    indexed: Path, tht: Tht, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = Calls(monkeypatch, tmp_path)
    changes = [
        ("modified", lambda: add_word(indexed / FORMULA_PATH, "zanzibarite")),
        ("removed", lambda: unit_file(indexed, "evidence:admin:patient-merge").unlink()),
        ("renamed", lambda: _rename(unit_file(indexed, "evidence:clinical:drg"))),
        ("provenance", lambda: stage_document(indexed, FORMULA, "giornate di degenza")),
        ("added", lambda: _copy_as_new(indexed)),
    ]
    for name, change in changes:
        change()
        result = tht("consolidate").json["result"]
        assert result["status"] == "activated", (name, result)
        assert _content(indexed / INDEX) == _rebuilt(indexed, tmp_path), name
        assert tht("verify", "--index").exit_code == 0, name
    assert calls.builds == [], "every one of these was an update of the published index"
    assert [len(drop) for _, drop in calls.updates] == [1, 1, 1, 1, 1]
    assert cache_leftovers(indexed) == []
    hits = tht("search", "zanzibarite").json["result"]
    assert hits["revision"] == state(indexed).active
    assert [h["id"] for h in hits["hits"]] == [FORMULA]
    # A record kept from an earlier revision is served as the index's revision.
    found = sqlite_index.search(Layout.at(indexed), "zanzibarite", sqlite_index.Filters())
    assert found.hits[0].record.to_json()["revision"] == state(indexed).active
    drg = sqlite_index.search(Layout.at(indexed), "DRG", sqlite_index.Filters())
    assert all(h.record.to_json()["revision"] == state(indexed).active for h in drg.hits)


def _rename(path: Path) -> None:
    path.rename(path.with_name("renamed-" + path.name))


def _copy_as_new(root: Path) -> None:
    src = unit_file(root, "evidence:clinical:drg")
    text = src.read_text().replace("id: evidence:clinical:drg", "id: evidence:clinical:drg-copy")
    (src.parent / "drg-copy.md").write_text(text)


def test_a_drifted_index_is_rebuilt_never_carried_forward(
    indexed: Path, tht: Tht, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    con = sqlite3.connect(indexed / INDEX)
    con.execute("UPDATE units SET content_hash = 'x' WHERE id = ?", (FORMULA,))
    con.commit()
    con.close()
    calls = Calls(monkeypatch, tmp_path)
    add_word(unit_file(indexed, "evidence:clinical:drg"), "zanzibarite")
    assert tht("consolidate").json["result"]["status"] == "activated"
    assert len(calls.builds) == 1 and calls.updates == []
    assert _content(indexed / INDEX) == _rebuilt(indexed, tmp_path)


@pytest.mark.parametrize("key, value", [("format", "1"), ("tool", "0.0.0-other")])
def test_an_index_of_another_format_or_tool_version_is_rebuilt(
    indexed: Path,
    tht: Tht,
    monkeypatch: pytest.MonkeyPatch,
    key: str,
    value: str,
    tmp_path: Path,
) -> None:
    con = sqlite3.connect(indexed / INDEX)
    con.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    con.commit()
    con.close()
    calls = Calls(monkeypatch, tmp_path)
    add_word(indexed / FORMULA_PATH, "zanzibarite")
    assert tht("consolidate").json["result"]["status"] == "activated"
    assert len(calls.builds) == 1 and calls.updates == []


def test_an_update_parses_only_the_changed_units(
    indexed: Path, tht: Tht, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole command parses the changed unit once: the scan parses it and the index
    update takes that unit, it does not parse the blob again (issue 20)."""
    import importlib

    parse_module = importlib.import_module("evidence_tool.unit.parse")
    parsed: list[str] = []
    real = parse_module.parse_body

    def counting(body: str, *args: Any) -> Any:
        parsed.append(body)
        return real(body, *args)

    monkeypatch.setattr(parse_module, "parse_body", counting)
    add_word(indexed / FORMULA_PATH, "zanzibarite")
    assert tht("consolidate").json["result"]["status"] == "activated"
    assert len(parsed) == 1 and "zanzibarite" in parsed[0]


def test_changes_of_every_kind_at_once_drop_exactly_their_rows_without_viewing_the_manifests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One consolidate that modifies, reformats, moves, deletes and adds units of a larger
    workspace: the update is told the changed ids by the derivation (no entry of either
    manifest viewed to compare them), replaces exactly those rows, and ends equal to a
    rebuild (issue 20)."""
    import sys

    from evidence_tool.archive import manifest as manifest_module

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.generate import generate

    root = generate(63, tmp_path / "ws", seed=5)
    archive = LocalEvidenceArchive(root)

    def consolidate() -> str:
        return archive.consolidate("tester", sqlite_index.SqliteBackend(Layout.at(root))).status

    assert consolidate() == "activated"
    files = sorted((root / "evidence" / "curated").rglob("*.md"))
    ids = {f: _id_of(f) for f in files}
    modified, reformatted, moved, deleted = files[3], files[17], files[29], files[41]
    modified.write_text(modified.read_text(encoding="utf-8").rstrip("\n") + " Quokka.\n")
    text = reformatted.read_text(encoding="utf-8")
    reformatted.write_text(text.replace("\n---\n", "\n---\n\n", 1), encoding="utf-8")
    moved.rename(moved.with_name("moved-" + moved.name))
    deleted.unlink()
    added = files[50].read_text(encoding="utf-8").replace(ids[files[50]], ids[files[50]] + "-b")
    files[50].with_name("added-" + files[50].name).write_text(added, encoding="utf-8")

    calls = Calls(monkeypatch, tmp_path)
    viewed = [0]
    real_units = manifest_module.Manifest.units

    def counting_units(self: Any) -> Any:
        viewed[0] += 1
        return real_units(self)

    monkeypatch.setattr(manifest_module.Manifest, "units", counting_units)
    assert consolidate() == "activated"
    assert calls.builds == []
    expected = {ids[modified], ids[reformatted], ids[moved], ids[deleted], ids[files[50]] + "-b"}
    assert [drop for _, drop in calls.updates] == [expected]
    assert viewed[0] == 0
    assert _content(root / INDEX) == _rebuilt(root, tmp_path)


def _id_of(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("id: "):
            return line[4:].strip().strip('"')
    raise AssertionError(f"no id line in {path}")


def _twin(uid: str) -> dict[str, Any]:
    """A unit whose text every other twin shares: equal BM25, told apart by rowid."""
    return {
        "id": uid,
        "kind": "glossary",
        "language": "en",
        "title": "ward stay",
        "path": f"evidence/curated/glossary/{uid}.md",
        "provenance_kind": "manual",
        "content_hash": uid,
        "metadata": {"purposes": ["qa"], "applies_to": {}},
        "payload": {"definition": "ward stay"},
    }


def test_rows_updated_in_place_get_the_rowids_sqlite_gives(tmp_path: Path) -> None:
    # The rows of an update are numbered as SQLite numbers rows inserted one by one: after
    # the largest left (the highest deleted rowids are given again), in the records' order,
    # an fts row sharing its unit's.  FTS5 breaks BM25 ties at the depth boundary by rowid
    # (test_postings), so the numbers decide which of many equal units a search returns.
    path = tmp_path / "index.sqlite"
    sqlite_index.build_index(path, "r0", [_twin(u) for u in ("u9", "u8", "u7", "u6")])

    def update(revision: str, drop: set[str], new: list[str]) -> dict[str, int]:
        records = [_twin(u) for u in new]
        sqlite_index.update_in_place(path, revision, drop, records, lambda con: None)
        con = sqlite3.connect(path)
        try:
            rows = con.execute("SELECT u.id, u.rowid, f.rowid FROM units u JOIN fts f USING (id)")
            return {uid: rowid for uid, rowid, fts_rowid in rows if rowid == fts_rowid}
        finally:
            con.close()

    assert update("r1", {"u7", "u6"}, ["u5", "u4", "u3"]) == {
        "u9": 1, "u8": 2, "u5": 3, "u4": 4, "u3": 5,
    }  # fmt: skip
    assert update("r2", {"u9", "u3"}, ["u2"]) == {"u8": 2, "u5": 3, "u4": 4, "u2": 5}
    assert update("r3", {"u8", "u5", "u4", "u2"}, ["u1", "u0"]) == {"u1": 1, "u0": 2}
