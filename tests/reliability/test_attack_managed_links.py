"""Issue 14 item 3, attacked as an outsider: a managed folder (or file) of the workspace
replaced by a symbolic link that leads outside the workspace root.

Git stores symbolic links, so a checkout (or a careless "move it to the big disk and
link it back") can put one where ``evidence/curated``, ``incoming``, ``.local`` or
``workspace.yaml`` belongs.  Every command must refuse such a workspace with E108
naming the link, and read or write nothing through it.  Unlike the examples in the
issue, these use a small three-unit workspace of another domain, links to sibling and
deeper folders, relative links, and links that stay inside (which must keep working).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import write_guard
from attack_workspace import fingerprint, pharmacy_workspace, tree, unit_text
from cli_runner import invoke, tht

MARKER = "quetzalcoatlite"  # a word only the outside files contain


def relink(ws: Path, managed: str, away: Path, *, relative: bool = False) -> Path:
    """Move ``ws/managed`` to ``away`` and put a symbolic link to it in its place."""
    here = ws / managed
    away.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(here, away)
    target = os.path.relpath(away, here.parent) if relative else away
    os.symlink(target, here)
    return away


def refused(result: Any, managed: str) -> dict[str, Any]:
    """The result is one E108 naming ``managed``, exit 1, and no traceback."""
    assert result.exit_code == 1, result.stdout + result.stderr
    errors = result.json["errors"]
    assert [e["code"] for e in errors] == ["E108"], errors
    assert errors[0]["path"] == managed
    assert "outside the workspace" in errors[0]["message"]
    assert MARKER not in result.stdout
    return errors[0]  # type: ignore[no-any-return]


# Every command that reads or writes the workspace (the read-only ones too: reading
# through the link leaks what it points at).
COMMANDS = [
    ("consolidate",),
    ("validate",),
    ("status",),
    ("verify",),
    ("search", MARKER),
    ("export",),
    ("refresh",),
    ("log",),
    ("show", "evidence:pharmacy:form-1"),
    ("report",),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_attack_curated_tree_moved_to_a_shared_drive_and_linked_back(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    away = relink(ws, "evidence/curated", tmp_path / "shared/drive/units", relative=True)
    planted = away / "glossary/form-9.md"
    planted.write_text(unit_text(9, MARKER))
    before_outside, before_local = tree(away), tree(ws / "evidence/.local")
    with write_guard.watching(planted) as opened:
        result = tht(ws, *command)
    refused(result, "evidence/curated")
    assert list(opened.values()) == [[]], f"read through the link: {opened}"
    assert tree(away) == before_outside
    assert tree(ws / "evidence/.local") == before_local


@pytest.mark.parametrize("managed", ["evidence/incoming", "evidence/source"])
def test_attack_drafts_folder_linked_to_a_sibling_of_the_workspace(
    tmp_path: Path, managed: str
) -> None:
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    away = relink(ws, managed, tmp_path / "drafts-of-ward-7")
    planted = away / "leak.md"
    planted.write_text(f"# Leak\n\n{MARKER} is the cabinet code.\n")
    sources_before = tree(ws / "evidence/.local")
    with write_guard.watching(planted) as opened:
        result = tht(ws, "refresh")
    refused(result, managed)
    assert list(opened.values()) == [[]], f"read through the link: {opened}"
    assert tree(ws / "evidence/.local") == sources_before


@pytest.mark.parametrize(
    "managed", ["evidence/.local", "evidence/.local/snapshots", "evidence/local-manifest.yaml"]
)
@pytest.mark.parametrize("command", [("status",), ("consolidate",), ("log",)], ids=str)
def test_attack_archive_state_kept_on_another_disk(
    tmp_path: Path, managed: str, command: tuple[str, ...]
) -> None:
    """The archive's own files moved away and linked back: the workspace is refused as a
    whole (not half-read), and the moved files stay exactly as they were."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    (ws / "evidence/curated/glossary/form-1.md").write_text(unit_text(1, "capsule"))
    away = relink(ws, managed, tmp_path / "big-disk" / Path(managed).name)
    before = fingerprint(away)
    refused(tht(ws, *command), managed)
    after = fingerprint(away)
    assert after == before


@pytest.mark.parametrize("managed", ["workspace.yaml", "evidence", ".evidence-cache"])
def test_attack_top_level_entry_linked_outside(tmp_path: Path, managed: str) -> None:
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    away = relink(ws, managed, tmp_path / "elsewhere" / managed.lstrip("."))
    before = fingerprint(away)
    for command in (("status",), ("search", "tablet"), ("consolidate",)):
        refused(tht(ws, *command), managed)
    after = fingerprint(away)
    assert after == before


@pytest.mark.parametrize(
    "given",
    [".", "evidence/curated", "evidence/curated/glossary", "evidence/curated/glossary/form-9.md"],
)
@pytest.mark.parametrize("verb", ["fmt", "validate"])
def test_attack_fmt_from_inside_a_workspace_whose_curated_tree_is_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, verb: str
) -> None:
    """`tht evidence fmt PATH` rewrote the file behind the link; any PATH inside the
    workspace (the root, the link, a folder or a file below it) must be refused."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    away = relink(ws, "evidence/curated", tmp_path / "nfs/units")
    planted = away / "glossary/form-9.md"
    planted.write_text(unit_text(9, MARKER).replace("\n# ", "\n\n\n# "))  # not canonical
    before = planted.read_bytes()
    monkeypatch.chdir(ws)
    with write_guard.watching(planted) as opened:
        result = invoke(["evidence", verb, given, "--json"])
    assert result.exit_code == 1, result.stdout + result.stderr
    assert [e["code"] for e in result.json["errors"]] == ["E108"]
    assert "evidence/curated" in result.json["errors"][0]["message"]
    assert MARKER not in result.stdout
    assert planted.read_bytes() == before
    assert list(opened.values()) == [[]], f"read through the link: {opened}"


def test_fmt_of_a_plain_folder_does_not_follow_a_link_out_of_it(tmp_path: Path) -> None:
    """Outside any workspace the folder named is the boundary: a link leaving it is
    refused, the files inside it are still formatted."""
    drafts = tmp_path / "drafts"
    (drafts / "kept").mkdir(parents=True)
    (tmp_path / "victim").mkdir()
    victim = tmp_path / "victim/form-5.md"
    victim.write_text(unit_text(5).replace("\n# ", "\n\n\n# "))
    inner = drafts / "kept/form-6.md"
    inner.write_text(unit_text(6).replace("\n# ", "\n\n\n# "))
    os.symlink(tmp_path / "victim", drafts / "linked")
    before = victim.read_bytes()
    result = invoke(["evidence", "fmt", str(drafts), "--json"])
    assert [e["code"] for e in result.json["errors"]] == ["E108"], result.stdout
    assert result.json["errors"][0]["path"] == str(drafts / "linked")
    assert victim.read_bytes() == before
    assert inner.read_text() == unit_text(6)  # the inside file was formatted


def test_links_that_stay_inside_the_workspace_keep_working(tmp_path: Path) -> None:
    """The rule is containment, not "no links": an operator may keep the drafts in a
    folder of the workspace and link incoming/ to it."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    relink(ws, "evidence/incoming", ws / "inbox", relative=True)
    (ws / "inbox/wards.md").write_text("# Wards\n\nWard 3 is paediatrics.\n")
    result = tht(ws, "refresh")
    assert result.exit_code == 0, result.stdout
    locators = {s["locator"] for s in result.json["result"]["sources"]}
    assert "fs:evidence/incoming/wards.md" in locators
    assert tht(ws, "status").exit_code == 0


@pytest.mark.parametrize("inner", ["objects", "snapshots", "acquisitions"])
@pytest.mark.parametrize("command", [("verify",), ("show", "evidence:pharmacy:form-0")], ids=str)
def test_attack_one_folder_deep_inside_the_archive_linked_outside(
    tmp_path: Path, inner: str, command: tuple[str, ...]
) -> None:
    """Not the archive's top folders but one of their subfolders (an object shard, one
    snapshot, one source's acquisitions) moved to another disk and linked back."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    assert tht(ws, "refresh").exit_code == 0  # records an acquisition of cabinets.md
    parent = ws / "evidence/.local" / inner
    folders = sorted(p for p in parent.iterdir() if p.is_dir())
    assert folders, f"nothing in {inner}"
    rel = str(folders[-1].relative_to(ws))
    away = relink(ws, rel, tmp_path / "archive-disk" / folders[-1].name)
    before = fingerprint(away)
    refused(tht(ws, *command), rel)
    assert fingerprint(away) == before
