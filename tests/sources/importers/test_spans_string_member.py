"""The JSON array reader and ``string_member`` on BIRD-shaped records: every item
byte-exact, and every character of a string member mapped to the bytes that spell it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_tool.importers.base import SourceFile
from evidence_tool.importers.spans import json_array_items, string_member

RECORDS = [
    {"question_id": 3, "evidence": "a \"quoted\" \\ back\\slash; b = 'x}'", "SQL": "SELECT '{'"},
    {
        "question_id": 4,
        "evidence": "é ✓ 😀 \u2028 end",
        "nested": {"evidence": "decoy", "l": [1, {}]},
    },
    {"question_id": 5, "evidence": "", "SQL": "]]]}}}"},
]


@pytest.mark.parametrize("ascii_only", [True, False])
def test_items_and_string_members_are_byte_exact(tmp_path: Path, ascii_only: bool) -> None:
    text = (
        "\ufeff \n[\n"
        + ",\n  ".join(json.dumps(r, ensure_ascii=ascii_only, indent=1) for r in RECORDS)
        + "\n]\n\n"
    )
    raw = text.encode("utf-8")
    path = tmp_path / "q.json"
    path.write_bytes(raw)
    found = list(json_array_items(SourceFile("q.json", path, len(raw)), "q.json", "test"))
    assert [value for value, _, _ in found] == RECORDS
    for value, span, line in found:
        item = raw[span.start : span.end]
        assert item.decode("utf-8") == span.text and json.loads(item) == value
        assert line == raw[: span.start].count(b"\n") + 1
        offsets = string_member(item, "evidence", value["evidence"])
        assert offsets is not None and len(offsets) == len(value["evidence"]) + 1
        # Every character maps to the bytes that spell it, escapes included.
        for k, ch in enumerate(value["evidence"]):
            assert json.loads('"' + item[offsets[k] : offsets[k + 1]].decode() + '"') == ch
