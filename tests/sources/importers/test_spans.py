"""The shared span readers against what Python's own writers produce: every cell read back,
every span exactly the bytes at its offsets, for text a generator chose (quotes, commas,
CR, LF, non-ASCII, empty cells)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence_tool.importers.base import SourceFile
from evidence_tool.importers.spans import csv_rows, json_array_items, json_lines_items

# A lone CR is left out: csv.writer (and pandas' to_csv) write it unquoted, where it reads
# as a line end; it is a coded error then (test below), never a wrong cell.
TOKENS = ["a", "b", ",", '"', " ", "\r\n", "\n", "è", "€", ";", "\t"]
CELL = st.lists(st.sampled_from(TOKENS), max_size=10).map("".join)
ROWS = st.lists(st.lists(CELL, min_size=3, max_size=3), min_size=1, max_size=8)
SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _check_spans(raw: bytes, spans: list[object]) -> None:
    for span in spans:
        assert raw[span.start : span.end].decode("utf-8") == span.text  # type: ignore[attr-defined]


@SETTINGS
@given(rows=ROWS, crlf=st.booleans(), bom=st.booleans())
def test_csv_rows_read_back_what_csv_writer_wrote(
    tmp_path: Path, rows: list[list[str]], crlf: bool, bom: bool
) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(["id", "question", "content"])
    writer.writerows(rows)
    raw = (b"\xef\xbb\xbf" if bom else b"") + out.getvalue().encode()
    path = tmp_path / "t.csv"
    path.write_bytes(raw)
    got = list(csv_rows(SourceFile("t.csv", path, len(raw)), "imports/t.csv"))
    # csv.writer writes a row of one empty cell as '""', never a blank line: nothing skipped.
    assert [cells for cells, _, _ in got] == [["id", "question", "content"], *rows]
    _check_spans(raw, [span for _, span, _ in got])
    lines = [line for _, _, line in got]
    assert lines == sorted(lines) and lines[0] == 1


@SETTINGS
@given(rows=ROWS, ascii_only=st.booleans(), indent=st.sampled_from([None, 1]))
def test_json_items_match_json_dumps(
    tmp_path: Path, rows: list[list[str]], ascii_only: bool, indent: int | None
) -> None:
    values = [{"id": r[0], "question": r[1], "content": r[2]} for r in rows]
    raw = json.dumps(values, ensure_ascii=ascii_only, indent=indent).encode()
    array = tmp_path / "t.json"
    array.write_bytes(raw)
    got = list(json_array_items(SourceFile("t.json", array, len(raw)), "imports/t.json", "x"))
    assert [v for v, _, _ in got] == values
    _check_spans(raw, [span for _, span, _ in got])
    lines = b"\n".join(json.dumps(v, ensure_ascii=ascii_only).encode() for v in values) + b"\r\n"
    path = tmp_path / "t.jsonl"
    path.write_bytes(lines)
    got_lines = list(json_lines_items(SourceFile("t.jsonl", path, len(lines)), "imports/t.jsonl"))
    assert [v for v, _, _ in got_lines] == values
    _check_spans(lines, [span for _, span, _ in got_lines])


def test_a_lone_cr_in_an_unquoted_cell_is_a_coded_error(tmp_path: Path) -> None:
    import pytest

    from evidence_tool.errors import SourceError

    raw = b"id,question,content\nq1,a\rb,c\n"
    path = tmp_path / "t.csv"
    path.write_bytes(raw)
    with pytest.raises(SourceError) as caught:
        list(csv_rows(SourceFile("t.csv", path, len(raw)), "imports/t.csv"))
    assert caught.value.code == "E504" and caught.value.line == 2
