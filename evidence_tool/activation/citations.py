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
from enum import StrEnum

from evidence_tool.activation.reader import open_active_corpus
from evidence_tool.archive.derive import source_of
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.manifest import UnitEntry
from evidence_tool.archive.records import Deletion, DeletionReason
from evidence_tool.errors import Diagnostic
from evidence_tool.record import Record


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


@dataclass(frozen=True)
class CitationContext:
    """What citations are checked against, read once per run (not once per answer)."""

    revision: str | None
    active: dict[str, UnitEntry | None]  # unit id -> its entry (None before initialization)
    deletions: dict[str, Deletion]
    retracted: set[str]


def citation_context(archive: LocalEvidenceArchive) -> CitationContext:
    """The active units (from the manifest: no unit is parsed), deletions, retractions."""
    retracted = retracted_sources(archive)
    if not archive.state().initialized:
        corpus = open_active_corpus(archive.layout.root)
        return CitationContext(None, {r.id: None for r in corpus.records}, {}, retracted)
    snap = archive.active_snapshot()
    if snap is None:
        return CitationContext(None, {}, {}, retracted)
    return CitationContext(
        snap.revision,
        {e.id: e for e in snap.entries()},
        {d.id: d for d in snap.deletions},
        retracted,
    )


class Flag(StrEnum):
    """Why a cited id deserves a look although it may be grounded."""

    RETIRED = "retired"
    DELETED = "deleted"
    UNKNOWN = "unknown"
    SOURCE_RETRACTED = "source-retracted"


class CitationFlag(Record, frozen=True, omit_defaults=True):
    id: str
    flag: Flag
    source_id: str | None = None  # the retracted source (``source-retracted`` only)


class CitationCheck(Record, frozen=True):
    """One answer's cited ids, classified against what retrieval returned for it."""

    _keys = ("revision", "grounded", "ungrounded", "inactive", "unused", "flags", "ok")
    revision: str | None
    grounded: tuple[str, ...]
    ungrounded: tuple[str, ...]
    inactive: tuple[str, ...]
    unused: tuple[str, ...]
    flags: tuple[CitationFlag, ...]

    @property
    def ok(self) -> bool:
        """No cited id is ungrounded."""
        return not self.ungrounded


def classify(ctx: CitationContext, cited: Sequence[str], retrieved: Sequence[str]) -> CitationCheck:
    """Grounded / ungrounded / inactive / unused ids of one answer, plus flags on cited ids."""
    active = ctx.active
    cited_l, retrieved_l = list(dict.fromkeys(cited)), list(dict.fromkeys(retrieved))
    cited_set, retrieved_set = set(cited_l), set(retrieved_l)
    grounded = [u for u in retrieved_l if u in cited_set and u in active]
    ungrounded = [u for u in cited_l if u not in retrieved_set]
    inactive = [u for u in retrieved_l if u in cited_set and u not in active]
    unused = [u for u in retrieved_l if u not in cited_set]
    return CitationCheck(
        ctx.revision,
        tuple(grounded),
        tuple(ungrounded),
        tuple(inactive),
        tuple(unused),
        tuple(f for uid in cited_l if (f := _flag(ctx, uid)) is not None),
    )


def _flag(ctx: CitationContext, uid: str) -> CitationFlag | None:
    if uid in ctx.deletions:
        retired = ctx.deletions[uid].reason == DeletionReason.RETIRED
        return CitationFlag(uid, Flag.RETIRED if retired else Flag.DELETED)
    if uid not in ctx.active:
        return CitationFlag(uid, Flag.UNKNOWN)
    entry = ctx.active[uid]
    sid = source_of(entry.provenance_json) if entry is not None else None
    if sid and sid in ctx.retracted:
        return CitationFlag(uid, Flag.SOURCE_RETRACTED, sid)
    return None


def ungrounded_errors(
    result: CitationCheck, answer: int, path: str | None = None, line: int | None = None
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
        for uid in result.ungrounded
    ]
