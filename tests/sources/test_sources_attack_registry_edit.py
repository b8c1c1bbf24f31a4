"""A hand-edited sources.json (a merge gone wrong, a typo) is refused with E701 naming
the fix, by every command that reads it: never a traceback (exit 70)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import tht

REPO = Path(__file__).resolve().parents[2]

Edit = Callable[[dict[str, Any]], object]
EDITS: list[tuple[str, Edit]] = [
    ("locator_removed", lambda r: r.pop("locator")),
    ("kind_unknown", lambda r: r.update(kind="ftp")),
    ("comparison_a_list", lambda r: r.update(comparison=[1, 2])),
    ("retraction_without_note", lambda r: r.update(retraction={"actor": "x", "at": "y"})),
    ("status_a_number", lambda r: r.update(status=3)),
]
COMMANDS = [("sources", "list"), ("refresh",), ("consolidate",)]


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("registry") / "ws"
    shutil.copytree(REPO / "fixtures/workspace", ws)
    assert tht(ws, "refresh").exit_code == 0
    return ws


@pytest.mark.parametrize(("name", "edit"), EDITS, ids=[e[0] for e in EDITS])
def test_attack_hand_edited_sources_json_is_e701_not_a_crash(
    refreshed: Path, tmp_path: Path, name: str, edit: Edit
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(refreshed, ws)
    path = ws / "evidence/.local/sources.json"
    registry = json.loads(path.read_text(encoding="utf-8"))
    edit(next(iter(registry["sources"].values())))
    path.write_text(json.dumps(registry), encoding="utf-8")
    ran = 0
    for command in COMMANDS:
        result = tht(ws, *command)
        codes = [e["code"] for e in result.json.get("errors", [])]
        assert result.exit_code not in (0, 70) and codes == ["E701"], (command, result.stdout)
        assert "restore it from Git" in result.json["errors"][0]["message"]
        ran += 1
    assert ran == len(COMMANDS)
