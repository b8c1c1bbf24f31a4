"""W122: a deleted id and an added id that are most likely one unit whose id was changed.

Consolidation records such a change as a deletion plus an addition (SPEC.md 5.2), so the
old id is reserved for good.  That is right when meant, and costly when it was a slip:
the warning names both ids and the way back while it is cheap to take.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evidence_tool.archive.manifest import UnitEntry
from evidence_tool.errors import EvidenceWarning
from evidence_tool.unit.hashing import canonical_json, sha256_hex
from evidence_tool.workspace.curated import CuratedFile, parse_unit

if TYPE_CHECKING:
    from evidence_tool.unit.model import Unit


@dataclass(frozen=True)
class IdChange:
    old: str
    new: str
    path: str  # the new unit's file
    same_path: bool  # else: same content apart from the id

    def warning(self, *, recorded: bool) -> EvidenceWarning:
        why = "same file" if self.same_path else "same content apart from the id"
        head = f"the id changed from '{self.old}' to '{self.new}' ({why})?"
        if recorded:
            advice = (
                f"'{self.old}' was recorded as deleted and stays reserved. To keep "
                f"'{self.new}', do nothing. To go back to '{self.old}', write "
                f"'id: {self.old}' in {self.path} again and run "
                f"'tht workspace evidence restore {self.old}' ('{self.new}' is then "
                "recorded as deleted)"
            )
        else:
            advice = (
                f"consolidating records '{self.old}' as deleted and reserves it for good. "
                f"To keep '{self.old}', write 'id: {self.old}' in {self.path} again; to "
                "change the id, consolidate"
            )
        return EvidenceWarning(f"{head} {advice}", self.path, None, "W122")


def _without_id(unit: Unit) -> str:
    """A hash of what the unit says, its id left out."""
    value, metadata = unit.to_json(), unit.metadata.to_json()
    value["metadata"] = {k: v for k, v in metadata.items() if k != "id"}
    return sha256_hex(canonical_json(value))


def likely_id_changes(
    deleted: Iterable[str],
    added: Iterable[str],
    prev_units: dict[str, UnitEntry],
    files: dict[str, CuratedFile],
    blob: Callable[[str], bytes | None],
) -> list[IdChange]:
    """Pairs (deleted id, added id) at the same path, or saying the same apart from the id.

    ``prev_units``: the previous snapshot's entries by id; ``files``: the curated files by
    id; ``blob(file_hash)``: an archived unit file.  Each id is paired at most once."""
    gone = [prev_units[uid] for uid in sorted(deleted) if uid in prev_units]
    new = sorted(uid for uid in added if uid in files)
    if not gone or not new:
        return []
    out: list[IdChange] = []
    by_path = {files[uid].rel: uid for uid in new}
    for entry in gone:
        uid = by_path.pop(entry.path, None)
        if uid is not None:
            out.append(IdChange(entry.id, uid, files[uid].rel, True))
    paired = {c.new for c in out}
    left = [e for e in gone if e.id not in {c.old for c in out}]
    if not left:
        return out
    said: dict[str, str] = {}  # content without id -> the added id saying it
    for uid in new:
        unit = files[uid].unit
        if uid not in paired and unit is not None:
            said.setdefault(_without_id(unit), uid)
    for entry in left:
        data = blob(entry.file_hash)
        unit = parse_unit(data).unit if data is not None else None
        uid = said.pop(_without_id(unit), None) if unit is not None else None
        if uid is not None:
            out.append(IdChange(entry.id, uid, files[uid].rel, False))
    return sorted(out, key=lambda c: c.path)
