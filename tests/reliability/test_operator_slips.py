"""Slips that would cost an operator an id for good (issue 14, item 10 a, b, d).

Written as a careless operator works: a unit saved under a name that is not a unit
file, an id changed in place, a managed file edited by hand.  Each attack runs the
real CLI on a small workspace built from a few of the fixture's units (not the
whole fixture), and asserts both the refusal and that nothing was recorded.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_runner import CliResult, invoke, tht
from helpers import codes

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "workspace"
# Seven units of four kinds: a different size and other names than the examples.
UNITS = [
    "enum/lab-result-flag.md",
    "enum/triage-code.md",
    "formula/bed-occupancy-rate.md",
    "glossary/numero-nosologico.md",
    "glossary/ward.md",
    "mapping/tax-code.md",
    "normalization/nomi-reparto.md",
]


@pytest.fixture(autouse=True)
def _actor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_ACTOR", "carla")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


def managed(ws: Path) -> dict[str, str]:
    """sha256 of every managed file (``.local`` and ``local-manifest.yaml``)."""
    out = {}
    for path in sorted((ws / "evidence").rglob("*")):
        rel = path.relative_to(ws).as_posix()
        if path.is_file() and (rel.startswith("evidence/.local/") or rel.endswith("manifest.yaml")):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Seven units, initialized and consolidated once."""
    ws = tmp_path / "small"
    (ws / "evidence/curated").mkdir(parents=True)
    shutil.copy(FIXTURE / "workspace.yaml", ws / "workspace.yaml")
    for rel in UNITS:
        dest = ws / "evidence/curated" / rel
        dest.parent.mkdir(exist_ok=True)
        shutil.copy(FIXTURE / "evidence/curated" / rel, dest)
    assert tht(ws, "init").exit_code == 0
    assert tht(ws, "consolidate", "--no-activate").exit_code == 0
    return ws


def _deletions(ws: Path) -> list[Any]:
    result = tht(ws, "diff")
    assert result.exit_code == 0, result.stdout
    return list(result.json["result"]["deleted"])


# -- (a) a unit saved under a name that is not a unit file ----------------------------

# (unit to rename, the name the slip gives it), relative to evidence/curated/.
SLIPS = [
    ("glossary/ward.md", "glossary/ward.Md"),  # case
    ("glossary/ward.md", "glossary/ward.mdx"),  # another Markdown dialect's extension
    ("enum/triage-code.md", "enum/triage-code.md~"),  # editor backup
    ("enum/triage-code.md", "enum/triage-code.md.orig"),  # merge tool's leftover
    ("formula/bed-occupancy-rate.md", "formula/.bed-occupancy-rate.md.swp"),  # swap file
    ("formula/bed-occupancy-rate.md", "formula/#bed-occupancy-rate.md#"),  # emacs autosave
    ("mapping/tax-code.md", "mapping/tax-code.txt"),
    ("mapping/tax-code.md", "mapping/tax-code"),  # no extension at all
    ("normalization/nomi-reparto.md", "nomi-reparto.MARKDOWN"),  # and in the wrong folder
]


@pytest.mark.parametrize(("unit", "slip"), SLIPS, ids=[s for _, s in SLIPS])
def test_attack_unit_saved_under_a_non_unit_name_is_refused_never_deleted(
    small: Path, unit: str, slip: str
) -> None:
    curated = small / "evidence/curated"
    before = managed(small)
    (curated / unit).rename(curated / slip)
    where = f"evidence/curated/{slip}"

    for args in (("validate",), ("consolidate", "--no-activate"), ("verify",)):
        result = tht(small, *args)
        assert result.exit_code != 0, f"{args}: {result.stdout}"
        found = [e for e in result.json["errors"] if e["code"] == "E108"]
        assert [e["path"] for e in found] == [where], f"{args}: {result.json['errors']}"
        assert ".md" in found[0]["message"] and "move it" in found[0]["message"], found[0]
    strict = tht(small, "verify", "--strict")
    assert strict.exit_code == 7
    assert any(e["path"] == where and "E108" in e["message"] for e in strict.json["errors"])
    assert managed(small) == before, "a refused consolidate recorded something"

    # Renamed back: nothing was ever deleted, the id is not reserved.
    (curated / slip).rename(curated / unit)
    assert tht(small, "consolidate", "--no-activate").exit_code == 0
    assert _deletions(small) == []
    assert managed(small) == before


def test_attack_backup_copy_next_to_its_unit_is_reported(small: Path) -> None:
    """A backup beside an intact unit loses nothing, but it is still not a unit file."""
    src = small / "evidence/curated/glossary/numero-nosologico.md"
    shutil.copy(src, src.with_name("numero-nosologico.md.bak"))
    result = tht(small, "validate")
    assert result.exit_code == 1
    assert codes(result) == ["E108"]
    assert result.json["errors"][0]["path"].endswith("numero-nosologico.md.bak")


def test_attack_validate_of_the_curated_folder_itself_sees_the_slip(small: Path) -> None:
    """'tht evidence validate evidence/curated' (a folder, not the workspace root)."""
    curated = small / "evidence/curated"
    (curated / "enum/lab-result-flag.md").rename(curated / "enum/lab-result-flag.MD")
    result = invoke(["evidence", "validate", str(curated), "--json"])
    assert result.exit_code == 1
    assert codes(result) == ["E108"]


@pytest.mark.parametrize(
    "placeholder", [".gitkeep", "glossary/.gitkeep", "enum/.DS_Store", "formula/.keep"]
)
def test_placeholders_and_os_metadata_are_not_units_and_not_errors(
    small: Path, placeholder: str
) -> None:
    path = small / "evidence/curated" / placeholder
    path.write_bytes(b"" if "keep" in placeholder else b"\x00\x00\x00\x01Bud1")
    before = managed(small)
    assert tht(small, "validate").exit_code == 0
    assert tht(small, "verify").exit_code == 0
    assert tht(small, "consolidate", "--no-activate").exit_code == 0
    assert managed(small) == before


@pytest.mark.parametrize("suffix", ["tmp", "parked"])
def test_a_temp_file_of_a_save_in_flight_is_not_reported_by_readers(
    small: Path, suffix: str
) -> None:
    """A reader racing a save sees the tool's own temp file, or the bytes a swap parked
    aside for a moment: not an operator's slip (a locked run settles an orphaned one)."""
    temp = small / f"evidence/curated/glossary/.ward.md.0123456789ab.{suffix}"
    temp.write_bytes((small / "evidence/curated/glossary/ward.md").read_bytes())
    assert tht(small, "validate").exit_code == 0
    assert tht(small, "verify").exit_code == 0


# -- (d) a hand-edited local-manifest.yaml --------------------------------------------

MIRROR = "evidence/local-manifest.yaml"


def _canonical(ws: Path) -> bytes:
    from helpers import render_local_manifest_generic

    from evidence_tool.archive.local import LocalEvidenceArchive

    snap = LocalEvidenceArchive(ws).newest_snapshot()
    assert snap is not None
    return render_local_manifest_generic(snap.manifest, snap.revision)


def _retitle(ws: Path, rel: str) -> None:
    path = ws / "evidence/curated" / rel
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("# "))
    lines[i] += " (rev. 2)"
    path.write_text("\n".join(lines), encoding="utf-8")


# (what the operator typed, the text of it that must be shown back)
HAND_EDITS = {
    "curator renamed": (lambda t: t.replace("curator: carla", "curator: dario", 1), "dario"),
    "unit id retyped": (
        lambda t: t.replace("- id: evidence:admin:ward\n", "- id: evidence:admin:ward-x\n", 1),
        "ward-x",
    ),
    "hash retyped": (
        lambda t: t.replace("content_hash: ", "content_hash: 00", 1),
        "content_hash: 00",
    ),
    "not YAML any more": (lambda t: t + "units: [\n", "units: ["),
}


@pytest.mark.parametrize("with_change", [False, True], ids=["alone", "with-a-unit-change"])
@pytest.mark.parametrize("edit", sorted(HAND_EDITS))
def test_attack_hand_edited_local_manifest_is_written_again_showing_the_edit(
    small: Path, edit: str, with_change: bool
) -> None:
    change, shown = HAND_EDITS[edit]
    path = small / MIRROR
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
    state = (small / "evidence/.local/state.yaml").read_bytes()

    # verify and consolidate agree: verify names the difference until consolidate fixes it.
    found = tht(small, "verify")
    assert found.exit_code == 7
    [problem] = [e for e in found.json["errors"] if e["path"] == MIRROR]
    assert problem["code"] == "E701" and shown in problem["message"], problem

    dry = tht(small, "consolidate", "--dry-run")
    assert dry.exit_code == 0 and any(shown in w["message"] for w in dry.json["warnings"])
    assert path.read_text(encoding="utf-8") == change(_canonical(small).decode())

    if with_change:
        _retitle(small, "enum/triage-code.md")
    result = tht(small, "consolidate", "--no-activate")
    assert result.exit_code == 0, result.stdout
    [said] = [w for w in result.json["warnings"] if w["path"] == MIRROR]
    assert said["code"] == "W701" and shown in said["message"], said
    assert path.read_bytes() == _canonical(small)
    assert tht(small, "verify").exit_code == 0
    same_state = (small / "evidence/.local/state.yaml").read_bytes() == state
    assert same_state is not with_change, "only the unit change makes a new revision"


def test_attack_missing_or_older_local_manifest_is_written_again(small: Path) -> None:
    path = small / MIRROR
    first = path.read_bytes()
    _retitle(small, "glossary/ward.md")
    assert tht(small, "consolidate", "--no-activate").exit_code == 0
    assert path.read_bytes() != first

    # An older snapshot's file (say, checked out from an old commit), then none at all.
    for damage in (lambda: path.write_bytes(first), path.unlink):
        damage()
        assert tht(small, "verify").exit_code == 7
        result = tht(small, "consolidate", "--no-activate")
        assert result.exit_code == 0, result.stdout
        assert [w["code"] for w in result.json["warnings"]] == ["W701"]
        assert path.read_bytes() == _canonical(small)
        assert tht(small, "verify").exit_code == 0
        again = tht(small, "consolidate", "--no-activate")
        assert again.json["warnings"] == [] and again.json["result"]["wrote"] is False


def test_attack_a_comment_added_to_local_manifest_is_written_away_once(small: Path) -> None:
    """Comments say nothing to the archive, but they are bytes the tool did not write: the
    file is written again once (W701, the comment shown), then trusted by its seal."""
    path = small / MIRROR
    path.write_bytes(path.read_bytes() + b"# reviewed by the night shift\n")
    assert tht(small, "verify").exit_code == 0  # it still says what the snapshot says
    result = tht(small, "consolidate", "--no-activate")
    assert result.exit_code == 0, result.stdout
    assert [w["code"] for w in result.json["warnings"]] == ["W701"]
    assert "night shift" in result.json["warnings"][0]["message"]
    assert path.read_bytes() == _canonical(small)
    again = tht(small, "consolidate", "--no-activate")
    assert again.json["warnings"] == [] and again.json["result"]["wrote"] is False


# -- (b) an id changed in place --------------------------------------------------------

OLD_ID = "evidence:mapping:tax-code"
NEW_ID = "evidence:anagrafe:codice-fiscale"


def _w122(result: CliResult) -> list[dict[str, Any]]:
    return [w for w in result.json["warnings"] if w["code"] == "W122"]


def _change_id(ws: Path, how: str) -> str:
    """Give mapping/tax-code.md the new id, ``how`` the operator does it; the new path."""
    path = ws / "evidence/curated/mapping/tax-code.md"
    text = path.read_text(encoding="utf-8").replace(f"id: {OLD_ID}\n", f"id: {NEW_ID}\n")
    if how == "and-reworded":
        text = text.replace("# Tax code\n", "# Codice fiscale\n")
    if how == "and-moved":
        path.unlink()
        path = path.with_name("codice-fiscale.md")
    path.write_text(text, encoding="utf-8")
    return path.relative_to(ws).as_posix()


@pytest.mark.parametrize("how", ["only", "and-reworded", "and-moved"])
def test_attack_id_changed_in_place_is_reported_with_the_way_back(small: Path, how: str) -> None:
    rel = _change_id(small, how)

    # Before anything is recorded: status and the dry run say how to keep the old id.
    for args in (("status",), ("consolidate", "--dry-run")):
        found = tht(small, *args)
        assert found.exit_code == 0
        [before] = _w122(found)
        assert before["path"] == rel and OLD_ID in before["message"], args
        assert NEW_ID in before["message"] and f"id: {OLD_ID}" in before["message"], args

    done = tht(small, "consolidate", "--no-activate")
    assert done.exit_code == 0
    assert done.json["result"]["changes"]["deleted"] == [OLD_ID]
    [after] = _w122(done)
    assert after["path"] == rel and "stays reserved" in after["message"]
    restore = f"tht workspace evidence restore {OLD_ID}"
    assert restore in after["message"] and f"id: {OLD_ID}" in after["message"]
    assert _w122(tht(small, "consolidate", "--no-activate")) == [], "reported once, when made"

    # The way back the warning gives: the old id into the file, then restore.
    path = small / rel
    path.write_text(path.read_text().replace(NEW_ID, OLD_ID), encoding="utf-8")
    kept = path.read_bytes()
    back = invoke(["workspace", "evidence", *restore.split()[3:], "--workspace-root", str(small)])
    assert back.exit_code == 0, back.stdout + back.stderr
    assert path.read_bytes() == kept, "restore adopted the operator's file, never rewrote it"
    shown = tht(small, "show", OLD_ID)
    assert shown.json["result"]["deleted"] is None and shown.json["result"]["path"] == rel
    assert tht(small, "verify").exit_code == 0
    assert NEW_ID in [d for d in tht(small, "show", NEW_ID).json["result"]["deleted"].values()]


def test_an_unrelated_deletion_and_addition_are_no_id_change(small: Path) -> None:
    curated = small / "evidence/curated"
    (curated / "glossary/ward.md").unlink()
    text = (curated / "mapping/tax-code.md").read_text(encoding="utf-8")
    other = text.replace(OLD_ID, NEW_ID).replace("# Tax code\n", "# Codice fiscale\n")
    (curated / "mapping/codice-fiscale.md").write_text(
        other.replace("tax code, ", "cf, "), encoding="utf-8"
    )
    result = tht(small, "consolidate", "--no-activate")
    assert result.exit_code == 0
    changes = result.json["result"]["changes"]
    assert changes["deleted"] == ["evidence:admin:ward"] and changes["added"] == [NEW_ID]
    assert _w122(result) == []
