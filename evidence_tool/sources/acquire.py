"""Discovery and acquisition of one refresh, bounded to 200 documents and 100 MiB (E503)."""

from __future__ import annotations

from collections.abc import Callable

from evidence_tool.errors import SourceError
from evidence_tool.sources import fs_adapter, http_adapter, import_source, s3_adapter
from evidence_tool.sources.document import Acquired, Candidate
from evidence_tool.sources.policy import NetworkPolicy
from evidence_tool.sources.specs import SourceSpec
from evidence_tool.workspace.layout import Layout

Progress = Callable[[str, int, int], None]  # (label, done, total)


def discover(
    layout: Layout, descriptor_sources: list[SourceSpec], policy: NetworkPolicy
) -> list[Candidate]:
    """Every source of the workspace, local first; duplicates of one locator are merged.

    Not bounded here: the document limit applies to what one refresh reads
    (``check_count``), so ``--source-id`` can always reach one source among many.
    """
    found = fs_adapter.discover(layout, policy.max_bytes)
    found += http_adapter.discover(descriptor_sources, policy)
    found += s3_adapter.discover(descriptor_sources, policy)
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
