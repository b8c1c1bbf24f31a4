"""Readers that give each element of a common file shape with its exact byte span.

For any format: the items of a JSON array, the lines of JSON Lines, the records
of a CSV file (quoted cells may span lines; a BOM and CRLF are read).  Each
yields ``(value, span, first line)``; malformed input is E504 naming the file
(workspace-relative, ``shown``) and line.  CSV streams in blocks; JSON takes
the file's bytes (read within the refresh's per-file bound by the caller).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import Any

from evidence_tool.sources.importers.base import SourceFile, Span, malformed

BOM = b"\xef\xbb\xbf"
_SPACE = " \t\r\n"


def decode(raw: bytes, shown: str, line: int = 1) -> str:
    """UTF-8 text; E504 naming the line of the first bad byte (``line``: the line ``raw``
    starts on in its file)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line + raw.count(b"\n", 0, exc.start)
        raise malformed(shown, at, "is not UTF-8 text (binary bytes)") from None


def _load(text: str, shown: str, line: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise malformed(shown, line + exc.lineno - 1, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise malformed(shown, line, "the JSON is nested too deeply") from None


def json_array_items(
    raw: bytes, path: str, shown: str, expected: str = "an array of records"
) -> Iterator[tuple[Any, Span, int]]:
    """The items of a file holding one JSON array, each with the span of its exact text
    (``expected`` names what the format wants, for the message when it is not an array)."""
    offset = len(BOM) if raw.startswith(BOM) else 0
    text = decode(raw[offset:], shown)
    ascii_only = len(text) == len(raw) - offset
    decoder = json.JSONDecoder()
    cursor = [0, 0]  # (character, byte) last converted: offsets are asked in order

    def byte_at(i: int) -> int:
        if ascii_only:
            return offset + i
        char, byte = cursor
        byte += len(text[char:i].encode("utf-8"))
        cursor[:] = [i, byte]
        return offset + byte

    def skip(i: int) -> int:
        while i < len(text) and text[i] in _SPACE:
            i += 1
        return i

    def line_at(i: int) -> int:
        return text.count("\n", 0, i) + 1

    i = skip(0)
    if not text.startswith("[", i):
        what = "a JSON object" if text.startswith("{", i) else "not a JSON array"
        raise malformed(shown, line_at(i), f"the file is {what}, not {expected}")
    i = skip(i + 1)
    line, counted = 1, 0
    while i < len(text) and text[i] != "]":
        line += text.count("\n", counted, i)
        counted = i
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise malformed(shown, exc.lineno, f"invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise malformed(shown, line, "the JSON is nested too deeply") from None
        yield value, Span(path, byte_at(i), byte_at(end), text[i:end]), line
        i = skip(end)
        if i < len(text) and text[i] == ",":
            i = skip(i + 1)
        elif i >= len(text) or text[i] != "]":
            raise malformed(shown, line_at(i), "invalid JSON: expected ',' or ']'")
    if i >= len(text):
        raise malformed(shown, line_at(len(text)), "invalid JSON: the array is not closed")
    if skip(i + 1) != len(text):
        raise malformed(shown, line_at(i), "invalid JSON: text after the closing ']'")


def json_lines_items(raw: bytes, path: str, shown: str) -> Iterator[tuple[Any, Span, int]]:
    """One JSON value per nonblank line; the span is the line without its line end."""
    start = len(BOM) if raw.startswith(BOM) else 0
    for n, chunk in enumerate(raw[start:].split(b"\n"), start=1):
        body = chunk[:-1] if chunk.endswith(b"\r") else chunk
        if body.strip():
            text = decode(body, shown, n)
            yield _load(text, shown, n), Span(path, start, start + len(body), text), n
        start += len(chunk) + 1


def _records(f: SourceFile, shown: str) -> Iterator[tuple[int, int, bytes]]:
    """(first line, byte offset, bytes without the final line end) of each CSV record:
    lines are joined while a quoted cell is open (an odd count of '"' so far)."""
    with f.open() as handle:
        pos = len(BOM) if handle.read(len(BOM)) == BOM else 0
        handle.seek(pos)
        start_line, start, quotes = 0, pos, 0
        parts: list[bytes] = []
        for line, raw_line in enumerate(handle, start=1):
            if not parts:
                start_line, start = line, pos
            parts.append(raw_line)
            quotes += raw_line.count(b'"')
            pos += len(raw_line)
            if quotes % 2:
                continue
            record = b"".join(parts)
            parts, quotes = [], 0
            if record.endswith(b"\r\n"):
                record = record[:-2]
            elif record.endswith(b"\n"):
                record = record[:-1]
            if record.strip():
                yield start_line, start, record
        if parts:
            raise malformed(shown, start_line, "a quoted cell is not closed before the end")


def csv_rows(f: SourceFile, shown: str) -> Iterator[tuple[list[str], Span, int]]:
    """The cells of each CSV record (header included), its span and first line; blank
    lines are skipped.  Streams: one record is in memory at a time."""
    for line, start, body in _records(f, shown):
        text = decode(body, shown, line)
        try:
            cells = next(csv.reader([text], strict=True))
        except csv.Error as exc:
            raise malformed(shown, line, f"invalid CSV: {exc}") from None
        yield cells, Span(f.path, start, start + len(body), text), line
