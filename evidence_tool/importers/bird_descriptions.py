"""BIRD ``database_description/<table>.csv`` files, read row by row with exact byte spans.

Each file describes one table: ``original_column_name, column_name,
column_description, data_format, value_description``.  The files in the wild
have a UTF-8 BOM on some, quoted cells over several lines, trailing spaces in
names and, for a few, Windows-1252 bytes: those are refused (E504 naming the
line), since a span must be the file's exact UTF-8 bytes; re-encoding the file
(``iconv -f cp1252 -t utf-8``) is the fix.  The toolkit's ``spans.csv_rows``
reads one record at a time, so a 200,000-row file streams.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from evidence_tool.importers.base import SourceFile, Span, malformed
from evidence_tool.importers.spans import csv_rows

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
    span: Span  # the record's exact text, line end excluded
    line: int  # 1-based first line


def rows(f: SourceFile, shown: str) -> Iterator[Row]:
    """The described columns of one file (the header checked, blank rows skipped)."""
    header: list[str] | None = None
    for cells, span, line in csv_rows(f, shown):
        if header is None:
            header = _header(cells, shown, line)
        elif any(c.strip() for c in cells):
            if any(c.strip() for c in cells[len(header) :]):
                why = f"the row has {len(cells)} cells, the header {len(header)}"
                raise malformed(shown, line, why)
            values = dict.fromkeys(HEADER, "")
            values.update(zip(header, cells, strict=False))
            yield Row(values, span, line)
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
