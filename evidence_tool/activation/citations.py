"""``cite-check``: are an answer's citations grounded in what retrieval returned?

A cited id is grounded when it was retrieved and is active; ungrounded when it
was never retrieved (a fabricated citation).  Retrieved ids nobody cited are
listed as unused.  Cited ids that are deleted, retired, unknown or whose
source was retracted are flagged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evidence_tool.activation.reader import open_active_corpus
from evidence_tool.archive.derive import source_of
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.records import Deletion, DeletionReason
from evidence_tool.errors import Diagnostic


def retracted_sources(archive: LocalEvidenceArchive) -> set[str]:
    """Source ids the registry (sources.json, if any) records as retracted."""
    try:
        data = json.loads(archive.layout.sources_json.read_bytes())
    except (FileNotFoundError, ValueError):
        return set()
    sources = data.get("sources", {})
    items = (
        sources.items()
        if isinstance(sources, dict)
        else ((s.get("source_id"), s) for s in sources if isinstance(s, dict))
    )
    # The registry records a retraction as a 'retraction' object on the source.
    return {
        sid
        for sid, s in items
        if isinstance(sid, str)
        and isinstance(s, dict)
        and (s.get("retraction") or s.get("status") == "retracted")
    }


def _dedupe(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


@dataclass(frozen=True)
class CitationContext:
    """What citations are checked against, read once per run (not once per answer)."""

    revision: str | None
    active: dict[str, dict[str, Any]]  # unit id -> provenance ({} before initialization)
    deletions: dict[str, Deletion]
    retracted: set[str]


def citation_context(archive: LocalEvidenceArchive) -> CitationContext:
    """The active units (from the manifest: no unit is parsed), deletions, retractions."""
    retracted = retracted_sources(archive)
    if not archive.state().initialized:
        corpus = open_active_corpus(archive.layout.root)
        return CitationContext(None, {r["id"]: {} for r in corpus.records}, {}, retracted)
    snap = archive.active_snapshot()
    if snap is None:
        return CitationContext(None, {}, {}, retracted)
    return CitationContext(
        snap.revision,
        {e.id: e.provenance for e in snap.entries()},
        {d.id: d for d in snap.deletions},
        retracted,
    )


def classify(
    ctx: CitationContext, cited: Sequence[str], retrieved: Sequence[str]
) -> dict[str, Any]:
    """Grounded / ungrounded / inactive / unused ids of one answer, plus flags on cited ids."""
    active, deletions = ctx.active, ctx.deletions
    cited_l, retrieved_l = _dedupe(cited), _dedupe(retrieved)
    cited_set, retrieved_set = set(cited_l), set(retrieved_l)
    grounded = [u for u in retrieved_l if u in cited_set and u in active]
    ungrounded = [u for u in cited_l if u not in retrieved_set]
    inactive = [u for u in retrieved_l if u in cited_set and u not in active]
    unused = [u for u in retrieved_l if u not in cited_set]
    flags: list[dict[str, str]] = []
    for uid in cited_l:
        if uid in deletions:
            reason = deletions[uid].reason
            flags.append(
                {"id": uid, "flag": "retired" if reason == DeletionReason.RETIRED else "deleted"}
            )
        elif uid not in active:
            flags.append({"id": uid, "flag": "unknown"})
        else:
            sid = source_of(active[uid]) if active[uid] else None
            if sid and sid in ctx.retracted:
                flags.append({"id": uid, "flag": "source-retracted", "source_id": sid})
    return {
        "revision": ctx.revision,
        "grounded": grounded,
        "ungrounded": ungrounded,
        "inactive": inactive,
        "unused": unused,
        "flags": flags,
        "ok": not ungrounded,
    }


def cite_check(
    archive: LocalEvidenceArchive, cited: Sequence[str], retrieved: Sequence[str]
) -> dict[str, Any]:
    """Classify one answer's citations (see ``classify``; use ``citation_context`` for many)."""
    return classify(citation_context(archive), cited, retrieved)


def ungrounded_errors(
    result: dict[str, Any], answer: int, path: str | None = None, line: int | None = None
) -> list[Diagnostic]:
    """E170 for each ungrounded id of one classified answer (``path``/``line``: where the
    answer was read from, for ``--answers``)."""
    return [
        Diagnostic(
            "E170",
            f"answer {answer} cites '{uid}', which retrieval did not return for it",
            path,
            line,
            None,
            uid,
        )
        for uid in result["ungrounded"]
    ]
