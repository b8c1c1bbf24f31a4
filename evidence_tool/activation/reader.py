"""The runtime reader: what retrieval may see (SPEC.md 8).

An initialized workspace exposes only its active snapshot; unconsolidated edits
never reach it.  Before initialization the working files are read (the pinned
repository source).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from evidence_tool.activation.cache import jsonl_bytes
from evidence_tool.activation.records import IndexRecord, index_records
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace import outputs
from evidence_tool.workspace.layout import Layout


@dataclass(frozen=True)
class Corpus:
    revision: str | None  # None: read from working files before initialization
    records: list[IndexRecord]

    def ids(self) -> list[str]:
        return [r.id for r in self.records]


def open_active_corpus(root: str | os.PathLike[str]) -> Corpus:
    archive = LocalEvidenceArchive(root)
    state = archive.state()
    if state.initialized:
        if state.active is None:
            return Corpus(None, [])
        return Corpus(state.active, list(index_records(archive.snapshot(state.active).records())))
    records: list[IndexRecord] = []
    for f in archive.scan(cached=False).files:
        if f.unit is None:
            continue
        u = f.unit
        records.append(
            IndexRecord(
                {
                    "revision": None,
                    "id": u.id,
                    "path": f.rel,
                    "kind": u.kind,
                    "language": u.language,
                    "title": u.title,
                    "metadata": u.metadata.to_json(),
                    "payload": u.payload.to_json(),
                    "content_hash": u.content_hash,
                    "file_hash": f.file_hash,
                    "provenance": None,
                    "provenance_kind": None,
                    "review_items": [],
                }
            )
        )
    return Corpus(None, sorted(records, key=lambda r: r.id))


def export_corpus(
    root: str | os.PathLike[str], corpus: Corpus, given: str, *, force: bool = False
) -> Path:
    """Write ``corpus`` as JSON lines to ``given`` under the output-path rule
    (workspace.outputs): never onto a protected file, onto another file only with
    ``force`` unless this command wrote it."""
    layout = Layout.at(root)
    layout.require_contained()
    out = outputs.claim(layout, given, command="export", option="--output", force=force)
    outputs.write(layout, out, jsonl_bytes(r.to_json() for r in corpus.records))
    return out.path
