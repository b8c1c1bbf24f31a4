"""recover: show the journal's interrupted entries, abandon them on request (SPEC.md 5.4)."""

from __future__ import annotations

from evidence_tool.archive import eventlog
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.journal import Interrupted
from evidence_tool.archive.lock import ArchiveLock
from evidence_tool.jsonvalue import JsonValue


def recover(core: ArchiveCore, abandon: bool, actor: str) -> list[Interrupted]:
    """Show interrupted journal entries (and their conflicts); abandon them on request."""
    with ArchiveLock(core.layout.lock, "recover", core.wait) as lock:
        lock.pass_on = True  # it sweeps nothing: a killed run's temp files await the next run
        out = []
        for path, entry in core.journal.pending():
            conflicts = core.journal.conflicts(entry)
            out.append(Interrupted(path.name, entry, tuple(conflicts)))
            if abandon:
                core.journal.abandon(path)
                eventlog.append(
                    core.layout.log,
                    "journal abandoned",
                    actor,
                    entry=path.name,
                    op=entry.op,
                    conflicts=list[JsonValue](conflicts),
                )
        return out
