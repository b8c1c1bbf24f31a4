"""Unit cards and the filter bar of the review page.

Every value from a unit is escaped; the Markdown body goes through
``render_markdown_html`` (no raw HTML, no unsafe link, no image).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape

from evidence_tool.archive.records import Declaration, DeclarationKind, ManualDeclaration
from evidence_tool.errors import Diagnostic
from evidence_tool.report.collect import CHANGE_CLASSES, ReportData, ReviewRow, UnitView
from evidence_tool.unit import KINDS, PURPOSES
from evidence_tool.unit.html import render_markdown_html
from evidence_tool.unit.parse import split_frontmatter


def markdown_block(text: str, *, frontmatter: bool = True) -> str:
    """A unit file as HTML: its frontmatter verbatim (unless the caller shows the metadata
    itself), its body rendered."""
    split = split_frontmatter(text)
    if isinstance(split, Diagnostic):
        return f"<pre>{escape(text)}</pre>"
    front, body, _ = split
    head = f'<pre class="frontmatter">---\n{escape(front)}---</pre>' if frontmatter else ""
    return f'{head}<div class="md">{render_markdown_html(body, heading_offset=2)}</div>'


def unit_anchor(uid: str) -> str:
    return f"unit-{uid}"


def unit_link(uid: str) -> str:
    return f'<a href="#{escape(unit_anchor(uid))}"><code>{escape(uid)}</code></a>'


def meta_list(rows: Iterable[tuple[str, str]]) -> str:
    """Facts as a definition list: each name, then its (already escaped) HTML value."""
    return '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _provenance_kind(card: UnitView) -> str:
    if card.provenance is None:
        return "none"
    manual = isinstance(card.provenance, ManualDeclaration)
    return (DeclarationKind.MANUAL if manual else DeclarationKind.DOCUMENT).value


def _status_tokens(card: UnitView) -> str:
    tokens: list[str] = [card.status]
    if card.review_items:
        tokens.append("review")
    if card.has_errors:
        tokens.append("error")
    return " ".join(tokens)


def _list(values: Iterable[str]) -> str:
    return ", ".join(f"<code>{escape(v)}</code>" for v in values) or '<span class="muted">—</span>'


def source_name(data: ReportData, sid: str | None) -> str:
    """A source id as a link to its registry row, with its locator when it is known."""
    if not sid:
        return '<span class="muted">—</span>'
    known = data.sources_by_id.get(sid)
    short = f'<code class="muted">{escape(sid[:12])}…</code>'
    if known is None:  # not in the registry (yet): nothing to link to
        return short
    return f'<a href="#source-{escape(sid)}">{escape(known.record.locator)}</a> {short}'


def _declaration(data: ReportData, decl: Declaration) -> str:
    if isinstance(decl, ManualDeclaration):
        rows = [
            ("kind", DeclarationKind.MANUAL.value),
            ("curator", escape(decl.curator)),
            ("declared", escape(decl.declared_at)),
        ]
    else:
        quotes = "".join(f"<blockquote><pre>{escape(x)}</pre></blockquote>" for x in decl.excerpts)
        rows = [
            ("kind", DeclarationKind.DOCUMENT.value),
            ("source", source_name(data, decl.source_id)),
            ("source path", f"<code>{escape(decl.source_path)}</code>"),
            ("source hash", f"<code>{escape(decl.source_hash)}</code>"),
            ("excerpts", quotes or '<span class="muted">—</span>'),
        ]
    return meta_list(rows)


def provenance_summary(data: ReportData, provenance: Declaration | None) -> str:
    """One line: who declared the unit, or which document it comes from, and its lineage."""
    if provenance is None:
        return '<span class="muted">none yet (new)</span>'
    if not isinstance(provenance, ManualDeclaration):
        return f"document: {source_name(data, provenance.source_id)}"
    text = f"manual by {escape(provenance.curator)}, {escape(provenance.declared_at)}"
    if provenance.original:
        text += f"; original lineage: {source_name(data, provenance.original.source_id)}"
    return text


def provenance_html(data: ReportData, provenance: Declaration | None) -> str:
    if provenance is None:
        return '<p class="muted">No declaration yet: the next consolidation records this unit as manual.</p>'
    out = _declaration(data, provenance)
    original = provenance.original if isinstance(provenance, ManualDeclaration) else None
    if original:
        out += "<p><strong>Original lineage</strong> (not a claim that the source says the current wording):</p>"
        out += _declaration(data, original)
    return out


def review_items_html(items: Sequence[ReviewRow]) -> str:
    if not items:
        return ""
    rows = "".join(
        f"<tr><td><code>{escape(i.code)}</code></td><td>{escape(i.message)}</td>"
        f"<td>{escape(i.by)}</td><td>{escape(i.raised_at)}</td></tr>"
        for i in items
    )
    return (
        '<table class="review"><thead><tr><th>review item</th><th>message</th>'
        f"<th>unit / raised by</th><th>raised at</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def catalog_status_html(card: UnitView) -> str:
    """The unit's catalog status from the last check (clean / findings / not checked)."""
    cat = card.catalog
    status = str(cat.status)
    css = status.replace(" ", "-")
    codes = " ".join(f"<code>{escape(c)}</code>" for c in cat.codes)
    note = f' <span class="muted">({escape(cat.note)})</span>' if cat.note else ""
    return f'<span class="catalog-status {css}">{escape(status)}</span> {codes}{note}'.rstrip()


def unit_card(data: ReportData, card: UnitView) -> str:
    unit, meta = card.unit, card.unit.metadata
    applies = meta.applies_to
    tables = list(applies.tables) if applies else []
    attrs = {
        "id": unit_anchor(unit.id),
        "data-kind": unit.kind,
        "data-language": meta.language,
        "data-purposes": " ".join(meta.purposes),
        "data-tables": json.dumps(tables, ensure_ascii=False),
        "data-provenance": _provenance_kind(card),
        "data-status": _status_tokens(card),
    }
    attr_html = " ".join(f'{k}="{escape(v)}"' for k, v in attrs.items())
    badges = "".join(f'<span class="badge {t}">{t}</span>' for t in _status_tokens(card).split())
    warnings = "".join(f'<p class="warning">{escape(w)}</p>' for w in card.warnings)
    facts = [
        ("path", f"<code>{escape(card.path or '')}</code>"),
        ("kind", escape(unit.kind)),
        ("language", escape(meta.language)),
        ("purposes", _list(meta.purposes)),
        ("concepts", _list(applies.concepts if applies else ())),
        ("tables", _list(tables)),
        ("columns", _list(applies.columns if applies else ())),
        ("provenance", provenance_summary(data, card.provenance)),
        ("catalog", catalog_status_html(card)),
    ]
    return (
        f'<article class="unit" {attr_html}><header>{badges}<code>{escape(unit.id)}</code>'
        f"</header>{warnings}{review_items_html(card.review_items)}"
        f"{review_items_html(card.catalog.review_items)}"
        f'<div class="unit-grid"><div>{meta_list(facts)}'
        f"<details><summary>Provenance in full</summary>{provenance_html(data, card.provenance)}"
        f"</details></div>{markdown_block(card.text, frontmatter=False)}</div></article>"
    )


def _select(name: str, label: str, values: Iterable[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return (
        f'<label>{label}<select name="{name}" id="f-{name}">'
        f'<option value="">all</option>{options}</select></label>'
    )


def filters_html(data: ReportData) -> str:
    units = [c.unit for c in data.units]
    present = {u.kind for u in units}
    tables = sorted(
        {t for u in units if u.metadata.applies_to for t in u.metadata.applies_to.tables}
    )
    statuses = [s for s in ("unchanged", *CHANGE_CLASSES) if any(c.status == s for c in data.units)]
    statuses += [
        t for t in ("review", "error") if any(t in _status_tokens(c).split() for c in data.units)
    ]
    return (
        '<form class="filters" id="filters" role="search">'
        + _select("kind", "kind", [k for k in KINDS if k in present])
        + _select("language", "language", sorted({u.metadata.language for u in units}))
        + _select("purpose", "purpose", PURPOSES)
        + _select("table", "table", tables)
        + _select("provenance", "provenance", sorted({_provenance_kind(c) for c in data.units}))
        + _select("status", "status", statuses)
        + '<label>search<input type="search" name="q" id="f-q" placeholder="id, title, text…"></label>'
        + '<button type="reset">clear</button>'
        + f'<output id="shown">{len(units)} units</output></form>'
    )


def units_section(data: ReportData) -> str:
    cards = "".join(unit_card(data, c) for c in data.units)
    return (
        '<section class="part" id="units"><h2>Units</h2>'
        f'{filters_html(data)}<div id="unit-list">{cards}</div></section>'
    )
