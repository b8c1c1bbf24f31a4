"""The page itself: head (CSP, style), overview, file errors, changes, sources, Git."""

from __future__ import annotations

from html import escape

from evidence_tool.errors import CODES
from evidence_tool.report.assets import CSS, SCRIPT, content_security_policy
from evidence_tool.report.collect import CHANGE_CLASSES, ReportData
from evidence_tool.report.comparisons import comparisons_section
from evidence_tool.report.textdiff import word_diff_html
from evidence_tool.report.units import meta_list, source_name, unit_link, units_section
from evidence_tool.sources.registry import SourceSummary

LISTED = 200  # ids listed per change class; the status filter shows every unit


def _code(value: object) -> str:
    return f"<code>{escape(str(value))}</code>" if value else '<span class="muted">—</span>'


def overview(data: ReportData) -> str:
    state = data.state
    rows = "".join(
        f"<tr><th>{k}</th><td>{_code(v)}</td></tr>"
        for k, v in (
            ("pending", state.pending),
            ("active", state.active),
            ("baseline", state.baseline),
        )
    )
    notes = []
    if data.not_served is not None:
        notes.append(
            f'<p class="problem">Retrieval serves nothing yet: {escape(data.not_served)}.</p>'
        )
    if not data.initialized:
        notes.append(
            '<p class="note">The archive is not initialized: this page shows the working files. '
            "<code>tht workspace evidence init</code> records them as the baseline.</p>"
        )
    if state.pending:
        notes.append(
            '<p class="warning">A pending revision waits for activation: '
            "<code>tht workspace evidence consolidate</code> retries it.</p>"
        )
    if data.interrupted:
        notes.append(
            f'<p class="problem">{data.interrupted} interrupted operation(s): '
            "see <code>tht workspace evidence recover</code>.</p>"
        )
    return (
        '<section class="part" id="revisions"><h2>Revisions</h2>'
        f"<table>{rows}</table>{''.join(notes)}</section>"
    )


def errors_section(data: ReportData) -> str:
    if not data.errors:
        body = '<p class="note">Every curated file is valid.</p>'
    else:
        rows = "".join(
            f"<tr><td><code>{escape(d.path or '')}</code></td>"
            f"<td>{d.line or ''}{':' + str(d.column) if d.line and d.column else ''}</td>"
            f"<td><code>{escape(d.code)}</code></td><td>{escape(d.message)}</td>"
            f"<td>{escape(CODES[d.code].fix if d.code in CODES else '')}</td></tr>"
            for d in data.errors
        )
        body = (
            f'<p class="problem">{len(data.errors)} problem(s): consolidation refuses the files '
            "until they are corrected.</p><table><thead><tr><th>file</th><th>line</th><th>code</th>"
            f"<th>message</th><th>fix</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    warnings = "".join(
        f"<li><code>{escape(w.path or '')}</code>{':' + str(w.line) if w.line else ''} "
        f"{escape(w.code + ': ' if w.code else '')}{escape(w.message)}</li>"
        for w in data.warnings
    )
    if warnings:
        body += f'<div class="warning">Warnings:<ul>{warnings}</ul></div>'
    return f'<section class="part" id="errors"><h2>File errors</h2>{body}</section>'


def _ids(ids: list[str]) -> str:
    shown = ", ".join(unit_link(i) for i in ids[:LISTED])
    more = len(ids) - LISTED
    return shown + (
        f' <span class="muted">… and {more} more (filter units by status)</span>'
        if more > 0
        else ""
    )


def changes_section(data: ReportData) -> str:
    head = '<section class="part" id="changes"><h2>Changes against the active snapshot</h2>'
    if data.base is None:
        return head + '<p class="note">No snapshot yet: every working file is new.</p></section>'
    changes = data.changes
    parts = [f"<p>Working files against the {data.base_label} revision {_code(data.base)}.</p>"]
    if not any(changes.get(k) for k in (*CHANGE_CLASSES, "invalid")):
        parts.append('<p class="note">No unconsolidated edits.</p>')
    for cls, what in (
        ("added", "Added"),
        ("renamed", "Moved or renamed"),
        ("reformatted", "Reformatted (same content)"),
    ):
        if changes.get(cls):
            parts.append(f"<h3>{what} ({len(changes[cls])})</h3><p>{_ids(changes[cls])}</p>")
    if changes.get("invalid"):
        files = ", ".join(_code(p) for p in changes["invalid"])
        parts.append(
            f'<h3>Invalid files ({len(changes["invalid"])})</h3><p>{files}: see <a href="#errors">file errors</a>.</p>'
        )
    texts = {c.unit.id: c.text for c in data.units if c.status != "deleted"}
    modified = changes.get("modified", [])
    if modified:
        parts.append(f"<h3>Modified ({len(modified)})</h3>")
        for uid in modified[:LISTED]:
            diff = word_diff_html(data.old_texts.get(uid, ""), texts.get(uid, ""))
            parts.append(f'<h4>{unit_link(uid)}</h4><pre class="diff">{diff}</pre>')
        if len(modified) > LISTED:
            parts.append(f"<p>{_ids(modified[LISTED:])}</p>")
    deleted = changes.get("deleted", [])
    if deleted:
        parts.append(f"<h3>Deleted ({len(deleted)})</h3>")
        for uid in deleted[:LISTED]:
            text = escape(data.old_texts.get(uid, ""))
            parts.append(
                f"<details><summary>{unit_link(uid)}: last content</summary><pre><del>{text}</del></pre></details>"
            )
    return head + "".join(parts) + "</section>"


def _source_row(data: ReportData, s: SourceSummary) -> str:
    r = s.record
    sid = escape(r.source_id)
    title = escape(r.title or "")
    if r.identifier:
        title += "<br>" + escape(f"{r.identifier.type}: {r.identifier.value}")
    pending = r.comparison.revision if r.comparison else None
    pending_html = f'<a href="#comparison-{sid}">{escape(pending[:12])}…</a>' if pending else ""
    status = escape(s.status.value) + (" · suppressed" if s.suppressed else "")
    hashes = f"{_code((r.adopted_hash or '')[:12])} / {_code((r.acknowledged_hash or '')[:12])}"
    citing = ", ".join(f"{unit_link(c.id)} ({escape(c.role)})" for c in s.citing_units)
    cells = (
        source_name(data, r.source_id),
        escape(r.kind.value),
        status,
        title,
        hashes,
        pending_html,
        citing,
    )
    return f'<tr id="source-{sid}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def sources_section(data: ReportData) -> str:
    if not data.sources:
        body = '<p class="note">No sources recorded yet: run <code>tht workspace evidence refresh</code>.</p>'
        return f'<section class="part" id="sources"><h2>Source registry</h2>{body}</section>'
    rows = "".join(_source_row(data, s) for s in data.sources)
    found = (s.warning() for s in data.sources)
    warnings = "".join(f'<p class="warning">{escape(w)}</p>' for w in found if w)
    table = (
        "<table><thead><tr><th>source</th><th>kind</th><th>status</th><th>title, identifier</th>"
        "<th>adopted / acknowledged</th><th>pending comparison</th><th>citing units</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )
    return f'<section class="part" id="sources"><h2>Source registry</h2>{warnings}{table}</section>'


def git_section(data: ReportData) -> str:
    git = data.git
    head = '<section class="part" id="git"><h2>Commit the complete evidence tree</h2>'
    if not git.available:
        return head + f'<p class="note">Outside Git: {escape(git.note)}</p></section>'
    warnings = "".join(f'<p class="warning">{escape(w)}</p>' for w in git.warnings)
    steps = "".join(
        f'<tr><th>{escape(step)}</th><td><pre class="command">{escape(cmd)}</pre></td></tr>'
        for step, cmd in zip(git.steps, git.commands, strict=True)
    )
    return (
        head + warnings + "<p>Review and commit managed manifests, snapshots and deletion records "
        "together with the edited Markdown, never the Markdown alone.</p>"
        f"<table>{steps}</table></section>"
    )


def catalog_section(data: ReportData) -> str:
    """The last catalog run (check, catalog diff, or a command's catalog step): when, the
    catalog, and the drift since the active snapshot's catalog, each change with the
    units it touches.  Read from the run's record: the page never connects anywhere."""
    head = '<section class="part" id="catalog"><h2>Warehouse catalog</h2>'
    rec = data.catalog
    if rec is None:
        return head + (
            '<p class="note">No catalog check yet: run <code>tht workspace evidence check</code> '
            "or <code>tht workspace evidence catalog diff</code> (see catalog.md).</p></section>"
        )
    facts = [
        ("checked at", escape(rec.checked_at)),
        ("catalog", f"{escape(rec.kind)}, {escape(rec.relations)} relation(s)"),
        ("fingerprint", _code(rec.fingerprint)),
        ("compared with", _code(rec.base) if rec.base else "—"),
    ]
    out = head + meta_list(facts)
    if rec.note:
        out += f'<p class="note">{escape(rec.note)}</p>'
    # The statement names the snapshot it is about; a newer active snapshot (a decide or
    # consolidate without the catalog step) was never checked, and the page says so.
    active = data.state.active
    since = f"snapshot {_code(rec.base[:12])}" if rec.base else "the snapshot it was compared with"
    unchecked = (
        f'<p class="note">The active snapshot {_code(active[:12])} was never checked against '
        "the warehouse: run <code>tht workspace evidence consolidate</code> with the catalog "
        "step, or <code>tht workspace evidence catalog diff</code>.</p>"
        if active and rec.base and active != rec.base
        else ""
    )
    if rec.drift is not None:
        rows = "".join(
            f"<tr><td>{escape(c.change.replace('_', ' '))}</td>"
            f"<td><code>{escape(c.relation)}</code></td>"
            f"<td>{_code(c.column) if c.column else '—'}</td>"
            f"<td>{escape(' → '.join(v for v in (c.old, c.new) if v))}"
            f"{' renamed to ' + _code(c.renamed_to) if c.renamed_to else ''}</td>"
            f"<td>{', '.join(unit_link(u) for u in c.units) or '—'}</td></tr>"
            for c in rec.drift
        )
        out += (
            f"<h3>Drift since {since}</h3><table><thead><tr><th>change</th>"
            "<th>relation</th><th>column</th><th>type</th><th>units touched</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            if rows
            else f'<p class="note">No drift since {since}: the warehouse is as that snapshot '
            "was checked.</p>"
        )
    return out + unchecked + "</section>"


def render_page(data: ReportData, nonce: str) -> str:
    """The whole self-contained HTML document."""
    title = f"Evidence review — {data.workspace_name}"
    nav = "".join(
        f'<a href="#{k}">{v}</a>'
        for k, v in (
            ("revisions", "Revisions"),
            ("errors", f"File errors ({len(data.errors)})"),
            ("changes", "Changes"),
            ("comparisons", f"Comparisons ({len(data.comparisons)})"),
            ("sources", "Sources"),
            ("git", "Git"),
            ("catalog", "Catalog"),
            ("units", f"Units ({len(data.units)})"),
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(nonce)}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f'<header class="page"><h1>{escape(title)}</h1><p class="muted">workspace '
        f"<code>{escape(data.workspace_id)}</code> at <code>{escape(data.root)}</code>, "
        f"generated {escape(data.generated_at)}. A static page: edit the files named here, then "
        f'run the commands it shows.</p><nav class="sections">{nav}</nav></header><main>'
        + overview(data)
        + errors_section(data)
        + changes_section(data)
        + comparisons_section(data)
        + sources_section(data)
        + git_section(data)
        + catalog_section(data)
        + units_section(data)
        + f'</main><script nonce="{nonce}">{SCRIPT}</script></body></html>\n'
    )
