"""``verify --index``: does the configured backend hold exactly the active snapshot?"""

from __future__ import annotations

from typing import Any

from evidence_tool.activation.sqlite_index import INDEX_NAME, index_entries
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import Diagnostic, EvidenceError


def index_drift(
    archive: LocalEvidenceArchive, settings: dict[str, Any], backend: Any = None
) -> tuple[list[Diagnostic], dict[str, Any]]:
    """E702 per missing, stale or extra entry, comparing id by id and content hash."""
    kind = settings.get("kind", "sqlite")
    active = archive.active_snapshot()
    expected = {e.id: e.content_hash for e in active.entries()} if active else {}
    info: dict[str, Any] = {"backend": kind, "active": active.revision if active else None}
    if kind in ("none", "command"):
        info["checked"] = False
        info["note"] = f"the {kind} backend keeps no index this tool can read"
        return [], info
    if kind == "sqlite":
        path = archive.layout.cache / INDEX_NAME
        entries = index_entries(path)
        if entries is None and (expected or path.is_file()):
            info["checked"] = True
            info.update(expected=len(expected), held=0, drift=1)
            state = "unreadable" if path.is_file() else "missing"
            info["note"] = f"index file {state}"
            message = f"the search index {path} is {state}"
            return [Diagnostic("E702", message, path=str(path))], info
        held = entries or {}
    else:
        try:
            entries_of = backend.entries()
        except EvidenceError as exc:  # unreachable server, collection locked by a process
            info.update(checked=True, expected=len(expected), held=0, drift=1)
            info["note"] = "index unreadable"
            return [Diagnostic("E702", exc.message)], info
        held = {uid: p.get("content_hash") for uid, p in entries_of.items()}
    info["checked"] = True
    problems = []
    for uid in sorted(expected.keys() - held.keys()):
        problems.append(Diagnostic("E702", f"index is missing active unit '{uid}'", unit_id=uid))
    for uid in sorted(expected.keys() & held.keys()):
        if expected[uid] != held[uid]:
            problems.append(
                Diagnostic("E702", f"index holds a stale version of '{uid}'", unit_id=uid)
            )
    for uid in sorted(held.keys() - expected.keys()):
        problems.append(
            Diagnostic("E702", f"index holds '{uid}', which is not active", unit_id=uid)
        )
    info.update(expected=len(expected), held=len(held), drift=len(problems))
    return problems, info
