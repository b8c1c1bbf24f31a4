"""restore: bring a deleted unit back from its last snapshot, then consolidate (SPEC.md 5.3)."""

from __future__ import annotations

from evidence_tool.archive import staged as staging
from evidence_tool.archive.change import change_files
from evidence_tool.archive.consolidate import consolidate_locked
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.port import Activation, as_port
from evidence_tool.archive.results import ConsolidateResult
from evidence_tool.errors import UnknownNameError
from evidence_tool.unit.suggest import did_you_mean


def restore(
    core: ArchiveCore, unit_id: str, actor: str, activate: Activation | None
) -> ConsolidateResult:
    """Bring a deleted unit back from its last snapshot, then consolidate."""
    port = as_port(activate)
    with core.locked("restore"):
        newest = core.newest_snapshot()
        record = newest.deletion(unit_id) if newest else None
        if record is None and _restore_pending(core, unit_id):
            # An interrupted run of this restore got as far as the pending candidate:
            # only its activation is left to do.
            return consolidate_locked(core, actor, port)
        if record is None:
            deleted = newest.view.deleted_ids() if newest else set()
            raise UnknownNameError(
                f"'{unit_id}' has no deletion record{did_you_mean(unit_id, deleted)}; "
                "'tht workspace evidence log' lists deletions"
            )
        holder = next((f for f in core.scan().files if f.unit_id == unit_id), None)
        last = core.snapshot(record.last_revision).entry(unit_id)
        assert last is not None
        restoring = staging.restoration(core.staged(), unit_id)
        if holder is not None and restoring and holder.file_hash == last.file_hash:
            # An interrupted run of this restore wrote the file and staged it (journal
            # replay): only its consolidation is left to do.
            return consolidate_locked(core, actor, port)
        staged = staging.restoration_change(
            unit_id, last.content_hash, last.provenance, record.last_revision
        )
        # A file that holds the id again (the way back from an id changed by mistake,
        # W122, or from E121) is the unit restored: writing the old file next to it would
        # only end in a duplicate id (E120).  Otherwise the last content comes back.
        write: list[tuple[str, bytes | None]] = []
        if holder is None:
            write.append((last.path, core.objects.get(last.file_hash)))
        change_files(
            core,
            "restore",
            actor,
            write,
            {last.path: None} if write else {},
            staged,
            event="restored",
            id=unit_id,
            path=holder.rel if holder is not None else last.path,
        )
        return consolidate_locked(core, actor, port)


def _restore_pending(core: ArchiveCore, unit_id: str) -> bool:
    """An earlier run of this restore got past its journal: the newest snapshot holds the
    unit again, and it is the one the last removal or restore event named restored."""
    newest = core.newest_snapshot()
    if newest is None or newest.entry(unit_id) is None:
        return False
    state = core.state()
    if state.pending is not None and state.active is not None:
        active = core.snapshot(state.active)
        if active.deletion(unit_id) is not None:
            return True  # the candidate restoring it waits for activation
    events = [
        e["event"]
        for e in core.events()
        if e.get("id") == unit_id and e["event"] in ("removed", "restored")
    ]
    return bool(events) and events[-1] == "restored"
