"""Publishing (SPEC.md 15): the active snapshot written out in the native form of the
engine that consumes it -- a Cortex Analyst semantic model, a WrenAI knowledge tree,
Vanna training items, a dbt docs/properties patch, or the JSON lines of ``export``.

One module per format, each a pure function from the active snapshot's typed units to
files (``model.Published``); ``publish`` puts them at ``--output`` under the output-path
rule (``write``), or with ``dry_run`` only reports what would change.  Every entry
carries its unit id and the snapshot revision; every unit a format cannot hold is named
in ``not_exported`` with the reason.
"""

from __future__ import annotations

import os

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import NotReadyError, UsageError
from evidence_tool.publish.model import Entry, NotExported, Published, Snapshot
from evidence_tool.publish.write import Changes, PublishResult, jsonl_entries, put

__all__ = [
    "FORMATS",
    "Changes",
    "Entry",
    "NotExported",
    "PublishResult",
    "Published",
    "Snapshot",
    "publish",
    "render",
]

FORMATS = ("cortex", "wrenai", "vanna", "dbt", "jsonl")


def _active(archive: LocalEvidenceArchive) -> str:
    state = archive.state()
    if not state.initialized or state.active is None:
        raise NotReadyError(
            "the workspace has no active revision to publish: run "
            "'tht workspace evidence consolidate' (after 'init') first"
        )
    return state.active


def load_active(archive: LocalEvidenceArchive, revision: str) -> Snapshot:
    """The snapshot ``revision``'s units, sorted by id, each with its curator (a manual
    unit) or the actor a migration recorded (a document unit; a refined one has no person
    behind it) and its declaration time: what every format but jsonl publishes from (never
    the working files: an unconsolidated edit is not published)."""
    from evidence_tool.workspace.descriptor import load_workspace_descriptor

    entries = []
    for entry, unit in archive.snapshot(revision).units():
        prov = entry.provenance_json
        who = _text(prov.get("curator")) or _text(prov.get("actor"))
        entries.append(Entry(unit, who, _text(prov.get("declared_at"))))
    entries.sort(key=lambda e: e.unit.id)
    workspace = load_workspace_descriptor(archive.layout.root).id
    return Snapshot(workspace, revision, tuple(entries))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def render(archive: LocalEvidenceArchive, fmt: str, *, database: str | None = None) -> Published:
    """The files of ``fmt`` for the active snapshot; nothing is written.  Every unit is
    either exported or named in ``not_exported`` (a publisher that forgot one is caught
    here, not shipped)."""
    revision = _active(archive)
    if fmt == "jsonl":  # the bytes ``export --format jsonl`` writes, in the snapshot's order
        from evidence_tool.activation.cache import jsonl_bytes

        records = list(archive.snapshot(revision).records())
        return Published({"": jsonl_bytes(records)}, [str(r["id"]) for r in records])
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; the formats are: {', '.join(FORMATS)}")
    snap = load_active(archive, revision)
    from evidence_tool.publish import cortex, dbt, vanna, wrenai

    if fmt == "cortex":
        out = cortex.publish(snap, database)
    else:
        out = {"wrenai": wrenai.publish, "vanna": vanna.publish, "dbt": dbt.publish}[fmt](snap)
    placed = set(out.exported) | {n.unit_id for n in out.not_exported}
    for entry in snap.entries:
        if entry.unit.id not in placed:
            out.skip(entry.unit.id, f"the {fmt} format found no place for it")
    out.exported = sorted(set(out.exported))
    out.not_exported.sort(key=lambda n: (n.unit_id, n.reason))
    return out


def publish(
    root: str | os.PathLike[str],
    fmt: str,
    output: str,
    *,
    dry_run: bool = False,
    force: bool = False,
    database: str | None = None,
) -> PublishResult:
    """Publish the active snapshot as ``fmt`` to ``output`` (a file, or a folder for the
    tree formats wrenai and dbt), or with ``dry_run`` report the changes only."""
    archive = LocalEvidenceArchive(root)
    revision = _active(archive)
    out = render(archive, fmt, database=database)
    keys = {"jsonl": jsonl_entries("id"), "vanna": jsonl_entries("id")}.get(fmt)
    shown, files, entries = put(
        archive.layout,
        out,
        output,
        force=force,
        dry_run=dry_run,
        revision=revision,
        entry_keys=keys,
    )
    return PublishResult(
        fmt, revision, shown, dry_run, len(out.exported), files, entries, tuple(out.not_exported)
    )
