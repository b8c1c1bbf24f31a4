"""A snapshot's writes (SPEC.md 5 step 4): objects, manifest, local-manifest.yaml and
its seal, and the check of that mirror against the snapshot it names."""

from __future__ import annotations

import hashlib

from evidence_tool import __version__, fsio
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.derive import Derivation
from evidence_tool.archive.manifest import PreviousYaml, render_local_manifest
from evidence_tool.archive.mirror import CURRENT, MirrorCheck, check_mirror
from evidence_tool.archive.snapshot import Snapshot, snapshot_path
from evidence_tool.errors import ConflictError, EvidenceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.scan import ValidationReport

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
