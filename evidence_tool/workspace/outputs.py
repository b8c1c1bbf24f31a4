"""Files a command writes where the operator says (``report --html``, ``export --output``).

One rule for every such path (SPEC.md 11, docs/reliability.md):

- it lands inside the workspace root, symlinks resolved;
- never, not even with ``force``, on what the operator or Git owns: ``workspace.yaml``,
  the lock file, anything in a ``.git`` folder, the ``evidence/`` tree (curated units,
  drafts, sources, managed files), the derived cache's own ``.gitignore`` and record
  of outputs -- judged by where the path really leads, so a link (to a folder or to the
  file) whose target is protected is refused too;
- an existing file is replaced only if this command wrote it (the record below still
  holds its bytes' sha256) or with ``force``; a link or a special file is never replaced.

"This command wrote it" is recognised by ``.evidence-cache/outputs.json``: each write
records the file's workspace-relative path, the command and the sha256 of the bytes
written.  A file the operator edited afterwards no longer matches, so it is theirs again;
a lost cache only means ``--force`` once.  The record opens nothing protected: it is
consulted only after the protected paths are refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.errors import AvailabilityError, ConflictError, UsageError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

RECORD = "outputs.json"
# Workspace-relative entries no output may land on or under, whatever the flags.
_PROTECTED = ("workspace.yaml", ".evidence-archive.lock", "evidence", ".git")


@dataclass(frozen=True)
class Output:
    """A path a command may write: ``expected`` is the sha256 of the file it replaces
    (None: no file there), so a save landing meanwhile is kept (E301), not overwritten."""

    path: Path
    rel: str
    command: str
    expected: str | None


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@dataclass
class _Shared:
    """What every claim of one command shares (a folder of 10,000 files claims each):
    the protected paths and their identities, the record of outputs, and the folders
    already found unprotected and resolved."""

    layout: Layout
    root: str
    protected: list[str]
    identities: set[tuple[int, int]]
    safe: set[str] = field(default_factory=set)  # real folders probed: not protected
    real_parents: dict[str, str] = field(default_factory=dict)
    _records: JsonObject | None = None

    @classmethod
    def of(cls, layout: Layout) -> _Shared:
        paths = [layout.root / p for p in _PROTECTED] + [layout.cache / ".gitignore"]
        protected = [os.path.realpath(p) for p in [*paths, layout.cache / RECORD]]
        identities = {i for i in map(_identity, protected) if i is not None}
        return cls(layout, os.path.realpath(layout.root), protected, identities)

    def records(self) -> JsonObject:
        """The record of outputs, read once, and only when a file exists to be judged
        (after the protected paths were refused, as for one claim)."""
        if self._records is None:
            self._records = _records(self.layout)
        return self._records

    def real_parent(self, parent: str) -> str:
        real = self.real_parents.get(parent)
        if real is None:
            real = self.real_parents[parent] = os.path.realpath(parent)
        return real


def _protected(real: str, s: _Shared) -> bool:
    """True if ``real`` (symlinks resolved) is or lies under a protected entry.  Names are
    compared, and so are the files and folders themselves: on a case-insensitive file
    system ``WORKSPACE.YAML`` or ``.GIT/config`` name the protected ones."""
    root = s.root
    if ".git" in (part.lower() for part in Path(os.path.relpath(real, root)).parts):
        return True  # any repository's internals, a nested one's too
    if any(real == p or real.startswith(p + os.sep) for p in s.protected):
        return True
    probe = real
    seen: list[str] = []
    while probe == root or probe.startswith(root + os.sep):
        if probe == root or probe in s.safe:
            s.safe.update(seen[1:])  # the folders on the way (not the file itself)
            return False
        if _identity(probe) in s.identities:
            return True
        seen.append(probe)
        probe = os.path.dirname(probe)
    return False


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    finally:
        os.close(fd)
    return h.hexdigest()


def _records(layout: Layout) -> JsonObject:
    """The outputs recorded in the cache's JSON file (path -> command and sha256)."""
    try:
        data = json.loads((layout.cache / RECORD).read_bytes())
        outputs = data["outputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # derived data: lost or damaged means "nothing recorded"
    return outputs if isinstance(outputs, dict) else {}


def _file_on_the_way(path: Path, layout: Layout) -> str:
    """The nearest ancestor of ``path`` that exists and is not a folder (workspace-relative)."""
    probe = path.parent
    while not probe.is_dir() and not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return os.path.relpath(probe, layout.root)


def claim(
    layout: Layout,
    given: str | os.PathLike[str],
    *,
    command: str,
    option: str,
    force: bool,
    shared: _Shared | None = None,
) -> Output:
    """Check ``given`` against the rule above; a usage error (E901) says why and what to do."""
    path = Path(os.path.abspath(given))
    shown = f"{option} {os.fspath(given)}"
    shared = shared or _Shared.of(layout)
    real = os.path.join(shared.real_parent(str(path.parent)), path.name)
    if not layout.inside(path.parent):
        raise UsageError(
            f"{shown}: the file must be inside the workspace {layout.root} (every write stays "
            "under the workspace root); name a file inside it"
        )
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise UsageError(
            f"{shown}: {_file_on_the_way(path, layout)} is a file, not a folder; name a "
            "file in a folder"
        ) from None
    except OSError as exc:  # a link loop, a folder it may not search
        raise UsageError(f"{shown} cannot be used ({exc.strerror}); name another file") from None
    targets = [real] + ([os.path.realpath(path)] if st and stat.S_ISLNK(st.st_mode) else [])
    if any(_protected(t, shared) for t in targets):
        raise UsageError(
            f"{shown}: that path belongs to the operator or to Git (workspace.yaml, the lock, "
            ".git/, the evidence/ tree); it is never overwritten, not even with --force: "
            "name another file, e.g. .evidence-cache/" + path.name
        )
    rel = os.path.relpath(real, shared.root)
    if st is None:
        return Output(path, rel, command, None)
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{shown} is a folder; name a file")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(
            f"{shown} is a symbolic link or a special file, which is never replaced: "
            "remove it first, or name another file"
        )
    try:
        digest = _digest(path)
    except OSError as exc:
        raise UsageError(f"{shown} cannot be read ({exc.strerror}); name another file") from None
    ours = shared.records().get(rel)
    if not force and ours != {"command": command, "sha256": digest}:
        raise UsageError(
            f"{shown}: {rel} exists and was not written by this command (or was edited since): "
            "pass --force to replace it, or name another file"
        )
    return Output(path, rel, command, digest)


def claim_many(
    layout: Layout, paths: list[Path], *, command: str, option: str, force: bool
) -> list[Output]:
    """``claim`` for every file of a folder a command fills: the same rule, file by file,
    with what they share (protected paths, the record, each folder's check) done once."""
    shared = _Shared.of(layout)
    return [
        claim(layout, p, command=command, option=option, force=force, shared=shared) for p in paths
    ]


def _failed(what: str, exc: OSError, rel: str) -> AvailabilityError:
    reason = exc.strerror or type(exc).__name__
    return AvailabilityError(
        f"{what} failed ({reason}): fix the cause, then run the command again",
        code="E604",
        path=rel,
    )


def write(layout: Layout, out: Output, data: bytes) -> None:
    """Write ``data`` to a claimed path and record it as this command's output."""
    try:
        ensure_cache(layout)  # first: a page written into the cache is never committable
        digest = fsio.write_atomic(out.path, data, expected=out.expected)
    except OSError as exc:  # a full disk, a read-only folder: not a defect
        raise _failed(f"writing {out.rel} (nothing was replaced)", exc, out.rel) from None
    except fsio.Changed:
        raise ConflictError(
            f"{out.rel} was saved by someone else while {out.command} ran; it was kept as "
            "they saved it: run the command again (with --force to replace it)",
            path=out.rel,
        ) from None
    what = f"{out.rel} was written, but recording it in .evidence-cache/{RECORD}"
    _record(layout, [(out, digest)], set(), what, out.rel)


def _record(
    layout: Layout, written: list[tuple[Output, str]], gone: set[str], what: str, rel: str
) -> None:
    """Record ``written`` (each output with its sha256) in the record of outputs; forget
    ``gone`` and the outputs no longer there, so it stays as small as what it describes."""
    records = {
        r: v
        for r, v in _records(layout).items()
        if r not in gone and os.path.lexists(layout.root / r)
    }
    records.update((out.rel, {"command": out.command, "sha256": digest}) for out, digest in written)
    body = json.dumps({"version": 1, "outputs": records}, indent=1, sort_keys=True)
    try:
        fsio.write_atomic(layout.cache / RECORD, body.encode("utf-8"), durable=False)
    except OSError as exc:
        raise _failed(what, exc, rel) from None


def recorded_under(layout: Layout, folder: str, command: str) -> dict[str, str]:
    """The files under workspace-relative ``folder`` recorded as ``command``'s outputs
    and still holding the bytes it wrote: rel -> sha256 (what a folder output may remove)."""
    prefix = folder.rstrip("/") + "/" if folder not in ("", ".") else ""
    found: dict[str, str] = {}
    for rel, record in _records(layout).items():
        if not rel.startswith(prefix) or not isinstance(record, dict):
            continue
        digest = record.get("sha256")
        if record.get("command") != command or not isinstance(digest, str):
            continue
        path = layout.root / rel
        try:
            if path.is_file() and not path.is_symlink() and _digest(path) == digest:
                found[rel] = digest
        except OSError:
            continue
    return found


def write_all(layout: Layout, items: list[tuple[Output, bytes]], removed: list[Output]) -> None:
    """Write many claimed outputs (a folder a command fills) and remove ``removed`` (its
    earlier outputs it no longer writes), then record them once.  Each file is replaced
    atomically; one filesystem sync at the end makes the whole set durable (one fsync per
    file made a 10,000-file tree ten times slower)."""
    rel = "?"
    try:
        ensure_cache(layout)
        digests: dict[str, str] = {}
        for out, data in items:
            rel = out.rel
            digests[out.rel] = fsio.write_atomic(
                out.path, data, expected=out.expected, durable=False
            )
        for out in removed:
            rel = out.rel
            fsio.unlink(out.path, missing_ok=True, expected=out.expected)
        if items or removed:
            fsio.sync_filesystem(layout.root)
    except OSError as exc:
        raise _failed(f"writing {rel} (the files before it were written)", exc, rel) from None
    except fsio.Changed:
        raise ConflictError(
            f"{rel} was saved by someone else while the command ran; it was kept as they "
            "saved it: run the command again (with --force to replace it)",
            path=rel,
        ) from None
    written = [(out, digests[out.rel]) for out, _ in items]
    what = f"recording the outputs in .evidence-cache/{RECORD}"
    _record(layout, written, {out.rel for out in removed}, what, rel)
