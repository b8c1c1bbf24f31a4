"""JSON lines of the active corpus: the bytes ``export --format jsonl`` writes (typed
units with provenance; each line names its ``id`` and ``revision``)."""

from __future__ import annotations

from evidence_tool.activation.cache import jsonl_bytes
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.publish.model import Published


def publish(archive: LocalEvidenceArchive, revision: str) -> Published:
    """The export's records in the snapshot's order (the order ``export`` writes)."""
    records = list(archive.snapshot(revision).records())
    out = Published()
    out.files[""] = jsonl_bytes(records)
    out.exported = [str(r["id"]) for r in records]
    return out
