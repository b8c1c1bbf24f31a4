"""Issue 16, attacked as an outsider: an import source's path that leads out of the
workspace or onto what the tool owns, by hand in workspace.yaml or through
``sources add``.  Every case is E501 naming the descriptor key (or the path), reads
nothing outside (the outside files hold a marker word that must never be printed),
and records nothing; links and odd files that stay inside keep working."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_runner import CliResult, tht

MARKER = "xylocarpine"  # only the outside files contain it
ROW = {
    "id": "m1-doc",
    "question": None,
    "content": "Ward codes are four letters.",
    "training_data_type": "documentation",
}


def descriptor(ws: Path, entries: list[dict[str, Any]]) -> None:
    value = {
        "descriptor_version": 4,
        "id": "psd-clinical",
        "name": "PSD clinical",
        "default_language": "en",
        "evidence": {"descriptor_version": 2, "sources": entries},
    }
    (ws / "workspace.yaml").write_text(json.dumps(value, indent=2))


def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace holding a valid Vanna export with the marker."""
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    row = {**ROW, "content": f"{MARKER} secret rule"}
    (folder / "training.json").write_text(json.dumps([row]))
    return folder


def refused(result: CliResult, key: str | None, path: str | None) -> dict[str, Any]:
    assert result.exit_code == 5, result.stdout + result.stderr
    error = result.json["errors"][0]
    assert error["code"] == "E501", error
    if key:
        assert error["message"].startswith(key), error["message"]
    if path:
        assert error["path"] == path
    assert MARKER not in result.stdout + result.stderr
    return error  # type: ignore[no-any-return]


def nothing_recorded(ws: Path) -> None:
    assert not (ws / "evidence/.local/sources.json").exists()
    assert not (ws / "evidence/.local/acquisitions").exists()


def _link_folder_out(ws: Path, tmp: Path) -> str:
    (ws / "imports").mkdir()
    os.symlink(outside(tmp), ws / "imports/vanna")
    return "imports/vanna"


def _link_file_out(ws: Path, tmp: Path) -> str:
    (ws / "imports/vanna").mkdir(parents=True)
    (ws / "imports/vanna/ok.json").write_text(json.dumps([ROW]))
    os.symlink(outside(tmp) / "training.json", ws / "imports/vanna/zz.json")
    return "imports/vanna"


def _relative_link_out(ws: Path, tmp: Path) -> str:
    (ws / "imports").mkdir()
    outside(tmp)
    os.symlink("../../outside/training.json", ws / "imports/training.json")
    return "imports/training.json"


def _link_to_descriptor(ws: Path, tmp: Path) -> str:
    (ws / "imports").mkdir()
    os.symlink("../workspace.yaml", ws / "imports/desc.json")
    return "imports/desc.json"


def _link_into_evidence(ws: Path, tmp: Path) -> str:
    (ws / "imports/vanna").mkdir(parents=True)
    os.symlink("../../evidence/.local", ws / "imports/vanna/state")
    return "imports/vanna"


# name -> (setup returning the entry's path, the path the error names)
LINKS = {
    "folder-link-out": (_link_folder_out, "imports/vanna"),
    "file-link-out-inside-folder": (_link_file_out, "imports/vanna/zz.json"),
    "relative-link-out": (_relative_link_out, "imports/training.json"),
    "link-onto-descriptor": (_link_to_descriptor, "imports/desc.json"),
    "link-into-evidence-local": (_link_into_evidence, "imports/vanna/state"),
}
# name -> the path as written in workspace.yaml (no setup needed)
PLAIN = {
    "the-descriptor": "workspace.yaml",
    "dot-dot": "../outside",
    "absolute": "/etc/hostname",
    "under-evidence": "evidence/incoming",
    "the-acquired-tree": "evidence/source/acquired",
    "git-config": ".git/config",
    "missing": "imports/not-there",
    "dot": ".",
}


@pytest.mark.parametrize("name", sorted(LINKS))
def test_attack_import_link_leaving_the_workspace_refused_by_refresh(
    workspace: Path, tmp_path: Path, name: str
) -> None:
    setup, named = LINKS[name]
    rel = setup(workspace, tmp_path)
    descriptor(workspace, [{"kind": "import", "format": "vanna", "path": rel}])
    refused(tht(workspace, "refresh"), "evidence.sources[0].path", named)
    nothing_recorded(workspace)


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_attack_import_path_outside_or_owned_refused_by_refresh(
    workspace: Path, tmp_path: Path, name: str
) -> None:
    outside(tmp_path)
    (workspace / ".git").mkdir()
    (workspace / ".git/config").write_text("[core]\n")
    descriptor(workspace, [{"kind": "import", "format": "vanna", "path": PLAIN[name]}])
    refused(tht(workspace, "refresh"), "evidence.sources[0].path", None)
    if name != "missing":  # a missing input fails its own source alone (issue 28)
        nothing_recorded(workspace)


@pytest.mark.parametrize("name", sorted(LINKS))
def test_attack_import_link_refused_by_sources_add(
    workspace: Path, tmp_path: Path, name: str
) -> None:
    setup, named = LINKS[name]
    rel = setup(workspace, tmp_path)
    before = (workspace / "workspace.yaml").read_bytes()
    result = tht(workspace, "sources", "add", "--format", "vanna", str(workspace / rel))
    # A link inside the folder is found too: add walks the folder as refresh will.
    refused(result, "evidence.sources[0].path", named)
    assert (workspace / "workspace.yaml").read_bytes() == before


@pytest.mark.parametrize(
    "given",
    [
        "{out}",
        "{ws}/../outside",
        "{ws}",
        "{ws}/workspace.yaml",
        "{ws}/evidence/source",
        "{ws}/imports/none",
    ],
)
def test_attack_sources_add_path_outside_or_owned(
    workspace: Path, tmp_path: Path, given: str
) -> None:
    out = outside(tmp_path)
    path = given.format(out=out, ws=workspace)
    before = (workspace / "workspace.yaml").read_bytes()
    refused(tht(workspace, "sources", "add", "--format", "vanna", path), None, None)
    assert (workspace / "workspace.yaml").read_bytes() == before


def test_attack_fifo_as_import_path_is_refused_without_blocking(workspace: Path) -> None:
    (workspace / "imports").mkdir()
    os.mkfifo(workspace / "imports/training.json")  # a reader would block forever
    descriptor(workspace, [{"kind": "import", "format": "vanna", "path": "imports/training.json"}])
    result = tht(workspace, "refresh")
    error = refused(result, None, "imports/training.json")
    assert "not a regular file" in error["message"]
    nothing_recorded(workspace)


def test_links_and_odd_files_inside_the_workspace_keep_working(workspace: Path) -> None:
    folder = workspace / "imports/vanna"
    folder.mkdir(parents=True)
    (workspace / "exports").mkdir()
    (workspace / "exports/a.json").write_text(json.dumps([ROW]))
    os.symlink("../../exports/a.json", folder / "a.json")  # a link that stays inside
    os.symlink("..", folder / "loop")  # a loop back to a parent: walked once
    os.mkfifo(folder / "pipe.csv")  # not data: skipped, never opened
    descriptor(workspace, [{"kind": "import", "format": "vanna", "path": "imports/vanna"}])
    result = tht(workspace, "refresh")
    assert result.exit_code == 0, result.stdout + result.stderr
    line = next(s for s in result.json["result"]["sources"] if s["kind"] == "import")
    assert line["proposed"] == ["evidence:vanna:m1-doc"]


def test_every_attack_case_ran() -> None:
    assert len(LINKS) == 5 and len(PLAIN) == 8
