"""Discovery and acquisition of one refresh, bounded to 200 documents and 100 MiB (E503).

Local sources are ``evidence/incoming/**/*.md`` and ``evidence/source/**/*.md``; the
managed ``source/acquired/`` versions are never sources themselves.  A symbolic link
that leaves the workspace is refused (E501), never followed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from evidence_tool.archive.clock import now
from evidence_tool.errors import SourceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources import import_source
from evidence_tool.sources.identity import Acquired, Candidate, acquired, fs_locator, source_id
from evidence_tool.sources.policy import NetworkPolicy, SourceSpec
from evidence_tool.sources.remote import discover_http, discover_s3
from evidence_tool.workspace.layout import Layout


def _walk(layout: Layout, top: Path) -> list[Path]:
    out: list[Path] = []
    seen: set[str] = set()
    stack = [top]
    while stack:
        folder = stack.pop()
        real = os.path.realpath(folder)
        if real in seen:  # a link loop inside the workspace
            continue
        seen.add(real)
        for entry in sorted(os.scandir(folder), key=lambda e: e.name, reverse=True):
            path = Path(entry.path)
            if path == layout.acquired:
                continue
            if entry.is_symlink() and not layout.inside(path):
                raise SourceError(
                    f"{layout.rel(path)} is a symbolic link pointing outside the workspace; "
                    "it is refused: replace it with the file itself",
                    path=layout.rel(path),
                )
            if entry.is_dir():
                stack.append(path)
            elif entry.name.endswith(".md"):
                out.append(path)
    return sorted(out)


def _read(path: Path, rel: str, max_bytes: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise SourceError(f"{rel} cannot be read: {exc.strerror}", path=rel) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SourceError(f"{rel} is not a regular file", path=rel)
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > max_bytes:
                raise SourceError(
                    f"{rel} is larger than max_bytes ({max_bytes} bytes)", code="E503", path=rel
                )
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def discover_local(layout: Layout, max_bytes: int) -> list[Candidate]:
    """Every local document, sorted by path."""
    found: list[Candidate] = []
    for top in (layout.incoming, layout.source):
        if not top.is_dir():
            continue
        for path in _walk(layout, top):
            rel = layout.rel(path)
            locator = fs_locator(rel)
            sid = source_id(locator)

            def fetch(path: Path = path, rel: str = rel, locator: str = locator) -> Acquired:
                raw = _read(path, rel, max_bytes)
                meta: JsonObject = {"path": rel, "size": len(raw), "fetched_at": now()}
                return acquired(locator, "fs", raw, meta, rel)

            found.append(Candidate(sid, locator, "fs", fetch))
    return found


Progress = Callable[[str, int, int], None]  # (label, done, total)


def discover(
    layout: Layout, descriptor_sources: list[SourceSpec], policy: NetworkPolicy
) -> list[Candidate]:
    """Every source of the workspace, local first; duplicates of one locator are merged.

    Not bounded here: the document limit applies to what one refresh reads
    (``check_count``), so ``--source-id`` can always reach one source among many.
    """
    found = discover_local(layout, policy.max_bytes)
    found += discover_http(descriptor_sources, policy)
    found += discover_s3(descriptor_sources, policy)
    found += import_source.discover(layout, descriptor_sources, policy)
    unique: dict[str, Candidate] = {}
    for c in found:
        unique.setdefault(c.source_id, c)
    return list(unique.values())


def check_count(selected: list[Candidate], policy: NetworkPolicy) -> None:
    """E503 when the sources this refresh would read exceed the document limit."""
    if len(selected) > policy.max_documents:
        raise SourceError(
            f"the refresh would read {len(selected)} documents; one refresh reads at most "
            f"{policy.max_documents}: refresh them in parts with --source-id, or split the sources",
            code="E503",
        )


def acquire(
    candidates: list[Candidate],
    policy: NetworkPolicy,
    progress: Progress | None = None,
    failed: list[tuple[Candidate, SourceError]] | None = None,
) -> list[Acquired]:
    """Fetch every candidate; the first failure stops the refresh (nothing is recorded),
    except an import whose path does not exist: that one is put in ``failed`` and the
    others go on (a clone without one export still refreshes the rest)."""
    out: list[Acquired] = []
    total = 0
    for n, candidate in enumerate(candidates):
        if progress:
            progress("fetching", n, len(candidates))
        try:
            doc = candidate.fetch()
        except import_source.InputMissing as exc:
            if failed is None:
                raise
            failed.append((candidate, exc))
            continue
        total += doc.bytes_read
        if total > policy.max_total_bytes:
            raise SourceError(
                f"the refresh read more than {policy.max_total_bytes} bytes in total "
                f"(at {candidate.locator}); one refresh reads at most 100 MiB",
                code="E503",
            )
        out.append(doc)
    if progress:
        progress("fetching", len(candidates), len(candidates))
    return out
