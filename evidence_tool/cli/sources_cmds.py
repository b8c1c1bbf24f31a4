"""``tht workspace evidence refresh|decide|sources list|show|add|retract`` (SPEC 6, 10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evidence_tool.cli import narrow
from evidence_tool.cli.options import flag
from evidence_tool.cli.output import Report, StderrProgress
from evidence_tool.cli.workspace_cmds import actor_option, register, wait_option, workspace_evidence

if TYPE_CHECKING:
    from evidence_tool.session import Session
    from evidence_tool.sources.decide import DecidePlan
    from evidence_tool.sources.records import Comparison


def _short(h: str | None) -> str:
    return (h or "-")[:12]


def refresh_body(s: Session, dry_run: bool, source_id: str | None, actor: str | None) -> Report:
    """Read every source, refine the changed ones, record comparisons (nothing on failure)."""
    progress = StderrProgress.for_terminal()
    try:
        result = s.refresh(s.actor(actor), source_id, dry_run, progress)
    finally:
        if progress:
            progress.close()
    data = result.to_json()
    # A source that failed alone (a missing import input) is an error of the run: the
    # others were recorded, and the exit code says something needs attention.
    errors = [d for exc in result.failed for d in exc.diagnostics]
    from evidence_tool.cli.reporters.text_lines import refresh_lines

    def commands(sid: str, revision: str) -> dict[str, str]:
        # Imported only when a comparison is listed: the report package costs an
        # unchanged refresh a fifth of its time.
        from evidence_tool.report.collect import decide_commands

        return decide_commands(s.installation.path, str(s.root), sid, revision)

    lines = refresh_lines(data, None if dry_run else commands)
    return Report(result=data, errors=errors, text=lines)


def decide_body(
    s: Session,
    source_id: str,
    revision: str | None,
    decision: str | None,
    allow_mass_retire: bool,
    retry: bool,
    actor: str | None,
    exclude: tuple[str, ...],
    overwrite_manual: bool,
    dry_run: bool,
) -> Report:
    """Keep the local units or adopt the proposal of one source, then consolidate and activate."""
    from evidence_tool.errors import Diagnostic, UsageError

    if retry:
        data = s.decide_retry(source_id, s.actor(actor))
    else:
        if not revision or not decision:
            raise UsageError("decide needs --revision and --decision (or --retry)")
        if dry_run:
            return _plan_report(
                s.decide_plan(
                    source_id, revision, decision, s.actor(actor), allow_mass_retire, exclude
                )
            )
        data = s.decide(
            source_id,
            revision,
            decision,
            s.actor(actor),
            allow_mass_retire,
            exclude,
            overwrite_manual,
        )
    cons = data.consolidation
    lines = [f"initialized the archive: baseline {data.initialized}"] if data.initialized else []
    lines += [
        f"{data.decision.value} saved for source {_short(data.source_id)} "
        f"(comparison {_short(data.revision)})",
        f"{cons.status.value}: revision {cons.revision}",
    ]
    if not data.retry:  # a retry writes no unit file (its --json has no such lists)
        lines += [f"  wrote {p}" for p in data.written]
        lines += [f"  removed {p}" for p in data.removed]
        lines += [f"  excluded {uid} (left as it was)" for uid in data.excluded]
        lines += [f"  overwrote {uid} (was fixed by hand)" for uid in data.overwrote_manual]
    errors = []
    if cons.activation_error:
        errors.append(
            Diagnostic(
                "E401",
                f"activation failed: {cons.activation_error}; the decision is saved: run "
                f"'tht workspace evidence decide --source-id {data.source_id} --retry'",
            )
        )
    return Report(result=data.to_json(), errors=errors, text=lines)


def _plan_report(plan: DecidePlan) -> Report:
    """``decide --dry-run``: the plan, nothing written."""
    from evidence_tool.cli.reporters.text_lines import change_counts

    data = plan.to_json()
    changes = plan.changes
    lines = [
        f"dry run: {plan.decision.value} of source {_short(plan.source_id)} "
        f"(comparison {_short(plan.revision)}) would write nothing yet",
        f"  {change_counts(changes.counts())}",
    ]
    for what, ids in (("add", changes.added), ("change", changes.changed)):
        lines += [f"  {what:<9}{uid}" for uid in ids if uid not in plan.excluded]
    lines += [f"  retire   {uid}" for uid in changes.retired if uid not in plan.excluded]
    lines += [f"  exclude  {uid} (left as it is)" for uid in plan.excluded]
    lines += [
        f"  manual   {uid}: fixed by hand; needs --overwrite-manual or --exclude {uid}"
        for uid in plan.overwrites_manual
    ]
    lines.append("dry run: nothing written")
    return Report(result=data, text=lines)


@workspace_evidence.group("sources")
def sources_group() -> None:
    """The source registry: identities, status, citing units, retraction."""


def list_body(s: Session) -> Report:
    """Every known source with its status, hashes, pending comparison and citing units."""
    rows = s.sources_list()
    lines = [
        f"{_short(r.source_id)} {r.status.value:<9} {r.record.kind.value:<4} {r.record.locator}"
        + (f"  {r.record.title!r}" if r.record.title else "")
        + (f"  {ident.type}:{ident.value}" if (ident := r.record.identifier) else "")
        + (f"  pending {_short(comp.revision)}" if (comp := r.record.comparison) else "")
        + f"  units {len(r.citing_units)}"
        for r in rows
    ] or ["no sources recorded yet: run 'tht workspace evidence refresh'"]
    return Report(result={"sources": [r.to_json() for r in rows]}, text=lines)


def show_body(s: Session, source_id: str) -> Report:
    """One source: identity, hashes, pending comparison, citing units, retraction warning."""
    from evidence_tool.cli.reporters.text_lines import scalar
    from evidence_tool.errors import EvidenceWarning

    detail = s.sources_show(source_id)
    r = detail.to_json()
    lines = [f"{k}: {scalar(r[k])}" for k in ("source_id", "locator", "kind", "status", "title")]
    ident = detail.summary.record.identifier
    lines.append(f"identifier: {ident.type}:{ident.value}" if ident else "identifier: -")
    lines += [f"{k}: {r[k] or '-'}" for k in ("adopted_hash", "acknowledged_hash")]
    lines.append(f"suppressed: {scalar(r['suppressed'])}")
    lines += [f"cites: {c.id} (as {c.role})" for c in detail.summary.citing_units]
    if detail.comparison is not None:
        lines += _comparison_lines(detail.comparison)
    # Printed on stderr as "warning: ..." (and in --json "warnings"), never dropped.
    warnings = [EvidenceWarning(w, code="source-retracted") for w in narrow.strs(r["warnings"])]
    return Report(result=r, warnings=warnings, text=lines)


def _comparison_lines(comp: Comparison) -> list[str]:
    """The pending comparison (what 'sources show --json' prints), each proposed id marked
    with what replace would do to it."""
    from evidence_tool.cli.reporters.text_lines import change_counts

    changes = comp.changes()
    lines = [f"pending comparison {comp.revision}", f"  {change_counts(changes.counts())}"]
    how = {uid: k for k in ("added", "changed", "identical") for uid in getattr(changes, k)}
    manual = set(changes.manual)
    lines += [f"  current  {c.id}" for c in comp.current]
    lines += [
        f"  proposed {p.id} -> {p.path} ({how.get(p.id, '?')}"
        + (", manual)" if p.id in manual else ")")
        for p in comp.proposed
    ]
    lines += [f"  retire   {uid}" + (" (manual)" if uid in manual else "") for uid in comp.retire]
    lines += [f"  dropped  {d.id} ({d.reason.value})" for d in comp.dropped]
    lines += [f"  review   {i.unit_id or 'document'}: {i.message}" for i in comp.review_items]
    extras = comp.imported
    for n in extras.not_imported if extras else ():
        at = f" ({n.at})" if n.at else ""
        if n.reason:
            lines.append(f"  not imported ({n.reason}) {n.unit_id}{at}")
            lines.append(f"    to adopt it: {n.fix}")
        else:
            lines.append(f"  not imported {n.what} of {n.element}{at}")
    lines += [f"  skipped  {n} {what}" for what, n in (extras.skipped if extras else {}).items()]
    return lines


def add_body(
    s: Session, fmt: str, path: str, language: str | None, option: tuple[str, ...]
) -> Report:
    """Add an import source (a file or folder in a source format) to workspace.yaml."""
    added = s.sources_add(fmt, path, language, list(option))
    data = added.to_json()
    lines = [
        f"added {added.key}: {added.locator} (source {_short(added.source_id)})",
        "run 'tht workspace evidence refresh' to compare it with the curated units",
    ]
    if added.rewritten:
        lines.append(
            f"note: {data['descriptor']} was written in canonical form; its comments and "
            "layout are not kept (the old text is in Git)"
        )
    return Report(result=data, text=lines)


def retract_body(s: Session, source_id: str, note: str, actor: str | None) -> Report:
    """Mark a source retracted; every live unit citing it gets a review item."""
    data = s.sources_retract(source_id, note, s.actor(actor))
    lines = [f"retracted {data.source_id}: {data.retraction.note}"]
    lines += [f"  review item raised on {uid}" for uid in data.review_items_raised]
    lines.append("consolidation is blocked until each unit is edited, retired or resolved")
    return Report(result=data.to_json(), text=lines)


source_id_option = click.option(
    "--source-id", help="Refresh only this source (its id or a unique prefix)."
)

register(
    "refresh",
    refresh_body,
    flag("--dry-run", help="Fetch and compare; record nothing."),
    source_id_option,
    actor_option,
    wait_option,
)
register(
    "decide",
    decide_body,
    click.option("--source-id", required=True, help="The source (its id or a unique prefix)."),
    click.option("--revision", help="The comparison revision shown by refresh."),
    click.option(
        "--decision",
        type=click.Choice(["keep", "replace"]),
        help="keep: local units stay (lineage kept); replace: adopt the proposal.",
    ),
    flag(
        "--allow-mass-retire", help="Allow replace to retire more than half of the source's units."
    ),
    flag("--retry", help="Re-activate the saved decision; reads no source."),
    actor_option,
    wait_option,
    click.option(
        "--exclude",
        multiple=True,
        metavar="ID",
        help="replace: leave this unit as it is (not written, not retired); repeatable.",
    ),
    flag(
        "--overwrite-manual",
        help="replace: overwrite units fixed by hand (provenance manual) with the source's text.",
    ),
    flag("--dry-run", help="Print what the decision would change; write nothing."),
)
register("sources list", list_body, group=sources_group)
register("sources show", show_body, click.argument("source_id"), group=sources_group)
register(
    "sources add",
    add_body,
    click.option(
        "--format",
        "fmt",
        required=True,
        help="The source format: dbt, bird, wrenai, vanna or cortex (docs/importers.md).",
    ),
    click.argument("path"),
    click.option("--language", help="The units' language (default: the workspace's)."),
    click.option(
        "--option",
        multiple=True,
        help="A format option KEY=VALUE (repeatable); docs/importers.md lists each format's.",
    ),
    group=sources_group,
)
register(
    "sources retract",
    retract_body,
    click.argument("source_id"),
    click.option("--note", required=True, help="Why the source is retracted."),
    actor_option,
    wait_option,
    group=sources_group,
)
