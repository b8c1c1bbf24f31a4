"""``local-manifest.yaml`` against the snapshots: current, missing, stale or edited by hand.

The file is derived (SPEC.md 5): ``consolidate`` writes it again from the newest
snapshot whenever it is not current, and says what it discarded (W701); ``verify``
reports the same difference (E701) until then.  No hand edit can change the archive,
so discarding one loses nothing but the edit itself, which the warning shows in full.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evidence_tool.archive.manifest import load_local_manifest, render_local_manifest
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import EvidenceWarning

CURRENT, MISSING, STALE, EDITED = "current", "missing", "stale", "edited"
SHOWN = 12  # difference lines in a message; the rest is counted


@dataclass(frozen=True)
class MirrorCheck:
    status: str
    named: str | None = None  # STALE: the other snapshot whose file this is
    difference: tuple[str, ...] = ()  # EDITED: "line N: - expected" / "line N: + found"
    sealed: bytes | None = None  # the file's bytes, when the seal proved them the tool's
    reseal: str | None = None  # sha256 of a current file proven by rendering, not by a seal

    def explain(self, newest: str) -> str:
        """What is wrong with the file, relative to the newest snapshot ``newest``."""
        if self.status == MISSING:
            return "local-manifest.yaml is missing"
        if self.status == STALE:
            assert self.named is not None
            return (
                f"local-manifest.yaml is snapshot {self.named[:12]}…'s, not the newest "
                f"snapshot {newest[:12]}…'s"
            )
        shown = "; ".join(self.difference[:SHOWN])
        more = len(self.difference) - SHOWN
        if more > 0:
            shown += f"; … and {more} more line(s)"
        return (
            f"local-manifest.yaml was edited by hand (it differs from snapshot "
            f"{newest[:12]}…): {shown}"
        )

    def warning(self, newest: str, written: str, rel: str, *, dry_run: bool) -> EvidenceWarning:
        """W701: the file is written again from snapshot ``written``."""
        done = "would be written" if dry_run else "was written"
        discarded = " (the edit above is discarded)" if self.status == EDITED else ""
        return EvidenceWarning(
            f"{self.explain(newest)}; it {done} again from snapshot {written[:12]}…{discarded}; "
            "record changes with the tht commands, never in this file",
            rel,
            None,
            "W701",
        )


def check_mirror(
    path: Path,
    newest: Snapshot,
    snapshot: Callable[[str], Snapshot | None],
    sealed: tuple[str, str] | None = None,
) -> MirrorCheck:
    """How the file at ``path`` relates to ``newest``.  ``sealed`` (sha256, revision):
    what this tool last wrote there, if known; ``snapshot(revision)`` loads another one."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return MirrorCheck(MISSING)
    except OSError as exc:
        return MirrorCheck(EDITED, difference=(f"cannot be read ({exc.strerror})",))
    if sealed is not None and hashlib.sha256(data).hexdigest() == sealed[0]:
        if sealed[1] == newest.revision:
            return MirrorCheck(CURRENT, sealed=data)
        return MirrorCheck(STALE, sealed[1])
    expected = render_local_manifest(newest.manifest, newest.revision)
    if data == expected:
        return MirrorCheck(CURRENT, reseal=hashlib.sha256(data).hexdigest())
    try:
        revision, manifest = load_local_manifest(data)
    except Exception:  # anything unreadable is an edit; the difference shows it
        return MirrorCheck(EDITED, difference=difference(expected, data))
    # Comments or spacing only say the same, but are bytes this tool did not write: they
    # are EDITED (written again once, W701), else every later run would re-render to know.
    named = isinstance(revision, str) and revision != newest.revision
    other = snapshot(revision) if named else None
    if other is not None and manifest == other.manifest:
        return MirrorCheck(STALE, revision)
    return MirrorCheck(EDITED, difference=difference(expected, data))


def difference(expected: bytes, found: bytes) -> tuple[str, ...]:
    """Each changed line of ``found`` against ``expected``, by line number in ``found``."""
    import difflib  # a W701's only: not loaded by every consolidate

    old = expected.decode("utf-8", errors="replace").splitlines()
    new = found.decode("utf-8", errors="replace").splitlines()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, False).get_opcodes():
        if tag == "equal":
            continue
        out += [f"line {j1 + 1}: - {line.strip()}" for line in old[i1:i2]]
        out += [f"line {j1 + 1 + k}: + {line.strip()}" for k, line in enumerate(new[j1:j2])]
    return tuple(out)
