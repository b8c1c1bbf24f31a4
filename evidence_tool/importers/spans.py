"""Readers that give each element of a common file shape with its exact byte span.

For any format: the items of a JSON array, the lines of JSON Lines, the records
of a CSV file (quoted cells may span lines; a BOM and CRLF are read).  Each
yields ``(value, span, first line)``; malformed input is E504 naming the file
(workspace-relative, ``shown``) and line.  They stream: a CSV or JSON Lines
file is read a record at a time, a JSON array is mapped and decoded an item
at a time, so an input costs its items, not its size.
"""

from __future__ import annotations

import csv
import json
import mmap
import os
import re
from collections.abc import Iterator
from typing import Any

from evidence_tool.importers.base import BOM, SourceFile, Span, after_bom, malformed, utf8
from evidence_tool.importers.json_stream import (
    DuplicateKey,
    duplicate_line,
    duplicate_message,
    loads_unique,
)


def decode(raw: bytes, shown: str, line: int = 1) -> str:
    """UTF-8 text; E504 naming the line of the first bad byte (``line``: the line ``raw``
    starts on in its file)."""
    return utf8(raw, shown, line, "is not UTF-8 text (binary bytes)")


def _load(text: str, shown: str, line: int) -> Any:
    try:
        return loads_unique(text)
    except DuplicateKey as exc:
        at = line + duplicate_line(text.encode("utf-8"), exc.key)
        raise malformed(shown, at, duplicate_message(exc.key)) from None
    except json.JSONDecodeError as exc:
        raise malformed(shown, line + exc.lineno - 1, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise malformed(shown, line, "the JSON is nested too deeply") from None


# A JSON string (escapes included), a lone quote (a string never closed), or structure.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|["\[\]{},]', re.DOTALL)


QUOTE, COMMA, BRACKET, BRACE = b'"'[0], b","[0], b"]"[0], b"}"[0]
OPEN, CLOSE = b"[{", b"]}"


class _Lines:
    """Line numbers of byte offsets asked in increasing order, counted once."""

    def __init__(self, data: Any) -> None:
        self.data, self.pos, self.line = data, 0, 1

    def at(self, pos: int) -> int:
        if pos < self.pos:
            return int(self.data[:pos].count(b"\n")) + 1
        self.line += self.data[self.pos : pos].count(b"\n")
        self.pos = pos
        return self.line


def json_array_items(
    f: SourceFile, shown: str, expected: str = "an array of records"
) -> Iterator[tuple[Any, Span, int]]:
    """The items of a file holding one JSON array, each with the span of its exact text
    (``expected`` names what the format wants, for the message when it is not an array).
    The file is mapped, not read: one item at a time is decoded, so a large export
    costs its items, not its size."""
    with f.open() as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            raise malformed(shown, None, f"the file is empty, not {expected}")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            yield from _array_items(data, size, f.path, shown, expected)


def _array_items(
    data: Any, size: int, path: str, shown: str, expected: str
) -> Iterator[tuple[Any, Span, int]]:
    lines = _Lines(data)
    pos = after_bom(data)
    while pos < size and data[pos] in b" \t\r\n":
        pos += 1
    if data[pos : pos + 1] != b"[":
        what = "a JSON object" if data[pos : pos + 1] == b"{" else "not a JSON array"
        raise malformed(shown, lines.at(pos), f"the file is {what}, not {expected}")
    depth, start, first, closed = 0, pos + 1, True, -1
    for match in _TOKENS.finditer(data, pos + 1):
        token = data[match.start()]  # one byte: a string's text is never copied here
        if token == QUOTE:
            if match.end() - match.start() == 1:
                raise malformed(
                    shown, lines.at(match.start()), "invalid JSON: a string is not closed"
                )
            continue
        if token in OPEN:
            depth += 1
        elif token in CLOSE and depth:
            depth -= 1
        elif token == COMMA and depth:
            continue
        else:  # at the array's own level: ',' ends an item, ']' the array
            if token == BRACE:
                raise malformed(shown, lines.at(match.start()), "invalid JSON: unexpected '}'")
            item = _item(data, start, match.start(), path, shown, lines)
            if item is None and not (token == BRACKET and first):
                raise malformed(shown, lines.at(match.start()), "invalid JSON: a value is missing")
            if item is not None:
                yield item
            first, start = False, match.end()
            if token == BRACKET:
                closed = match.start()
                break
    if closed < 0:
        raise malformed(shown, lines.at(size), "invalid JSON: the array is not closed")
    if data[closed + 1 :].strip():
        raise malformed(shown, lines.at(closed), "invalid JSON: text after the closing ']'")


def _item(
    data: Any, start: int, stop: int, path: str, shown: str, lines: _Lines
) -> tuple[Any, Span, int] | None:
    """The value between two separators, whitespace around it left out (None: empty)."""
    while start < stop and data[start] in b" \t\r\n":
        start += 1
    while stop > start and data[stop - 1] in b" \t\r\n":
        stop -= 1
    if start == stop:
        return None
    line = lines.at(start)
    text = decode(data[start:stop], shown, line)
    return _load(text, shown, line), Span(path, start, stop, text), line


def json_lines_items(f: SourceFile, shown: str) -> Iterator[tuple[Any, Span, int]]:
    """One JSON value per nonblank line; the span is the line without its line end.
    Streams: one line is in memory at a time."""
    with f.open() as handle:
        start = after_bom(handle.read(len(BOM)))
        handle.seek(start)
        for n, chunk in enumerate(handle, start=1):
            body = chunk[:-1] if chunk.endswith(b"\n") else chunk
            body = body[:-1] if body.endswith(b"\r") else body
            if body.strip():
                text = decode(body, shown, n)
                yield _load(text, shown, n), Span(f.path, start, start + len(body), text), n
            start += len(chunk)


def _records(f: SourceFile, shown: str) -> Iterator[tuple[int, int, bytes]]:
    """(first line, byte offset, bytes without the final line end) of each CSV record:
    lines are joined while a quoted cell is open (an odd count of '"' so far)."""
    with f.open() as handle:
        pos = after_bom(handle.read(len(BOM)))
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
