"""BIRD ``database_description/<table>.csv`` files, read row by row with exact byte spans.

Each file describes one table: ``original_column_name, column_name,
column_description, data_format, value_description``.  The files in the wild
have a UTF-8 BOM on some, quoted cells over several lines, trailing spaces in
names and, for a few, Windows-1252 bytes: those are refused (E504 naming the
line), since a span must be the file's exact UTF-8 bytes; re-encoding the file
(``iconv -f cp1252 -t utf-8``) is the fix.  The csv module reads one record at
a time from a line iterator that counts bytes, so a 200,000-row file streams.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass

from evidence_tool.importers.base import BOM, SourceFile, malformed

HEADER = (
    "original_column_name",
    "column_name",
    "column_description",
    "data_format",
    "value_description",
)
REQUIRED = ("original_column_name", "column_description")


@dataclass(frozen=True)
class Row:
    cells: dict[str, str]  # header name -> cell, every HEADER name present ("" if absent)
    start: int  # byte offsets of the record in the file, line ending excluded
    end: int
    text: str  # the record's exact text
    line: int  # 1-based first line


class _Lines:
    """Decoded lines of a binary file with the byte offset and number of each."""

    def __init__(self, handle: Iterator[bytes], shown: str) -> None:
        self.handle, self.shown = handle, shown
        self.offset = 0  # byte offset just past the last line handed out
        self.number = 0  # its 1-based number
        self.texts: list[tuple[int, int, str]] = []  # (start, line, text) since the last take

    def __iter__(self) -> Iterator[str]:
        for raw in self.handle:
            self.number += 1
            start = self.offset
            self.offset += len(raw)
            if self.number == 1 and raw.startswith(BOM):
                raw, start = raw[len(BOM) :], start + len(BOM)
            if b"\x00" in raw:
                raise malformed(self.shown, self.number, "a NUL byte; a description CSV is text")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise malformed(
                    self.shown,
                    self.number,
                    f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "save it as UTF-8, e.g. iconv -f cp1252 -t utf-8",
                ) from None
            self.texts.append((start, self.number, text))
            yield text

    def take(self) -> tuple[int, int, str]:
        """(start, first line, text) of the record the csv reader just returned."""
        start, line = self.texts[0][:2]
        text = "".join(t for _, _, t in self.texts)
        self.texts = []
        return start, line, text


def rows(f: SourceFile, shown: str) -> Iterator[Row]:
    """The described columns of one file (the header checked, blank rows skipped)."""
    with f.open() as handle:
        lines = _Lines(iter(handle), shown)
        reader = csv.reader(lines, strict=True)
        header: list[str] | None = None
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                # Named at the record's first line: an unclosed quote runs on to the end.
                line = lines.texts[0][1] if lines.texts else lines.number
                raise malformed(shown, line, f"invalid CSV: {exc}") from None
            start, line, text = lines.take()
            if header is None:
                header = _header(cells, shown, line)
                continue
            if any(c.strip() for c in cells):
                yield _row(header, cells, shown, start, line, text)
    if header is None:
        raise malformed(shown, None, f"the file is empty; a description CSV starts {HEADER}")


def _header(cells: list[str], shown: str, line: int) -> list[str]:
    names = [c.strip().lower() for c in cells]
    unknown = [n for n in names if n not in HEADER]
    missing = [n for n in REQUIRED if n not in names]
    if unknown or missing:
        what = f"has {', '.join(map(repr, unknown))}" if unknown else f"lacks {missing[0]}"
        raise malformed(
            shown,
            line,
            f"the header {what}; a BIRD description file has the columns {', '.join(HEADER)}",
        )
    return names


def _row(header: list[str], cells: list[str], shown: str, start: int, line: int, text: str) -> Row:
    extra = cells[len(header) :]
    if any(c.strip() for c in extra):
        raise malformed(shown, line, f"the row has {len(cells)} cells, the header {len(header)}")
    values = dict.fromkeys(HEADER, "")
    values.update(zip(header, cells, strict=False))
    body = text.rstrip("\r\n")
    end = start + len(body.encode("utf-8"))
    return Row(values, start, end, body, line)


# -- value descriptions ---------------------------------------------------------------

# A stored value: quoted text, a number, or a short code (N, Y, W, HS, ...).
_CODE = r"\"[^\"\n]+\"|'[^'\n]+'|-?\d+(?:\.\d+)?|[A-Za-z]{1,3}|[A-Z0-9_]{1,10}"
# The meaning runs to the end and is trimmed by hand: a lazy group before trailing blanks
# backtracked quadratically on a long blank run inside the meaning.
_ITEM = re.compile(rf"\s*(?:[•*-]\s*)?({_CODE})\s*[:=：]\s*(\S.*)")
_SPLIT = re.compile(rf"[;\n]|,\s+(?=(?:{_CODE})\s*[:=：])")


def code_list(text: str) -> list[tuple[str, str]] | None:
    """The (value, meaning) pairs of a code list such as ``0: N; 1: Y`` or ``"W": white``:
    the first run of two or more consecutive items; None when there is none (a unit, a
    format note or prose stays in the column's definition only)."""
    run: list[tuple[str, str]] = []
    for item in _SPLIT.split(text):
        if not item.strip():
            continue
        m = _ITEM.match(item)
        if m is None:
            if len(run) >= 2:
                break
            run = []
            continue
        value = m.group(1)
        if value[0] in "\"'":
            value = value[1:-1]
        run.append((value, m.group(2).rstrip()))
    return run if len(run) >= 2 else None
