"""Each legacy version converts to v4 with ids, typed content, provenance and review items kept."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from legacy_oracle import legacy_units, read_manifest, stored_content_hash
from migrate_support import NOW

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.unit import FIELDS, KINDS, Unit, is_italian, parse
from evidence_tool.unit.yaml_strict import load

VERSIONS = ["v1", "v2", "v3"]


def migrate(cli: Callable[..., Any], root: Path, *extra: str) -> dict[str, Any]:
    res = cli(["evidence", "migrate", str(root), "--json", "--actor", "migrator", *extra])
    assert res.exit_code == 0, res.stdout + res.stderr
    assert res.json["ok"] is True
    return res.json["result"]


def v4_unit(root: Path, legacy: dict[str, Any]) -> Unit:
    kind = legacy["typed"]["metadata"]["kind"]
    path = root / "evidence" / "curated" / kind / f"{legacy['name']}.md"
    return parse(path.read_bytes(), path=str(path))


@pytest.mark.parametrize("version", VERSIONS)
def test_fixture_covers_every_kind_both_languages_and_json_bullets(
    version: str, legacy_repo: Callable[..., Path]
) -> None:
    root = legacy_repo(version, git=False)
    units = legacy_units(root)
    pairs = {
        (u["typed"]["metadata"]["kind"], is_italian(u["typed"]["metadata"]["language"]))
        for u in units.values()
    }
    assert pairs == {(k, it) for k in KINDS for it in (False, True)}
    synonyms = units["evidence:clinical:length-of-stay"]["typed"]["payload"]["synonyms"]
    assert any("\n" in s for s in synonyms)
    assert any(s.startswith('"') for s in synonyms)
    assert any(s.startswith("  ") for s in synonyms)
    if version != "v1":  # the stored hashes are what the format says they are
        for u in units.values():
            assert u["stored"]["content_hash"] == stored_content_hash(u["stored"])


@pytest.mark.parametrize("version", VERSIONS)
def test_typed_content_equals_the_legacy_payload_field_by_field(
    version: str, legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo(version)
    legacy = legacy_units(root)
    result = migrate(cli, root)
    assert result["status"] == "migrated"
    assert {u["id"] for u in result["units"]} == set(legacy)
    for uid, old in legacy.items():
        unit = v4_unit(root, old)
        want = old["typed"]
        got = unit.to_json()
        assert unit.id == uid
        assert got["title"] == want["title"], uid
        assert got["metadata"] == want["metadata"], uid
        for spec in FIELDS[unit.kind]:
            assert got["payload"][spec.name] == want["payload"][spec.name], (uid, spec.name)


@pytest.mark.parametrize("version", VERSIONS)
def test_legacy_tree_is_replaced_and_baseline_is_not_activated(
    version: str, legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo(version)
    manifest = read_manifest(root)
    migrate(cli, root)
    assert not (root / "evidence" / "manifest.yaml").exists()
    assert not (root / "evidence" / "units").exists()
    for source in manifest["sources"]:  # original documents stay where they are
        assert (root / source["path"]).is_file()
    state = load((root / "evidence" / ".local" / "state.yaml").read_text()).value
    assert state["baseline"] and state["active"] is None and state["pending"] is None
    local = load((root / "evidence" / "local-manifest.yaml").read_text()).value
    assert [u["id"] for u in local["units"]] == sorted(u["id"] for u in manifest["units"])
    events = [e["event"] for e in LocalEvidenceArchive(root).events()]
    assert events == ["baseline", "migrated"]


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_units_without_legacy_provenance_become_manual_by_the_migrating_actor(
    version: str, legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo(version)
    migrate(cli, root)
    baseline = LocalEvidenceArchive(root).newest_snapshot()
    assert baseline is not None
    for entry in baseline.entries():
        assert entry.provenance == {"kind": "manual", "curator": "migrator", "declared_at": NOW}
        assert entry.review_items == []


def test_v3_provenance_and_review_items_reach_the_baseline(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v3")
    legacy = legacy_units(root)
    migrate(cli, root)
    baseline = LocalEvidenceArchive(root).newest_snapshot()
    assert baseline is not None
    documents = 0
    for entry in baseline.entries():
        old = legacy[entry.id]
        prov = old["provenance"]
        if prov is None:
            assert entry.provenance["kind"] == "manual"
            assert entry.provenance["curator"] == "migrator"
        elif prov["kind"] == "manual":
            assert entry.provenance == prov
        else:
            documents += 1
            new = entry.provenance
            source_id = hashlib.sha256(f"fs:{prov['source_path']}".encode()).hexdigest()
            assert new["source_id"] == source_id
            assert new["source_path"] == (
                f"evidence/source/acquired/{source_id}/{prov['source_hash']}.md"
            )
            data = (root / new["source_path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == prov["source_hash"] == new["source_hash"]
            assert new["excerpts"] == prov["excerpts"]
            assert all(e in data.decode() for e in new["excerpts"])
            assert (new["declared_at"], new["actor"]) == (prov["declared_at"], prov["actor"])
        items = [
            {k: i[k] for k in ("code", "message", "raised_by", "raised_at")}
            for i in entry.review_items
        ]
        assert sorted(items, key=str) == sorted(old["review_items"], key=str)
        assert all(i["content_hash"] == entry.content_hash for i in entry.review_items)
    assert documents == 3


def test_a_stale_rendered_body_is_not_authoritative(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v2")
    body = (root / "evidence/units/normalization/icd9-code-format.md").read_text()
    assert "old wording" in body
    migrate(cli, root)
    text = (root / "evidence/curated/normalization/icd9-code-format.md").read_text()
    assert "old wording" not in text
    assert "Remove the dot; keep leading zeros" in text


def consolidate(cli: Callable[..., Any], root: Path) -> Any:
    return cli(["workspace", "evidence", "consolidate", "--workspace-root", str(root), "--json"])


@pytest.mark.parametrize("version", VERSIONS)
def test_consolidate_after_migrate_activates(
    version: str, legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo(version)
    migrate(cli, root)
    if version == "v3":
        # Carried review items still block consolidation until resolved (SPEC.md 5.3).
        blocked = consolidate(cli, root)
        assert blocked.exit_code == 1
        assert {e["code"] for e in blocked.json["errors"]} == {"E140"}
        for uid in sorted({e["unit_id"] for e in blocked.json["errors"]}):
            res = cli(
                [
                    "workspace",
                    "evidence",
                    "review",
                    "resolve",
                    uid,
                    "--note",
                    "checked after migration",
                    "--workspace-root",
                    str(root),
                ]
            )
            assert res.exit_code == 0, res.stderr
    res = consolidate(cli, root)
    assert res.exit_code == 0, res.stdout
    assert res.json["result"]["status"] == "activated"
    state = load((root / "evidence" / ".local" / "state.yaml").read_text()).value
    assert state["active"] == res.json["result"]["revision"] and state["pending"] is None
