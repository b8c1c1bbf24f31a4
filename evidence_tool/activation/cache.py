"""JSON Lines files in the derived cache (the corpus handed to a ``command`` backend).

The cache folder itself (and its .gitignore) belongs to ``workspace.cachedir``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.jsonvalue import JsonObject

__all__ = ["jsonl_bytes", "write_jsonl"]


def jsonl_bytes(records: Iterable[JsonObject]) -> bytes:  # JSON boundary: a JSONL file
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in records]
    return ("\n".join(lines) + "\n" if lines else "").encode("utf-8")


def write_jsonl(path: Path, records: Iterable[JsonObject]) -> None:  # JSON boundary: a file
    fsio.write_atomic(path, jsonl_bytes(records))
