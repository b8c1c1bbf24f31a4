"""Vanna training data, as ``vn.get_training_data()`` returns it and pandas saves it.

The DataFrame has the columns ``id, question, content, training_data_type``;
a user keeps it with ``df.to_json(orient="records")`` (one JSON array),
``df.to_json(orient="records", lines=True)`` (JSON Lines) or ``df.to_csv()``
(with or without the unnamed index column).  ``sql`` rows become examples,
``documentation`` rows domain rules; ``ddl`` rows are schema, not evidence:
skipped and counted.  Each unit's span is its row's exact bytes (the JSON
object, or the CSV record with its multi-line cells).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from evidence_tool.sources.importers.base import (
    Imported,
    ImportInput,
    ImportResult,
    NotImported,
    SourceFile,
    Span,
    element_id,
    make_unit,
    malformed,
)
from evidence_tool.unit.model import DomainPayload, ExamplePayload

COLUMNS = ("id", "question", "content", "training_data_type")
INDEX_COLUMNS = ("", "Unnamed: 0", "index")  # pandas' index, written by to_csv()
SUFFIXES = (".json", ".jsonl", ".csv")
_TITLE_MAX = 120
_BOM = b"\xef\xbb\xbf"


@dataclass
class Row:
    values: dict[str, Any]
    span: Span
    line: int  # first line of the row in its file


def _title(text: str) -> str:
    """One line from the first nonblank line: markdown heading marks and runs of spaces
    dropped, cut at 120 characters."""
    first = next((ln for ln in text.splitlines() if ln.strip()), text)
    line = " ".join(first.strip().lstrip("#").split())
    return line if len(line) <= _TITLE_MAX else line[: _TITLE_MAX - 1].rstrip() + "…"


def _fenced(sql: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", sql)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}sql\n{sql.strip()}\n{fence}"


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


class VannaImporter:
    format = "vanna"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {}  # none yet

    def read(self, source: ImportInput) -> ImportResult:
        result = ImportResult()
        for f in source.files:
            shown = source.shown(f.path)
            suffix = f.path.lower().rsplit(".", 1)[-1] if "." in f.path else ""
            if f".{suffix}" not in SUFFIXES:
                result.not_imported.append(
                    NotImported(f"file {shown}", "the whole file (not .json, .jsonl or .csv)")
                )
                continue
            rows = _rows(f, shown, suffix, source.max_bytes, result)
            for row in rows:
                _import_row(row, shown, source.language, result)
        return result


def _rows(
    f: SourceFile, shown: str, suffix: str, max_bytes: int, result: ImportResult
) -> Iterator[Row]:
    if suffix == "csv":
        return _csv_rows(f, shown, result)
    raw = f.read_bytes(max_bytes)
    if suffix == "jsonl":
        return _jsonl_rows(raw, f.path, shown, result)
    return _json_rows(raw, f.path, shown, result)


def _decode(raw: bytes, shown: str, line: int = 1) -> str:
    """UTF-8 text; E504 naming the line of the first bad byte (``line``: the first line
    of ``raw`` in its file)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line + raw.count(b"\n", 0, exc.start)
        raise malformed(
            shown, at, f"is not UTF-8 text (a binary byte at offset {exc.start})"
        ) from None


def _extra_keys(values: dict[str, Any], shown: str, span: Span, result: ImportResult) -> None:
    """Columns beyond Vanna's four: named once per file as not imported."""
    for key in values:
        if key not in COLUMNS and key not in INDEX_COLUMNS:
            element = f"column {key} of {shown}"
            if not any(n.element == element for n in result.not_imported):
                result.not_imported.append(NotImported(element, "its values", span))


def _check_row(values: Any, shown: str, line: int) -> dict[str, Any]:
    if not isinstance(values, dict):
        raise malformed(
            shown,
            line,
            f"a row is a JSON {type(values).__name__}, not an object with the columns "
            f"{', '.join(COLUMNS)} (save the DataFrame with to_json(orient='records'))",
        )
    missing = [c for c in ("id", "training_data_type") if c not in values]
    if missing:
        raise malformed(
            shown,
            line,
            f"the row lacks {', '.join(missing)}; a Vanna export has the columns "
            f"{', '.join(COLUMNS)}",
        )
    return values


def _json_rows(raw: bytes, path: str, shown: str, result: ImportResult) -> Iterator[Row]:
    """The objects of one JSON array, each with its exact byte span."""
    offset = len(_BOM) if raw.startswith(_BOM) else 0
    text = _decode(raw[offset:], shown)
    ascii_only = len(text) == len(raw) - offset
    decoder = json.JSONDecoder()

    def skip(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    def byte_at(i: int, cache: list[int]) -> int:
        """Byte offset of character ``i`` (counted forward from the last one asked)."""
        if ascii_only:
            return offset + i
        char, byte = cache
        byte += len(text[char:i].encode("utf-8"))
        cache[:] = [i, byte]
        return offset + byte

    i = skip(0)
    if not text[i:].startswith("["):
        what = "a JSON object" if text[i:].startswith("{") else "not a JSON array"
        raise malformed(
            shown,
            text.count("\n", 0, i) + 1,
            f"the file is {what}; a Vanna export is the array of records "
            "df.to_json(orient='records') writes",
        )
    i = skip(i + 1)
    cache = [0, 0]
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
        values = _check_row(value, shown, line)
        start, stop = byte_at(i, cache), byte_at(end, cache)
        yield Row(values, Span(path, start, stop, text[i:end]), line)
        i = skip(end)
        if i < len(text) and text[i] == ",":
            i = skip(i + 1)
        elif i >= len(text) or text[i] != "]":
            raise malformed(shown, text.count("\n", 0, i) + 1, "invalid JSON: expected ',' or ']'")
    if i >= len(text):
        raise malformed(shown, text.count("\n") + 1, "invalid JSON: the array is not closed")
    if skip(i + 1) != len(text):
        raise malformed(
            shown, text.count("\n", 0, i) + 1, "invalid JSON: text after the closing ']'"
        )


def _jsonl_rows(raw: bytes, path: str, shown: str, result: ImportResult) -> Iterator[Row]:
    """One object per nonblank line (to_json(orient='records', lines=True))."""
    start = len(_BOM) if raw.startswith(_BOM) else 0
    for n, chunk in enumerate(raw[start:].split(b"\n"), start=1):
        end = start + len(chunk)
        body = chunk.rstrip(b"\r")
        if body.strip():
            text = _decode(body, shown, n)
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise malformed(shown, n, f"invalid JSON: {exc.msg}") from None
            except RecursionError:
                raise malformed(shown, n, "the JSON is nested too deeply") from None
            values = _check_row(value, shown, n)
            yield Row(values, Span(path, start, start + len(body), text), n)
        start = end + 1


def _records(f: SourceFile, shown: str) -> Iterator[tuple[int, int, bytes]]:
    """(first line, byte offset, bytes) of each CSV record, line endings excluded; a
    quoted cell may span lines (quotes are balanced at a record's end).  Streams."""
    with f.open() as handle:
        pos = 0
        first = handle.read(len(_BOM))
        if first != _BOM:
            handle.seek(0)
        else:
            pos = len(_BOM)
        start_line, start, quotes = 0, pos, 0
        parts: list[bytes] = []
        for line, raw_line in enumerate(handle, start=1):
            if not parts:
                start_line, start = line, pos
            parts.append(raw_line)
            quotes += raw_line.count(b'"')
            pos += len(raw_line)
            if quotes % 2 == 0:
                record = b"".join(parts)
                body = record.rstrip(b"\n").rstrip(b"\r") if record.endswith(b"\n") else record
                parts, quotes = [], 0
                if body.strip():
                    yield start_line, start, body
        if parts:
            raise malformed(shown, start_line, "a quoted cell is not closed before the end")


def _csv_rows(f: SourceFile, shown: str, result: ImportResult) -> Iterator[Row]:
    header: list[str] | None = None
    for line, start, body in _records(f, shown):
        text = _decode(body, shown, line)
        try:
            cells = next(csv.reader([text], strict=True))
        except csv.Error as exc:
            raise malformed(shown, line, f"invalid CSV: {exc}") from None
        if header is None:
            header = [c.strip() for c in cells]
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise malformed(
                    shown,
                    line,
                    f"the header lacks {', '.join(missing)}; a Vanna export has the columns "
                    f"{', '.join(COLUMNS)} (save it with df.to_csv())",
                )
            continue
        if len(cells) != len(header):
            raise malformed(
                shown, line, f"the row has {len(cells)} cells, the header {len(header)}"
            )
        yield Row(
            dict(zip(header, cells, strict=True)),
            Span(f.path, start, start + len(body), text),
            line,
        )
    if header is None:
        raise malformed(shown, None, "the file is empty; a Vanna export starts with its header")


def _import_row(row: Row, shown: str, language: str, result: ImportResult) -> None:
    values = row.values
    _extra_keys(values, shown, row.span, result)
    kind = _text(values.get("training_data_type")).lower()
    vanna_id = _text(values.get("id"))
    where = f"{shown}:{row.line}"
    if not vanna_id:
        raise malformed(shown, row.line, "the row has an empty id")
    uid = element_id("vanna", vanna_id)
    content = _text(values.get("content"))
    if kind == "ddl":
        result.skipped["ddl"] = result.skipped.get("ddl", 0) + 1
        return
    if kind not in ("sql", "documentation"):
        result.not_imported.append(
            NotImported(f"row {vanna_id} ({where})", f"training_data_type {kind!r}", row.span)
        )
        return
    if not content:
        result.review("invalid-element", f"{where}: the {kind} row has no content", uid)
        return
    if kind == "sql":
        question = _text(values.get("question"))
        if not question:
            result.review("invalid-element", f"{where}: the sql row has no question", uid)
            return
        unit = make_unit(
            id=uid,
            language=language,
            title=_title(question),
            payload=ExamplePayload(question=question, interpretation=_fenced(content)),
            purposes=("sql_generation",),
        )
    else:
        unit = make_unit(
            id=uid,
            language=language,
            title=_title(content),
            payload=DomainPayload(rule=content),
            purposes=("disambiguation", "sql_generation"),
        )
    result.units.append(Imported(unit, [row.span]))
