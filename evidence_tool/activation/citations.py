"""``cite-check``: are an answer's citations grounded in what retrieval returned?

A cited id is grounded when it was retrieved and is active; ungrounded when it
was never retrieved (a fabricated citation).  Retrieved ids nobody cited are
listed as unused.  Cited ids that are deleted, retired, unknown or whose
source was retracted are flagged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evidence_tool.activation.reader import open_active_corpus
from evidence_tool.archive.derive import source_of
from evidence_tool.archive.local import LocalEvidenceArchive


def retracted_sources(archive: LocalEvidenceArchive) -> set[str]:
    """Source ids whose registry status is 'retracted' (from sources.json, if any)."""
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
    return {sid for sid, s in items if isinstance(s, dict) and s.get("status") == "retracted"}


def _dedupe(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def cite_check(
    archive: LocalEvidenceArchive, cited: Sequence[str], retrieved: Sequence[str]
) -> dict[str, Any]:
    corpus = open_active_corpus(archive.layout.root)
    active = {r["id"]: r for r in corpus.records}
    snap = archive.active_snapshot()
    deletions = {d["id"]: d for d in (snap.deletions if snap else [])}
    retracted = retracted_sources(archive)
    cited_l, retrieved_l = _dedupe(cited), _dedupe(retrieved)
    cited_set, retrieved_set = set(cited_l), set(retrieved_l)
    grounded = [u for u in retrieved_l if u in cited_set and u in active]
    ungrounded = [u for u in cited_l if u not in retrieved_set]
    inactive = [u for u in retrieved_l if u in cited_set and u not in active]
    unused = [u for u in retrieved_l if u not in cited_set]
    flags: list[dict[str, str]] = []
    for uid in cited_l:
        if uid in deletions:
            reason = deletions[uid]["reason"]
            flags.append(
                {"id": uid, "flag": "retired" if reason == "retired-by-replace" else "deleted"}
            )
        elif uid not in active:
            flags.append({"id": uid, "flag": "unknown"})
        else:
            prov = active[uid].get("provenance") or {}
            sid = source_of(prov)
            if sid and sid in retracted:
                flags.append({"id": uid, "flag": "source-retracted", "source_id": sid})
    return {
        "revision": corpus.revision,
        "grounded": grounded,
        "ungrounded": ungrounded,
        "inactive": inactive,
        "unused": unused,
        "flags": flags,
        "ok": not ungrounded,
    }
