"""Pending source comparisons: local vs proposed side by side, excerpts, decide commands."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import NamedTuple

from evidence_tool.report.collect import ComparisonView, ReportData, ReviewRow
from evidence_tool.report.textdiff import highlight_excerpts, word_diff_html
from evidence_tool.report.units import markdown_block, meta_list, review_items_html, unit_link
from evidence_tool.sources.records import ImportExtras, ProposedEntry


def _id_list(ids: Sequence[str], empty: str) -> str:
    if not ids:
        return f'<span class="muted">{empty}</span>'
    return ", ".join(unit_link(i) for i in ids)


class _Ids(NamedTuple):
    """A comparison's lists by id, built once: a proposal of thousands of units is
    rendered in linear time."""

    proposed: dict[str, ProposedEntry]  # the first one of an id wins
    current: set[str]
    retire: set[str]


def _change(uid: str, local: str | None, proposed: ProposedEntry | None, ids: _Ids) -> str:
    if proposed is None:
        return "retired" if uid in ids.retire else "unproposed"
    return "new" if local is None else "changed"


def _pair(view: ComparisonView, uid: str, ids: _Ids) -> str:
    proposed = ids.proposed.get(uid)
    local = view.local.get(uid)
    if local is not None and proposed is not None and local == proposed.markdown:
        # Nothing to compare: one collapsed copy keeps long comparisons readable.
        return (
            f'<h4><span class="badge identical">identical</span><code>{escape(uid)}</code></h4>'
            "<details><summary>The proposal equals the local file</summary>"
            f"{markdown_block(local)}</details>"
        )
    if local is not None:
        left = markdown_block(local)
    elif uid in ids.current:
        left = '<p class="problem">The local file of this unit is missing or invalid.</p>'
    else:
        left = '<p class="muted">Not in the workspace: replace would add it.</p>'
    if proposed is not None:
        right = markdown_block(proposed.markdown)
        right += f'<p class="muted">writes <code>{escape(proposed.path)}</code></p>'
    elif uid in ids.retire:
        right = '<p class="problem">Not proposed: replace would retire this unit.</p>'
    else:
        right = '<p class="muted">Not proposed.</p>'
    diff = ""
    if local is not None and proposed is not None:
        body = word_diff_html(local, proposed.markdown)
        diff = (
            "<details open><summary>Word diff, local → proposed</summary>"
            f'<pre class="diff">{body}</pre></details>'
        )
    change = _change(uid, local, proposed, ids)
    return (
        f'<h4><span class="badge {change}">{change}</span><code>{escape(uid)}</code></h4>'
        '<div class="side">'
        f'<div class="local"><h5>Local</h5>{left}</div>'
        f'<div class="proposed"><h5>Proposed</h5>{right}</div></div>{diff}'
    )


def _decide(view: ComparisonView) -> str:
    comparison = view.comparison
    notes = []
    if view.stale:
        notes.append(
            '<p class="problem">Stale: '
            + ", ".join(f"<code>{escape(p)}</code>" for p in view.stale)
            + " changed, or appeared naming one of its ids, since the refresh, so decide "
            "refuses this revision (E304). Run "
            "<code>tht workspace evidence refresh</code> again.</p>"
        )
    if comparison.review_items:
        notes.append(
            '<p class="warning">Replace is refused while the proposal has review items (E140): '
            "correct the draft and refresh, or keep the local units.</p>"
        )
    retire, total = len(comparison.retire), len(comparison.current)
    if retire >= 3 and 2 * retire > total:
        notes.append(
            f'<p class="warning">Replace would retire {retire} of {total} units: it needs '
            "<code>--allow-mass-retire</code> (E305) once you checked the source is complete.</p>"
        )
    return (
        "<h4>Decide</h4>"
        + "".join(notes)
        + "<p><strong>Keep local evidence</strong>: the local wording stays, as manual "
        "declarations that keep their documentary lineage; this source version is acknowledged.</p>"
        + f'<pre class="command" data-decision="keep">{escape(view.commands["keep"])}</pre>'
        + "<p><strong>Use proposed evidence</strong>: writes the proposal and retires the ids "
        "listed above; the source version and provenance change together.</p>"
        + f'<pre class="command" data-decision="replace">{escape(view.commands["replace"])}</pre>'
    )


def _source_text(view: ComparisonView) -> str:
    if view.source_text is None:
        return f'<p class="problem">The acquired text is unavailable: {escape(view.source_note or "")}</p>'
    excerpts = {p.id: list(p.excerpts) for p in view.comparison.proposed}
    marked, missing = highlight_excerpts(view.source_text, excerpts)
    lost = "".join(f"<li><pre>{escape(x)}</pre></li>" for x in missing)
    lost_html = (
        f'<div class="warning">Excerpts not found verbatim in the source:<ul>{lost}</ul></div>'
        if missing
        else ""
    )
    return (
        "<details open><summary>Source text, supporting excerpts highlighted</summary>"
        f'{lost_html}<pre class="source-text">{marked}</pre></details>'
    )


def _import_facts(extras: ImportExtras) -> list[tuple[str, str]]:
    items = "".join(
        f"<li>{escape(n.what)} of {escape(n.element)}"
        + (f" (<code>{escape(n.at)}</code>)" if n.at else "")
        + "</li>"
        for n in extras.not_imported
    )
    skipped = ", ".join(f"{n} {escape(what)}" for what, n in extras.skipped.items())
    return [
        ("not imported", f"<ul>{items}</ul>" if items else '<span class="muted">nothing</span>'),
        ("skipped", skipped or '<span class="muted">nothing</span>'),
    ]


def comparison_html(data: ReportData, view: ComparisonView) -> str:
    comparison, source, items = view.comparison, view.source, view.comparison.review_items
    sid = comparison.source_id
    dropped = "".join(
        f"<li><code>{escape(d.id)}</code>: {escape(d.reason.value)}</li>"
        for d in comparison.dropped
    )
    facts = [
        ("source id", f"<code>{escape(sid)}</code>"),
        ("title", escape(source.record.title or "—")),
        ("comparison revision", f'<code class="revision">{escape(comparison.revision)}</code>'),
        ("created", escape(str(comparison.created_at))),
        ("content hash", f"<code>{escape(comparison.content_hash)}</code>"),
        ("base hash", f"<code>{escape(comparison.base_hash or '—')}</code>"),
        ("replace would retire", _id_list(comparison.retire, "nothing")),
        (
            "suppressed",
            "yes: the source had a curated deletion, so ids that do not exist today are dropped"
            if source.suppressed
            else '<span class="muted">no</span>',
        ),
        (
            "dropped from the proposal",
            f"<ul>{dropped}</ul>" if dropped else '<span class="muted">nothing</span>',
        ),
    ]
    extras = comparison.imported
    if extras is not None:  # an import source: what no unit holds, what was skipped
        facts += _import_facts(extras)
    current = (c.id for c in comparison.current)
    ids = list(dict.fromkeys([*current, *(p.id for p in comparison.proposed)]))
    proposed = {p.id: p for p in reversed(comparison.proposed)}
    by_id = _Ids(proposed, {c.id for c in comparison.current}, set(comparison.retire))
    retracted = source.warning()
    warning = f'<p class="warning">{escape(retracted)}</p>' if retracted else ""
    return (
        f'<article class="comparison" id="comparison-{escape(sid)}" data-source-id="{escape(sid)}" '
        f'data-revision="{escape(comparison.revision)}"><h3>{escape(comparison.locator)}</h3>'
        + warning
        + meta_list(facts)
        + review_items_html([ReviewRow(i.code, i.message, i.unit_id or "") for i in items])
        + "".join(_pair(view, uid, by_id) for uid in ids)
        + _source_text(view)
        + _decide(view)
        + "</article>"
    )


def comparisons_section(data: ReportData) -> str:
    if not data.comparisons:
        body = '<p class="note">No pending comparison. <code>tht workspace evidence refresh</code> records one per changed source.</p>'
    else:
        body = "".join(comparison_html(data, v) for v in data.comparisons)
    return f'<section class="part" id="comparisons"><h2>Pending source comparisons</h2>{body}</section>'
