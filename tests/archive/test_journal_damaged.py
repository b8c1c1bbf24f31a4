"""A hand-damaged journal entry is E701 naming the entry, never a crash: the entries are
typed records (evidence_tool/record.py), and a shape msgspec refuses is a ValueError the
journal maps to its code, as the hand-written reader's KeyError and ValueError were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evidence_tool.archive.journal import FileChange, JournalEntry
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import IntegrityError

GOOD: dict[str, Any] = {
    "op": "save",
    "actor": "ann",
    "at": "2026-01-01T00:00:00Z",
    "files": [{"path": "evidence/curated/x.md", "pre": None, "post": "a" * 64}],
    "staged": {},
    "note": "kept as written",  # a key a layer above recorded: read back at the top level
}

DAMAGED: dict[str, Any] = {
    "not an object": [1, 2],
    "op missing": {k: v for k, v in GOOD.items() if k != "op"},
    "files not a list": {**GOOD, "files": "x.md"},
    "a file without its path": {**GOOD, "files": [{"pre": None, "post": None}]},
    "a hash that is a number": {**GOOD, "files": [{"path": "x.md", "pre": 7, "post": None}]},
    "staged not an object": {**GOOD, "staged": ["x"]},
    "actor a number": {**GOOD, "actor": 3},
}


def test_a_good_entry_reads_back_with_its_extra_keys() -> None:
    entry = JournalEntry.from_json(GOOD)
    assert entry.files == (FileChange("evidence/curated/x.md", None, "a" * 64),)
    assert entry.extra == {"note": "kept as written"}
    assert json.dumps(entry.to_json()) == json.dumps(GOOD)


@pytest.mark.parametrize("why", sorted(DAMAGED))
def test_a_damaged_entry_is_e701_naming_the_entry(tmp_path: Path, why: str) -> None:
    archive = LocalEvidenceArchive(tmp_path)  # reading the journal needs no workspace
    folder = archive.journal.folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0001-damaged.json").write_text(json.dumps(DAMAGED[why]), "utf-8")
    with pytest.raises(IntegrityError) as caught:
        archive.journal.pending()
    assert caught.value.code == "E701"
    assert "0001-damaged.json" in caught.value.message, why
    assert caught.value.path is not None and caught.value.path.endswith("0001-damaged.json")


def test_every_damage_was_tried() -> None:
    assert len(DAMAGED) == 7
