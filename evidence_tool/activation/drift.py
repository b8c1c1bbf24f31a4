"""``verify --index``: does the configured backend hold exactly the active snapshot?"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any

from evidence_tool.activation.sqlite_index import INDEX_NAME
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import Diagnostic


def _sqlite_entries(archive: LocalEvidenceArchive) -> dict[str, str] | None:
    path = archive.layout.cache / INDEX_NAME
    if not path.is_file():
        return None
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        return dict(con.execute("SELECT id, content_hash FROM units").fetchall())


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
        info["note"] = f"the '{kind}' backend keeps no index this tool can read"
        return [], info
    if kind == "sqlite":
        held = _sqlite_entries(archive)
        if held is None:
            held = {}
            info["note"] = "no index file"
    else:
        held = {uid: p.get("content_hash") for uid, p in backend.entries().items()}
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
