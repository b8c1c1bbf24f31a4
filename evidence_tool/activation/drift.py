"""``verify --index``: does the configured backend hold exactly the active snapshot?"""

from __future__ import annotations

from typing import Any

from evidence_tool.activation.settings import ActivationSettings, activation_settings
from evidence_tool.activation.sqlite_index import INDEX_NAME, index_entries
from evidence_tool.activation.sqlite_schema import FORMAT, index_meta
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import Diagnostic, EvidenceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import Record


class IndexDrift(Record, frozen=True, omit_defaults=True):
    """The facts ``verify --index`` reports: which backend, and how far it drifted.

    ``expected``/``held``/``drift`` are None when nothing was compared (a backend that
    keeps no index this tool can read); its JSON leaves them and ``note`` out then."""

    backend: str
    active: str | None
    checked: bool
    expected: int | None = None
    held: int | None = None
    drift: int | None = None
    note: str | None = None


def index_drift(
    archive: LocalEvidenceArchive,
    settings: ActivationSettings | JsonObject,
    backend: Any = None,
) -> tuple[list[Diagnostic], IndexDrift]:
    """E702 per missing, stale or extra entry, comparing id by id and content hash."""
    kind = activation_settings(settings, archive.layout).kind
    active = archive.active_snapshot()
    expected = {e.id: e.content_hash for e in active.entries()} if active else {}
    revision = active.revision if active else None
    if kind in ("none", "command"):
        note = f"the {kind} backend keeps no index this tool can read"
        return [], IndexDrift(kind, revision, False, note=note)
    if kind == "sqlite":
        path = archive.layout.cache / INDEX_NAME
        entries = index_entries(path)
        if entries is None and (expected or path.is_file()):
            state = "unreadable" if path.is_file() else "missing"
            info = IndexDrift(kind, revision, True, len(expected), 0, 1, f"index file {state}")
            message = f"the search index {path} is {state}"
            return [Diagnostic("E702", message, path=str(path))], info
        held = entries or {}
        # Rows that all match do not make an index search can read: its format (meta) too.
        fmt = (index_meta(path) or {}).get("format") if entries is not None else FORMAT
        if fmt != FORMAT:
            state = f"of format {fmt or 'unknown'}, this version reads format {FORMAT}"
            info = IndexDrift(kind, revision, True, len(expected), len(held), 1, f"index {state}")
            message = f"the search index {path} is {state}"
            return [Diagnostic("E702", message, path=str(path))], info
    else:
        try:
            entries_of = backend.entries()
        except EvidenceError as exc:  # unreachable server, collection locked by a process
            info = IndexDrift(kind, revision, True, len(expected), 0, 1, "index unreadable")
            return [Diagnostic("E702", exc.message)], info
        held = {uid: p.get("content_hash") for uid, p in entries_of.items()}
    stale = {uid for uid in expected.keys() & held.keys() if expected[uid] != held[uid]}
    found = (
        (expected.keys() - held.keys(), "index is missing active unit '{}'"),
        (stale, "index holds a stale version of '{}'"),
        (held.keys() - expected.keys(), "index holds '{}', which is not active"),
    )
    problems = [Diagnostic("E702", m.format(u), unit_id=u) for ids, m in found for u in sorted(ids)]
    return problems, IndexDrift(kind, revision, True, len(expected), len(held), len(problems))
