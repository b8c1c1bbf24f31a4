"""BIRD column descriptions as units: a glossary unit per described column, an enum per
code list (the files themselves are read by ``bird_descriptions``)."""

from __future__ import annotations

from evidence_tool.importers import bird_descriptions as descriptions
from evidence_tool.importers.base import SourceFile, Span, element_id
from evidence_tool.importers.bird_units import Collected, clean, quote
from evidence_tool.unit.model import EnumPayload, EnumValue, GlossaryPayload


def import_table(state: Collected, db: str, table: str, f: SourceFile) -> None:
    shown = state.source.shown(f.path)
    known = state.columns.setdefault(db, set())
    for row in descriptions.rows(f, shown):
        span = row.span
        name = row.cells["original_column_name"].strip()
        if not name or not name.isprintable():
            state.result.review(
                "invalid-element",
                f"{shown}:{row.line}: the row names no column (original_column_name "
                f"{name!r}); it is not imported",
            )
            continue
        known.add(name.lower())
        if row.cells["data_format"].strip():
            state.absent[(f"BIRD {db}.{table} column descriptions", "data_format")] += 1
        import_column(state, db, table, name, row, span)


def import_column(
    state: Collected, db: str, table: str, name: str, row: descriptions.Row, span: Span
) -> None:
    cells = row.cells
    expanded = " ".join(cells["column_name"].split())
    described = clean(cells["column_description"])
    values = clean(cells["value_description"])
    table_ref = f"{quote(state.schema(db))}.{quote(table)}"
    column_ref = f"{table_ref}.{quote(name)}"
    uid = element_id("bird", db, table, name)
    _, values_label, enum_title = state.labels
    head = described or expanded
    if head or values:
        text = f"{head}\n\n{values_label} {values}" if head and values else head or values
        synonyms = (expanded,) if expanded and expanded.lower() != name.lower() else ()
        state.add(
            uid,
            f"{table}.{name}",
            GlossaryPayload(definition=text, synonyms=synonyms),
            span,
            purposes=("schema_linking", "disambiguation"),
            tables=(table_ref,),
            columns=(column_ref,),
        )
    codes = descriptions.code_list(values) if values else None
    if codes is None:
        return
    if len({v for v, _ in codes}) != len(codes):
        state.result.review(
            "invalid-element",
            f"{state.source.shown(span.path)}:{row.line}: the value list of {table}.{name} "
            "names one value twice; no enum is imported for it",
            f"{uid}.values",
        )
        return
    state.add(
        element_id("bird", db, table, name, "values"),
        enum_title.format(column=f"{table}.{name}"),
        EnumPayload(column=column_ref, values=tuple(EnumValue(v, m) for v, m in codes)),
        span,
        purposes=("sql_generation", "schema_linking"),
        tables=(table_ref,),
        columns=(column_ref,),
    )
