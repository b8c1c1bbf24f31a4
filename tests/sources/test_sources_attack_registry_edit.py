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
    # Read as "active" before: a missing or retracted source came back silently.
    ("status_removed", lambda r: r.pop("status")),
    # A copy-paste from another entry: which id is the source's?
    ("source_id_not_its_key", lambda r: r.update(source_id=r["source_id"][::-1])),
    ("source_id_shortened", lambda r: r.update(source_id=r["source_id"][:12])),
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


def _first_entry(text: str) -> tuple[int, int]:
    """Where the first source's entry (``"<id>": {...}``) lies in the pretty file."""
    start = text.index('\n    "', text.index('"sources": {')) + 1
    return start, text.index("\n    },\n", start) + len("\n    },")


def _twice(key: str, value: str) -> Callable[[str], str]:
    """The first line ``"key": ...`` of a record written again above itself, another value."""

    def edit(text: str) -> str:
        at = text.index(f'\n      "{key}": ') + 1
        return f'{text[:at]}      "{key}": {value},\n{text[at:]}'

    return edit


def _entry_twice(text: str) -> str:
    """A merge resolved by keeping both sides: the first source's entry written twice."""
    start, end = _first_entry(text)
    return f"{text[:end]}\n{text[start:end]}{text[end:]}"


FIRST_ID = "<the first source's id>"
# Duplicate keys: json keeps the last, so whichever was meant, one side vanished silently.
TEXT_EDITS: list[tuple[str, Callable[[str], str], str]] = [
    ("status_twice", _twice("status", '"missing"'), "status"),
    ("adopted_hash_twice", _twice("adopted_hash", '"' + "0" * 64 + '"'), "adopted_hash"),
    ("entry_twice", _entry_twice, FIRST_ID),
    (
        "format_twice",
        lambda t: t.replace('"format": 1,', '"format": 1,\n  "format": 1,', 1),
        "format",
    ),
]


@pytest.mark.parametrize(("name", "edit", "key"), TEXT_EDITS, ids=[e[0] for e in TEXT_EDITS])
def test_attack_a_key_written_twice_in_sources_json_is_e701(
    refreshed: Path, tmp_path: Path, name: str, edit: Callable[[str], str], key: str
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(refreshed, ws)
    path = ws / "evidence/.local/sources.json"
    original = path.read_text(encoding="utf-8")
    if key == FIRST_ID:
        key = next(iter(json.loads(original)["sources"]))
    damaged = edit(original)
    json.loads(damaged)  # still JSON: only the duplicate is wrong
    path.write_text(damaged, encoding="utf-8")
    ran = 0
    for command in COMMANDS:
        result = tht(ws, *command)
        errors = result.json.get("errors", [])
        assert result.exit_code not in (0, 70), (command, result.stdout)
        assert [e["code"] for e in errors] == ["E701"], (command, result.stdout)
        assert errors[0]["path"] == "evidence/.local/sources.json"
        message = errors[0]["message"]
        assert "twice" in message and key in message and "restore it from Git" in message
        ran += 1
    assert ran == len(COMMANDS)
    assert path.read_text(encoding="utf-8") == damaged  # refused before anything was written


def test_the_registry_sweeps_ran_every_edit() -> None:
    assert (len(EDITS), len(TEXT_EDITS)) == (8, 4)


class _Counted(str):
    """A key that counts how often it is compared (the duplicate finder's work)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@pytest.mark.parametrize("size", [300, 3_000])
def test_attack_a_key_twice_in_a_large_object_is_found_in_linear_work(size: int) -> None:
    """An affected_files map of a large import holds one key per unit: the key written
    twice at its end must be named after work that grows with the map, not its square
    (a 100,000-key map took a minute before E701)."""
    from evidence_tool.sources.store import _once, _Twice

    keys = [_Counted(f"evidence/curated/x/u{i}.md") for i in range(size)]
    pairs = [(k, None) for k in keys] + [(_Counted(keys[0]), None)]
    _Counted.compared = 0
    with pytest.raises(_Twice) as found:
        _once(pairs)
    assert found.value.args[0] == keys[0]
    assert _Counted.compared <= 4 * len(pairs), _Counted.compared
