"""``<workspace-root>/.evidence-cache/``: derived data, git-ignored by its own .gitignore."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evidence_tool import fsio
from evidence_tool.workspace.cachedir import ensure_cache

__all__ = ["ensure_cache", "jsonl_bytes", "write_jsonl"]


def jsonl_bytes(records: Iterable[dict[str, Any]]) -> bytes:
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in records]
    return ("\n".join(lines) + "\n" if lines else "").encode("utf-8")


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    fsio.write_atomic(path, jsonl_bytes(records))
