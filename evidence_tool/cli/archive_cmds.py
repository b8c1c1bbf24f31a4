"""``tht workspace evidence init|status|consolidate|show|diff|log|verify|restore|review|recover``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evidence_tool.cli import narrow
from evidence_tool.cli.options import flag, force_option, warnings_as_errors_option
from evidence_tool.cli.output import Report
from evidence_tool.cli.reporters.text_lines import cut_lines, id_list
from evidence_tool.cli.workspace_cmds import actor_option, register, wait_option, workspace_evidence
from evidence_tool.unit.vocabulary import KINDS, PURPOSES  # a leaf: no parser at start-up

if TYPE_CHECKING:
    from evidence_tool.archive.local import ConsolidateResult
    from evidence_tool.gitflow.records import GitState
    from evidence_tool.session import Session


def _consolidate_report(result: ConsolidateResult) -> Report:
    from evidence_tool.errors import Diagnostic

    data = result.to_json()
    changes = result.changes
    lines = [f"{result.status.value}: revision {result.revision}"]
    for cls in ("added", "modified", "reformatted", "renamed", "restored", "deleted"):
        ids = changes.get(cls)
        if isinstance(ids, list) and ids:
            lines.append(f"  {cls} ({len(ids)}): {id_list([str(i) for i in ids])}")
    lines.append(f"  unchanged: {changes.get('unchanged', 0)}")
    if result.catalog:
        from evidence_tool.catalog.step import summary_line

        lines.append(summary_line(result.catalog))
    if result.dry_run:
        lines.append("dry run: nothing written; run it without --dry-run to record this revision")
    errors = []
    if result.activation_error:
        errors.append(
            Diagnostic(
                "E401",
                f"activation failed: {result.activation_error}; "
                f"revision {result.revision} stays pending",
            )
        )
    return Report(result=data, errors=errors, warnings=list(result.warnings), text=lines)


def init_body(s: Session, actor: str | None) -> Report:
    """Record the current files as the baseline snapshot (no activation)."""
    return _consolidate_report(s.initialize(s.actor(actor)))


def consolidate_body(
    s: Session, actor: str | None, dry_run: bool, no_activate: bool, warnings_as_errors: bool
) -> Report:
    """Validate, derive provenance, snapshot and activate the curated files."""
    activate = None if no_activate else s.activation()
    result = s.consolidate(s.actor(actor), activate, dry_run, warnings_as_errors=warnings_as_errors)
    return _consolidate_report(result)


def status_body(s: Session) -> Report:
    """Revisions, unconsolidated edits, open review items and interrupted operations."""
    from evidence_tool.catalog.review import item_text

    rep = s.status_report()
    st = rep.archive
    pointers = (("baseline", st.state.baseline), ("active", st.state.active))
    lines = [f"{k}: {v or '-'}" for k, v in (*pointers, ("pending", st.state.pending))]
    pending = st.state.pending
    if pending:
        # A consolidate cut between its record and its activation (Ctrl-C), --no-activate
        # or a failed activation: the edits are recorded, only not served yet.
        lines.append(
            f"pending revision {pending[:12]}… is recorded, not active yet: "
            "'tht workspace evidence consolidate' activates it (unless the installation's "
            "activation backend is 'none')"
        )
    lines.append(st.serving.line())
    edits = st.unconsolidated
    # The edits are counted against the active revision: with one pending they may be
    # recorded already, so "unconsolidated" would say they were lost.
    differ = "not active" if pending else "unconsolidated"
    for cls in ("added", "modified", "deleted", "renamed", "reformatted", "invalid"):
        if edits.get(cls):
            lines.append(f"{differ} {cls} ({len(edits[cls])}): {id_list(edits[cls])}")
    if st.journal:
        lines.append(f"interrupted operations: {len(st.journal)} (see 'recover')")
    lines += cut_lines([f"review items on {u}: {len(i)}" for u, i in st.review_items.items()])
    edited = set(rep.catalog.edited_since)
    catalog_items = [
        f"catalog review item on {uid}{' (edited since the catalog check)' if uid in edited else ''}"
        f": {item_text(i)}"
        for uid, found_items in rep.catalog.review_items.items()
        for i in found_items
    ]
    lines += cut_lines(catalog_items)
    index = rep.search_index
    if index.model:
        lines.append(f"search index: vectors of {index.model}, ranked by {index.path}")
    lines += _git_lines(rep.git)
    warnings = [*rep.warnings, *st.id_changes, *rep.git.warnings]
    return Report(result=rep.to_json(), text=lines, warnings=warnings)


def _git_lines(git: GitState) -> list[str]:
    if not git.available:
        return [f"git: {git.note}"]
    where = f"branch {git.branch}" if git.branch else "detached HEAD"
    lines = [f"git: {where} at {(git.head or 'no commit')[:12]} in {git.repository}"]
    for key, files in (("staged", git.staged), ("modified", git.modified)):
        each = [f"  {key}: {f.path} ({f.change})" for f in files]
        lines += cut_lines(each, indent=f"  {key}: ")
    untracked = [f"  untracked: {f.path}" for f in git.untracked]
    lines += cut_lines(untracked, indent="  untracked: ")
    if git.clean:
        lines.append("  evidence tree clean")
    return lines


def show_body(s: Session, unit_id: str) -> Report:
    """A unit with its provenance, lineage and review items."""
    from evidence_tool.cli.reporters.text_lines import show_lines

    data = s.show(unit_id).to_json()
    return Report(result=data, text=show_lines(data))


def diff_body(s: Session, revisions: tuple[str, ...]) -> Report:
    """Added / modified / deleted ids between revisions, or against the working files."""
    if len(revisions) > 2:
        from evidence_tool.errors import UsageError

        raise UsageError("diff takes at most two revisions")
    found = s.diff(revisions)
    lines = [f"from {found.source} to {found.target}"]
    for cls in ("added", "modified", "deleted", "renamed", "reformatted", "invalid"):
        lines += [
            f"  {cls[0].upper()} {uid}" if cls != "invalid" else f"  invalid {uid}"
            for uid in found.ids(cls)
        ]
    return Report(result=found.to_json(), text=lines)


def log_body(s: Session) -> Report:
    """The archive's event log."""
    events = s.events()
    lines = [
        f"{e.get('at')} {e.get('event')} by {e.get('actor')}"
        + (f" {e['revision']}" if e.get("revision") else "")
        + (f" {e['id']}" if e.get("id") else "")
        for e in events
    ]
    return Report(result={"events": [*events]}, text=lines)


def verify_body(s: Session, strict: bool, index: bool, warnings_as_errors: bool) -> Report:
    """Integrity checks of objects, snapshots, pointers and managed files (--strict for CI;
    --index: the activation backend holds exactly the active snapshot)."""
    from evidence_tool.cli.reporters.text_lines import verify_lines

    found = s.verify_report(strict=strict, index=index, warnings_as_errors=warnings_as_errors)
    result, problems = found.to_json(), found.errors
    return Report(
        result=result,
        errors=problems,
        warnings=found.warnings,
        text=verify_lines(result, len(problems)),
    )


def git_commands_body(s: Session) -> Report:
    """POSIX-shell commands to review, stage, commit and push the complete evidence tree."""
    commands = s.git_commands()
    data = commands.to_json()
    del data["warnings"]  # shown as the envelope's warnings
    # No path in the comment: a newline in a folder name would end it and run the rest.
    header = "# status, diff, add, commit and push the complete evidence tree"
    # A newline inside a quoted path is printed as the line break it is (the shell reads
    # the quoted word on): the reporter escapes control characters within each line.
    lines = [line for command in commands.commands for line in command.split("\n")]
    return Report(result=data, warnings=list(commands.warnings), text=[header, *lines])


def restore_body(s: Session, unit_id: str, actor: str | None) -> Report:
    """Bring a deleted unit back from its last snapshot, then consolidate."""
    result = s.restore(unit_id, s.actor(actor))
    return _consolidate_report(result)


def resolve_body(s: Session, unit_id: str, note: str, actor: str | None) -> Report:
    """Close a unit's open review items with a note."""
    done = s.resolve_review(unit_id, note, s.actor(actor))
    return Report(
        result=done.to_json(),
        text=[
            f"resolved {len(done.resolved)} review item(s) on {unit_id}; "
            "consolidate to record it in a snapshot"
        ],
    )


def recover_body(s: Session, abandon: bool, actor: str | None) -> Report:
    """Show interrupted operations (journal entries); --abandon drops them."""
    entries = s.recover(abandon, s.actor(actor))
    lines = [
        f"{e.name}: {e.entry.op} by {e.entry.actor} at {e.entry.at}; conflicts: "
        f"{', '.join(e.conflicts) or 'none'}"
        for e in entries
    ] or ["no journal entries"]
    return Report(
        result={"entries": [e.to_json() for e in entries], "abandoned": abandon}, text=lines
    )


def search_body(
    s: Session,
    query: str,
    kind: str | None,
    purpose: str | None,
    language: str | None,
    table: str | None,
    limit: int,
    mode: str | None,
) -> Report:
    """Search the active units (BM25 over title, fields and applies_to, dense vectors,
    or both fused); the first line says which mode ran and what its scores mean."""
    from evidence_tool.activation.sqlite_index import Filters
    from evidence_tool.cli.reporters.text_lines import search_lines

    found = s.search(query, Filters(kind, purpose, language, table), limit, mode)
    data = found.to_json()
    for h in narrow.objs(data["hits"]):
        del h["record"]
    data.pop("warnings", None)  # W702 (sqlite-vec installed, not loading): the envelope's warnings
    return Report(result=data, text=search_lines(found), warnings=list(found.warnings))


def eval_body(
    s: Session,
    questions: str,
    k: int,
    modes: tuple[str, ...],
    compare: str | None,
    min_recall: float | None = None,
    min_mrr: float | None = None,
    fail_on_drop: bool = False,
    adopt: bool = False,
) -> Report:
    """Measure retrieval on a question set: recall@k, MRR and nDCG per mode; expected ids
    the archive deleted are reported as retired, never as misses.  With --adopt, the best
    mode and fusion on these questions are written into workspace.yaml first; with a
    threshold or --fail-on-drop it is a gate: exit 1 below it (E171) or worse than REV
    (E172)."""
    from evidence_tool.cli.reporters.text_lines import eval_lines

    data, found = s.evaluate_gate(
        questions,
        k,
        modes,
        compare,
        adopt=adopt,
        min_recall=min_recall,
        min_mrr=min_mrr,
        fail_on_drop=fail_on_drop,
    )
    return Report(result=data, errors=found, text=eval_lines(data))


def export_body(s: Session, fmt: str, output: str | None, force: bool, as_json: bool) -> Report:
    """Export the active corpus (typed units with provenance) as JSON lines."""
    found = s.export(output, force=force, fmt=fmt)
    if found.output is not None:
        return Report(
            result=found.to_json(),
            text=[f"exported {found.units} unit(s) to {found.output}"],
        )
    if as_json:
        return Report(result=found.to_json())
    return Report(text=found.lines())  # the text reporter prints one JSON object a line


register("init", init_body, actor_option, wait_option)
register(
    "consolidate",
    consolidate_body,
    actor_option,
    wait_option,
    flag("--dry-run", help="Report what would happen; write nothing."),
    flag("--no-activate", help="Snapshot only; leave the candidate pending."),
    warnings_as_errors_option,
)
register("status", status_body)
register("show", show_body, click.argument("unit_id"))
register("diff", diff_body, click.argument("revisions", nargs=-1))
register("log", log_body)
register(
    "verify",
    verify_body,
    flag(
        "--strict",
        help="For CI: also fail on invalid files, unconsolidated edits and "
        "hand-edited managed files (Git).",
    ),
    flag("--index", help="Also compare the activation backend with the active snapshot (E702)."),
    warnings_as_errors_option,
)
register("git-commands", git_commands_body)
register("restore", restore_body, click.argument("unit_id"), actor_option, wait_option)
register(
    "recover",
    recover_body,
    actor_option,
    wait_option,
    flag("--abandon", help="Drop the journal entries shown."),
)
register(
    "search",
    search_body,
    click.argument("query"),
    click.option("--kind", type=click.Choice(KINDS), help="Only units of this kind."),
    click.option("--purpose", type=click.Choice(PURPOSES), help="Only units with this purpose."),
    click.option("--language", help="BCP 47 tag; 'it' also matches 'it-CH'."),
    click.option("--table", help="schema.table"),
    click.option(
        "--limit",
        type=click.IntRange(1, 1000),
        default=10,
        show_default=True,
        help="At most this many hits.",
    ),
    click.option(
        "--mode",
        type=click.Choice(["bm25", "dense", "hybrid"]),
        help="Ranking: words, embeddings, or both fused [default: hybrid when the "
        "index has vectors, else bm25].",
    ),
)
register(
    "eval",
    eval_body,
    click.argument("questions", type=click.Path(dir_okay=False)),
    click.option(
        "--k", type=click.IntRange(1, 100), default=5, show_default=True, help="Hits scored."
    ),
    click.option(
        "--mode",
        "modes",
        multiple=True,
        type=click.Choice(["bm25", "dense", "hybrid"]),
        help="A search mode (repeat; default: every mode, unavailable ones said so).",
    ),
    click.option("--compare", metavar="REV", help="Also run on this revision's index."),
    click.option(
        "--min-recall",
        type=click.FloatRange(0, 1),
        metavar="R",
        help="Gate: exit 1 (E171) when a mode's recall@k is below R.",
    ),
    click.option(
        "--min-mrr",
        type=click.FloatRange(0, 1),
        metavar="M",
        help="Gate: exit 1 (E171) when a mode's MRR is below M.",
    ),
    flag(
        "--fail-on-drop", help="Gate: exit 1 (E172) when any metric is worse than on --compare REV."
    ),
    flag(
        "--adopt",
        help="Choose the search mode and fusion that do best on these questions and write "
        "them into workspace.yaml (retrieval), for review in Git.",
    ),
)
register(
    "export",
    export_body,
    click.option(
        "--format",
        "fmt",
        type=click.Choice(["jsonl"]),
        default="jsonl",
        show_default=True,
        help="Output format: one JSON object per unit.",
    ),
    click.option(
        "--output",
        type=click.Path(dir_okay=False),
        help="File inside the workspace (default: print JSON lines).",
    ),
    force_option,
    takes_json=True,
)


@workspace_evidence.group("review")
def review() -> None:
    """Review items that block consolidation."""


register(
    "review resolve",
    resolve_body,
    click.argument("unit_id"),
    click.option("--note", required=True, help="Why the items are resolved."),
    actor_option,
    wait_option,
    group=review,
)
