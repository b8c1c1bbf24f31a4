"""A revision-checked change to operator files, through the journal (SPEC.md 5.2-5.4):
the one way save, remove, restore and a source's decide write curated files."""

from __future__ import annotations

from evidence_tool import fsio
from evidence_tool.archive import eventlog
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.journal import FileChange, current_hash
from evidence_tool.errors import ConflictError, EvidenceError
from evidence_tool.jsonvalue import JsonObject, JsonValue


def change_files(
    core: ArchiveCore,
    op: str,
    actor: str,
    changes: list[tuple[str, bytes | None]],
    expected: dict[str, str | None],
    staged: JsonObject,
    **event: JsonValue,
) -> list[FileChange]:
    """Check every path against its expected hash, journal, then write (E301 on mismatch).

    The post-image objects and the journal entry are one step: a failure before the
    entry lands undoes the objects; after it, the next run rolls the change forward.
    """
    fsio.begin_step()
    planned = []
    for rel, data in changes:
        target = core.layout.resolve_inside(rel)
        if not core.layout.inside(target.parent):
            raise EvidenceError(f"{rel} leaves the workspace", code="E108", path=rel)
        cur = current_hash(target)
        if rel in expected and cur != expected[rel]:
            raise ConflictError(
                f"{rel} changed since it was read (expected "
                f"{(expected[rel] or 'absent')[:12]}, found {(cur or 'absent')[:12]}); "
                "the other edit was kept: read the file again and re-apply your change",
                path=rel,
            )
        post = core.objects.put(data) if data is not None else None
        planned.append(FileChange(rel, cur, post))
    entry_path, entry = core.journal.begin(op, actor, planned, staged)
    core.journal.apply(entry_path, entry, core.merge_staged)
    name = event.pop("event", op)
    eventlog.append(core.layout.log, str(name), actor, **event)
    return planned
