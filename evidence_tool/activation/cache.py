"""JSON Lines files in the derived cache (the corpus handed to a ``command`` backend).

The cache folder itself (and its .gitignore) belongs to ``workspace.cachedir``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evidence_tool import fsio

__all__ = ["jsonl_bytes", "write_jsonl"]


def jsonl_bytes(records: Iterable[dict[str, Any]]) -> bytes:
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in records]
    return ("\n".join(lines) + "\n" if lines else "").encode("utf-8")


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    fsio.write_atomic(path, jsonl_bytes(records))
