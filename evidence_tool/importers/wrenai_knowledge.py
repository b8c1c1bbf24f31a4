"""The ``knowledge/`` base of a WrenAI v5 project: NL->SQL pairs, rules, glossary terms.

- ``knowledge/sql/<slug>.md``: frontmatter ``nl`` and ``sql`` -> example (the
  notes below the frontmatter, when any, open the interpretation);
- ``knowledge/rules|caveats|metrics/*.md`` and the legacy ``instructions.md``
  -> domain, one unit per top-level section;
- ``knowledge/glossary/<term>.md`` -> glossary, one term per file.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from evidence_tool.importers import yaml_spans
from evidence_tool.importers.base import (
    ImportResult,
    Span,
    element_id,
    malformed,
)
from evidence_tool.importers.spans import (
    after_bom,
    decode,
    frontmatter,
    opens_frontmatter,
    sections,
    trimmed,
)
from evidence_tool.importers.unit_parts import Units, fenced_sql
from evidence_tool.unit import DomainPayload, ExamplePayload, GlossaryPayload

PREFIX = "wrenai"
# Frontmatter keys WrenAI writes that no unit field holds.
_PAIR_EXTRAS = ("source", "datasource", "tags", "created_at")


def _span(raw: bytes, path: str, start: int, end: int) -> Span:
    return Span(path, start, end, raw[start:end].decode("utf-8"))


def sql_pair(raw: bytes, path: str, shown: str, units: Units, result: ImportResult) -> None:
    """One example from a ``knowledge/sql`` file; a file without ``nl`` and ``sql`` (which
    WrenAI skips too) is listed as not imported."""
    decode(raw, shown)  # E504 for a file that is not text
    front = frontmatter(raw)
    if front is None and opens_frontmatter(raw):
        raise malformed(shown, 1, "the frontmatter opened here is never closed by '---'")
    if front is None:
        result.omit(f"file {shown}", "the whole file (no frontmatter with nl and sql)")
        return
    doc = yaml_spans.load(raw, shown, path, front[0], front[1])
    root = doc.root
    if root is not None and root.kind != yaml_spans.MAPPING:
        raise malformed(shown, root.line, "the frontmatter is not a mapping")
    nl, sql = (root.get("nl"), root.get("sql")) if root else (None, None)
    for key, node in (("nl", nl), ("sql", sql)):
        if node is not None and (node.kind != yaml_spans.SCALAR or node.value is None):
            raise malformed(shown, node.line, f"'{key}' is not a text")
    if nl is None or sql is None or not str(nl.value).strip() or not str(sql.value).strip():
        result.omit(f"file {shown}", "the whole file (the frontmatter lacks nl or sql)")
        return
    spans = [nl.span(), sql.span()]
    notes_at = trimmed(raw, front[2], len(raw))
    parts = [fenced_sql(str(sql.value))]
    if notes_at[0] < notes_at[1]:
        spans.append(_span(raw, path, *notes_at))
        parts.insert(0, spans[-1].text)
    assert root is not None
    for key in _PAIR_EXTRAS:
        if key in root.value:
            where = f"wrenai sql pair {shown}"
            result.omit(where, key, root.value[key].span())
    stem = PurePosixPath(path).stem
    units.add(
        element_id(PREFIX, "sql", stem),
        str(nl.value).strip(),
        ExamplePayload(str(nl.value).strip(), "\n\n".join(parts)),
        spans,
        where=shown,
    )


def rule_sections(
    raw: bytes, path: str, shown: str, group: str, units: Units, result: ImportResult
) -> None:
    """One domain unit per top-level section of a rules-like file."""
    decode(raw, shown)  # E504 for a file that is not text
    file_title, found = sections(raw)
    stem = PurePosixPath(path).stem
    used: dict[str, int] = {}
    for section in found:
        body = trimmed(raw, section.body_start, section.end)
        if body[0] >= body[1]:
            result.skip("empty section")
            continue
        name = section.title or file_title or stem.replace("-", " ").replace("_", " ")
        key = section.title or "intro"
        used[key] = used.get(key, 0) + 1
        suffix = (f"{key}-{used[key]}",) if used[key] > 1 else (key,)
        text = raw[body[0] : body[1]].decode("utf-8")
        units.add(
            element_id(PREFIX, group, stem, *suffix),
            name,
            DomainPayload(text),
            [_span(raw, path, *trimmed(raw, section.start, section.end))],
            where=f"{shown} section {name!r}",
        )


def glossary_term(raw: bytes, path: str, shown: str, units: Units, result: ImportResult) -> None:
    """A ``knowledge/glossary/<term>.md`` file: the term is its opening heading (else the
    file name), the definition the rest."""
    decode(raw, shown)  # E504 for a file that is not text
    stem = PurePosixPath(path).stem
    file_title, found = sections(raw)
    term = file_title or stem.replace("-", " ").replace("_", " ")
    start = found[0].start if found else len(raw)
    if len(found) == 1 and found[0].title is not None and file_title is None:
        term, start = found[0].title, found[0].body_start
    body = trimmed(raw, start, len(raw))
    if body[0] >= body[1]:
        result.omit(f"file {shown}", "the term (no definition)")
        return
    units.add(
        element_id(PREFIX, "glossary", stem),
        term,
        GlossaryPayload(raw[body[0] : body[1]].decode("utf-8")),
        [_span(raw, path, *trimmed(raw, after_bom(raw), len(raw)))],
        where=shown,
    )
