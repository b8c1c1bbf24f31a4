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

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from evidence_tool.importers.base import (
    Imported,
    ImportInput,
    ImportResult,
    SourceFile,
    Span,
    element_id,
    make_unit,
    malformed,
)
from evidence_tool.importers.spans import csv_rows, json_array_items, json_lines_items
from evidence_tool.importers.unit_parts import PURPOSES, fenced_sql, title
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.unit.model import DomainPayload, ExamplePayload, Payload

COLUMNS = ("id", "question", "content", "training_data_type")
INDEX_COLUMNS = ("", "Unnamed: 0", "index")  # pandas' index, written by to_csv()
SUFFIXES = (".json", ".jsonl", ".csv")
RECORDS = "the array of records df.to_json(orient='records') writes"


@dataclass
class Row:
    values: JsonObject
    span: Span
    line: int  # first line of the row in its file


def _title(text: str) -> str:
    """The first line that is not blank once its heading marks are dropped."""
    lines = (title(ln, headings=True) for ln in text.splitlines())
    return next((ln for ln in lines if ln), "")


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


class VannaImporter:
    format = "vanna"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {}  # none yet

    def read(self, source: ImportInput) -> ImportResult:
        result = ImportResult()
        named: set[str] = set()
        for f in source.files:
            shown = source.shown(f.path)
            suffix = f.path.lower().rsplit(".", 1)[-1] if "." in f.path else ""
            if f".{suffix}" not in SUFFIXES:
                result.omit(f"file {shown}", "the whole file (not .json, .jsonl or .csv)")
                continue
            for row in _rows(f, shown, suffix):
                _import_row(row, shown, source.language, result, named)
        return result


def _rows(f: SourceFile, shown: str, suffix: str) -> Iterator[Row]:
    if suffix == "csv":
        yield from _csv_rows(f, shown)
        return
    items = json_lines_items(f, shown) if suffix == "jsonl" else json_array_items(f, shown, RECORDS)
    for value, span, line in items:
        yield Row(_check_row(value, shown, line), span, line)


def _extra_keys(
    values: JsonObject, shown: str, span: Span, result: ImportResult, named: set[str]
) -> None:
    """Columns beyond Vanna's four: named once per file as not imported (``named``: the
    ones already listed, so 100,000 rows cost no search of the list)."""
    for key in values:
        if key not in COLUMNS and key not in INDEX_COLUMNS:
            element = f"column {key} of {shown}"
            if element not in named:
                named.add(element)
                result.omit(element, "its values", span)


def _check_row(values: Any, shown: str, line: int) -> JsonObject:
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


def _csv_rows(f: SourceFile, shown: str) -> Iterator[Row]:
    header: list[str] | None = None
    for cells, span, line in csv_rows(f, shown):
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
        yield Row(dict(zip(header, cells, strict=True)), span, line)
    if header is None:
        raise malformed(shown, None, "the file is empty; a Vanna export starts with its header")


def _import_row(row: Row, shown: str, language: str, result: ImportResult, named: set[str]) -> None:
    values = row.values
    _extra_keys(values, shown, row.span, result, named)
    kind = _text(values.get("training_data_type")).lower()
    vanna_id = _text(values.get("id"))
    where = f"{shown}:{row.line}"
    if not vanna_id:
        raise malformed(shown, row.line, "the row has an empty id")
    uid = element_id("vanna", vanna_id)
    content = _text(values.get("content"))
    if kind == "ddl":
        result.skip("ddl")
        return
    if kind not in ("sql", "documentation"):
        result.omit(f"row {vanna_id} ({where})", f"training_data_type {kind!r}", row.span)
        return
    if not content:
        result.review("invalid-element", f"{where}: the {kind} row has no content", uid)
        return
    payload: Payload = DomainPayload(rule=content)
    heading = content
    if kind == "sql":
        heading = _text(values.get("question"))
        if not heading:
            result.review("invalid-element", f"{where}: the sql row has no question", uid)
            return
        payload = ExamplePayload(question=heading, interpretation=fenced_sql(content))
    purposes = PURPOSES[payload.kind]
    unit = make_unit(
        id=uid, language=language, title=_title(heading), payload=payload, purposes=purposes
    )
    result.units.append(Imported(unit, [row.span]))
