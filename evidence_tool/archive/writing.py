"""A snapshot's writes (SPEC.md 5 step 4): objects, manifest, ``local-manifest.yaml`` and
its seal, and the check of that mirror against the snapshots: current, missing, stale
or edited by hand.

The mirror is derived (SPEC.md 5): ``consolidate`` writes it again from the newest
snapshot whenever it is not current, and says what it discarded (W701); ``verify``
reports the same difference (E701) until then.  No hand edit can change the archive,
so discarding one loses nothing but the edit itself, which the warning shows in full.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evidence_tool import __version__, fsio
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.manifest import (
    PreviousYaml,
    load_local_manifest,
    render_local_manifest,
)
from evidence_tool.archive.snapshot import Snapshot, snapshot_path
from evidence_tool.errors import ConflictError, EvidenceError, EvidenceWarning
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.cachedir import ensure_cache

if TYPE_CHECKING:
    from evidence_tool.archive.derive import Derivation
    from evidence_tool.workspace.scan import ValidationReport

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


# Who encoded the last manifest and mirror: another version may encode them otherwise.
ENCODER = f"evidence-tool-{__version__}"
_YAML_SEAL = "local-manifest.sha256"  # in .evidence-cache: what local-manifest.yaml was


def write_snapshot(
    core: ArchiveCore, d: Derivation, report: ValidationReport, mirror: MirrorCheck
) -> str:
    """Objects, then the snapshot manifest, then local-manifest.yaml (SPEC.md 5 step 4).

    These writes are one step, committed by the state.yaml that names the snapshot.
    """
    fsio.begin_step()
    # Only entries written afresh can name a blob the archive lacks: the entries taken
    # over from the previous snapshot name blobs that exist (objects are written
    # before manifests), so k changed units cost k checks and k writes.
    wanted = {e.file_hash for e in d.fresh}
    wanted |= {digest for _, digest in d.source_blobs.values()}
    wanted |= set(d.blobs)
    missing = core.objects.missing(wanted)
    batch: list[tuple[str, bytes, str]] = []
    for f in report.files if missing else ():
        if f.file_hash in missing:
            # Read and hashed by this scan, or (rare) recognized by the stat cache and not
            # archived: read now, its bytes must still be the hash the cache recorded.
            if f.cached is not None and hashlib.sha256(f.data).hexdigest() != f.file_hash:
                raise ConflictError(
                    f"{f.rel} changed while consolidate was running; run it again",
                    path=f.rel,
                )
            missing.discard(f.file_hash)
            batch.append((core.objects.name_for(f.file_hash), f.data, f.file_hash))
    for data, digest in [*d.source_blobs.values(), *((b, h) for h, b in d.blobs.items())]:
        if digest in missing:
            missing.discard(digest)
            batch.append((core.objects.name_for(digest), data, digest))
    fsio.write_batch(batch)
    revision = d.revision
    path = snapshot_path(core.layout.snapshots, revision)
    fsio.write_new(path, d.manifest_bytes, digest=revision)
    write_mirror(core, d.manifest, revision, _previous_yaml(core, d, mirror))
    return revision


def write_mirror(
    core: ArchiveCore, manifest: JsonObject, revision: str, previous: PreviousYaml | None
) -> None:
    """``local-manifest.yaml`` for snapshot ``revision``, and the seal saying so."""
    data = render_local_manifest(manifest, revision, previous)
    write_seal(core, fsio.write_atomic(core.layout.local_manifest, data), revision)


def write_seal(core: ArchiveCore, digest: str, revision: str) -> None:
    # Remember what was written, and by which encoder, so the next snapshot can reuse
    # the unchanged entries of both documents.
    line = f"{digest} {revision} {ENCODER}\n".encode()
    fsio.write_atomic(ensure_cache(core.layout) / _YAML_SEAL, line, durable=False)


def read_mirror(core: ArchiveCore, prev: Snapshot | None) -> MirrorCheck:
    if prev is None:  # nothing to compare with: the first snapshot writes it
        return MirrorCheck(CURRENT)
    sealed_by = seal(core)

    def other(revision: str) -> Snapshot | None:
        try:
            return core.snapshot(revision)
        except (EvidenceError, ValueError):
            return None

    sealed = (sealed_by[0], sealed_by[1]) if sealed_by else None
    return check_mirror(core.layout.local_manifest, prev, other, sealed)


def seal(core: ArchiveCore) -> list[str]:
    """[mirror sha256, revision, encoder] of the last snapshot written here, or []."""
    try:
        words = (core.layout.cache / _YAML_SEAL).read_text().split()
    except (OSError, UnicodeDecodeError):
        return []
    return words if len(words) == 3 else []


def _previous_yaml(core: ArchiveCore, d: Derivation, mirror: MirrorCheck) -> PreviousYaml | None:
    """The last local-manifest.yaml, if it is byte for byte what this tool wrote for
    the previous snapshot (hand edits or a lost cache mean: render everything)."""
    sealed_by = seal(core)
    if sealed_by[1:] != [d.prev_revision, ENCODER] or d.prev_json is None:
        return None
    data = mirror.sealed  # read and proven by its sha256 in read_mirror
    if data is None:
        return None
    return PreviousYaml(data, d.prev_json.manifest)
