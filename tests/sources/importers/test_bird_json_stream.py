"""The questions file scanner: records found across block boundaries, byte-exact."""

from __future__ import annotations

import io
import json

import pytest

from evidence_tool.importers import json_stream
from evidence_tool.importers.json_stream import array_records, string_member

RECORDS = [
    {"question_id": 3, "evidence": "a \"quoted\" \\ back\\slash; b = 'x}'", "SQL": "SELECT '{'"},
    {
        "question_id": 4,
        "evidence": "é ✓ 😀 \u2028 end",
        "nested": {"evidence": "decoy", "l": [1, {}]},
    },
    {"question_id": 5, "evidence": "", "SQL": "]]]}}}"},
]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_records_cross_any_block_boundary_byte_exact(
    monkeypatch: pytest.MonkeyPatch, block: int, ascii_only: bool
) -> None:
    monkeypatch.setattr(json_stream, "BLOCK", block)
    text = (
        "\ufeff \n[\n"
        + ",\n  ".join(json.dumps(r, ensure_ascii=ascii_only, indent=1) for r in RECORDS)
        + "\n]\n\n"
    )
    raw = text.encode("utf-8")
    found = list(array_records(io.BytesIO(raw), "q.json", what="test", max_record=1 << 20))
    assert [json.loads(r.raw) for r in found] == RECORDS
    for r in found:
        assert raw[r.start : r.start + len(r.raw)] == r.raw
        assert r.line == raw[: r.start].count(b"\n") + 1
        value = json.loads(r.raw)["evidence"]
        offsets = string_member(r.raw, "evidence", value)
        assert offsets is not None and len(offsets) == len(value) + 1
        # Every character maps to the bytes that spell it, escapes included.
        for k, ch in enumerate(value):
            assert json.loads('"' + r.raw[offsets[k] : offsets[k + 1]].decode() + '"') == ch
