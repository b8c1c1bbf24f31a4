"""Import sources (issue 16): a descriptor entry ``{kind: import, format, path}`` as a candidate.

The path is a file or folder inside the workspace, outside what the tool and
Git own (``evidence/``, ``workspace.yaml``, ``.git``, the cache, the lock);
a symbolic link that leads outside the workspace, or onto one of those, is
refused (E501), never followed.  Acquiring an import source lists its files
and hashes them: the importer runs later, and only when the hash changed.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidence_tool.archive.clock import now
from evidence_tool.errors import DescriptorError, PathOutsideError, SourceError
from evidence_tool.sources.candidates import Candidate
from evidence_tool.sources.document import Acquired
from evidence_tool.sources.identity import source_id
from evidence_tool.sources.importers.base import (
    Identity,
    ImportInput,
    SourceFile,
    check_options,
    identity_of,
    open_no_links,
)
from evidence_tool.sources.importers.formats import FORMATS, importer_for
from evidence_tool.sources.policy import MAX_LISTED, NetworkPolicy
from evidence_tool.sources.specs import SourceSpec
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.layout import DESCRIPTOR, Layout

KIND = "import"
# What an import path may not be or lie under: the tool's and Git's own files.
OWNED = (DESCRIPTOR, "evidence", ".git", ".evidence-cache", ".evidence-archive.lock")


def import_locator(fmt: str, rel: str) -> str:
    return f"import:{fmt}:{rel}"


@dataclass(frozen=True)
class ImportAcquired(Acquired):
    """An import source's identity and files; ``raw``/``text`` become its import record
    once the importer ran (refresh replaces them), so decide stores the record."""

    format: str = ""
    key: str = ""  # "evidence.sources[N]"
    root: str = ""  # folder the files' paths are relative to
    files: tuple[SourceFile, ...] = ()
    stamps: tuple[tuple[str, int, int], ...] = ()  # (path, size, mtime_ns) when hashed
    options: tuple[tuple[str, Any], ...] = ()
    max_bytes: int = 0
    input_bytes: int = 0

    @property
    def bytes_read(self) -> int:
        return self.input_bytes

    def input(self, language: str) -> ImportInput:
        return ImportInput(
            self.files, dict(self.options), language, self.max_bytes, self.key, self.root
        )


def _refuse(key: str, rel: str, why: str) -> SourceError:
    return SourceError(f"{key}.path: {rel} {why}", path=rel, details={"result": {"key_path": key}})


def _owned(layout: Layout, real: str) -> str | None:
    """The owned entry ``real`` is or lies under, if any."""
    root = os.path.realpath(layout.root)
    for name in OWNED:
        top = os.path.join(root, name)
        if real == top or real.startswith(top + os.sep):
            return name
    return None


def check_path(layout: Layout, rel: str, key: str) -> Path:
    """The absolute path of an import entry's ``path``, inside the workspace and outside
    what the tool owns (E501 naming the key otherwise); it must exist."""
    try:
        path = layout.resolve_inside(rel)
    except PathOutsideError:
        raise _refuse(
            key, repr(rel), "is not a relative path inside the workspace ('..' and '/' refused)"
        ) from None
    if not os.path.lexists(path):
        raise _refuse(
            key,
            rel,
            "does not exist: export the data there, correct the path, or remove the entry "
            "from workspace.yaml (its source is then marked missing)",
        )
    real = os.path.realpath(path)
    if not layout.inside(path):
        raise _refuse(
            key,
            rel,
            "leads outside the workspace (a symbolic link); it is refused: copy the "
            "data into the workspace",
        )
    owned = _owned(layout, real)
    if owned is not None:
        raise _refuse(
            key,
            rel,
            f"is or lies under {owned}, which the tool or Git owns: put import data in a "
            "folder of its own, such as imports/",
        )
    return path


def _walk(layout: Layout, top: Path, rel_top: str, key: str, limit: int) -> list[tuple[str, Path]]:
    """(path relative to ``top``, real path) of every regular file under ``top``: hidden
    entries (``.git``, ``.DS_Store``) are skipped, links are followed only inside the
    workspace and never onto what the tool owns.  E503 as soon as more than ``limit``
    files are found: a huge tree is not walked to the end."""
    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    stack: list[tuple[Path, str]] = [(top, "")]
    while stack:
        folder, prefix = stack.pop()
        real = os.path.realpath(folder)
        if real in seen:  # a link loop inside the workspace
            continue
        seen.add(real)
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            rel = f"{prefix}{entry.name}"
            path = Path(entry.path)
            if entry.is_symlink():
                target = os.path.realpath(path)
                if not layout.inside(path) or _owned(layout, target):
                    raise _refuse(
                        key,
                        f"{rel_top}/{rel}",
                        "is a symbolic link leading outside the import folder's allowed "
                        "places (outside the workspace, or onto what the tool owns); it is "
                        "refused: replace it with the file itself",
                    )
            try:
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError:  # ELOOP: a link loop (a -> b -> a) leads to no file at all
                raise _refuse(
                    key,
                    f"{rel_top}/{rel}",
                    "is a symbolic link loop: it leads to no file; remove it or replace "
                    "it with the file itself",
                ) from None
            if is_dir:
                stack.append((path, rel + "/"))
            elif is_file:
                out.append((rel, _real_inside(layout, path, key, f"{rel_top}/{rel}")))
                if len(out) > limit:
                    raise SourceError(
                        f"{rel_top} holds more than {limit} files; an import source reads at "
                        "most that many: point the entry at the folder that holds the export",
                        code="E503",
                        path=rel_top,
                    )
            # Sockets, FIFOs and devices are not data: skipped.
    return sorted(out)


def _real_inside(layout: Layout, path: Path, key: str, shown: str) -> Path:
    """The real path the file will be read at, checked once more: a file swapped for a link
    since the entry was listed (its type is the listing's) must not lead the hash outside
    the workspace or onto what the tool owns.  Every read then opens this real path with no
    link followed, so a later swap is refused rather than followed."""
    real = os.path.realpath(path)
    if not layout.inside(real) or _owned(layout, real):
        raise _refuse(
            key,
            shown,
            "became a symbolic link leading outside the import folder's allowed places "
            "while it was listed; it is refused: replace it with the file itself",
        )
    return Path(real)


def _hash_file(path: Path, shown: str) -> tuple[str, int, int, Identity]:
    """(sha256, size, mtime_ns, identity) of a regular file, read in blocks from a
    descriptor opened with no link followed; every later read checks it opens the file
    of that identity (``SourceFile``), so what is imported is what was hashed."""
    fd, info = open_no_links(path, shown)
    try:
        digest = hashlib.sha256()
        while block := os.read(fd, 1 << 20):
            digest.update(block)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if identity_of(after) != identity_of(info):
        raise SourceError(f"{shown} changed while it was hashed; refresh again", path=shown)
    return digest.hexdigest(), info.st_size, info.st_mtime_ns, identity_of(info)


def _content_hash(spec: SourceSpec, entries: list[tuple[str, str]]) -> str:
    """sha256 over the entry's format, options and language and each file's (path, sha256)
    in path order: any change to what the importer would be given is a new version."""
    digest = hashlib.sha256(
        canonical_json(
            {
                "format": spec.format,
                "options": spec.options,
                "language": spec.language,
            }
        )
    )
    for rel, sha in entries:
        digest.update(f"\n{rel}\x00{sha}".encode())
    return digest.hexdigest()


def list_files(
    layout: Layout, rel: str, key: str, limit: int = MAX_LISTED
) -> tuple[str, list[tuple[str, Path]]]:
    """(the folder the files' paths are relative to, [(path, real path)]) of an entry's
    path, every check of ``check_path`` and of the folder's links applied.  An OSError
    of the walk (a link or folder swapped while ``realpath`` resolved it: EINVAL, ENOENT)
    is E501, never exit 70."""
    try:
        return _list_files(layout, rel, key, limit)
    except OSError as exc:
        raise SourceError(
            f"{rel} changed while its files were listed ({exc.strerror}); run the command "
            "again once the export is complete",
            path=rel,
        ) from None


def _list_files(
    layout: Layout, rel: str, key: str, limit: int = MAX_LISTED
) -> tuple[str, list[tuple[str, Path]]]:
    path = check_path(layout, rel, key)
    if path.is_dir():
        return rel, _walk(layout, path, rel, key, limit)
    root = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return root, [(path.name, _real_inside(layout, path, key, rel))]


def _fetch(layout: Layout, spec: SourceSpec, key: str, policy: NetworkPolicy) -> ImportAcquired:
    rel = spec.path
    root, found = list_files(layout, rel, key, policy.max_listed)
    files, stamps, hashes = [], [], []
    total = 0
    for name, real in found:
        shown = f"{root}/{name}" if root else name
        sha, size, mtime, identity = _hash_file(real, shown)
        total += size
        if total > policy.max_total_bytes:
            raise SourceError(
                f"{rel} holds more than {policy.max_total_bytes} bytes; one refresh reads "
                "at most that much: split the export",
                code="E503",
                path=rel,
            )
        files.append(SourceFile(name, real, size, shown, identity))
        stamps.append((name, size, mtime))
        hashes.append((name, sha))
    locator = import_locator(spec.format, rel)
    options = spec.options
    return ImportAcquired(
        source_id(locator),
        locator,
        KIND,
        b"",
        "",
        _content_hash(spec, hashes),
        {
            "format": spec.format,
            "path": rel,
            "files": len(files),
            "bytes": total,
            "read_at": now(),
        },
        spec.language,
        spec.title,
        format=spec.format,
        key=key,
        root=root,
        files=tuple(files),
        stamps=tuple(stamps),
        options=tuple(sorted(options.items())),
        max_bytes=policy.max_bytes,
        input_bytes=total,
    )


def check_entry(spec: SourceSpec, key: str) -> None:
    """The format is known and its options are its own (E902 naming the key)."""
    if spec.format not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise DescriptorError(
            f"{key}.format: unknown source format {spec.format!r}; the formats are: {known}",
            details={"result": {"key_path": f"{key}.format"}},
        )
    known_options = getattr(importer_for(spec.format), "options", None)
    if known_options is not None:
        check_options(spec.options, known_options, key)


def discover(layout: Layout, sources: list[SourceSpec], policy: NetworkPolicy) -> list[Candidate]:
    """One candidate per import entry (nothing read yet); two entries naming one format
    and path are refused (E902), since they would be one source."""
    found: list[Candidate] = []
    keys: dict[str, str] = {}
    for index, spec in enumerate(sources):
        if spec.kind != KIND:
            continue
        key = f"evidence.sources[{index}]"
        check_entry(spec, key)
        locator = import_locator(spec.format, spec.path)
        if locator in keys:
            raise DescriptorError(
                f"{key}: the same import as {keys[locator]} ({locator}); remove one of them",
                details={"result": {"key_path": key}},
            )
        keys[locator] = key

        def fetch(spec: SourceSpec = spec, key: str = key) -> Acquired:
            return _fetch(layout, spec, key, policy)

        found.append(Candidate(source_id(locator), locator, KIND, fetch))
    return found
