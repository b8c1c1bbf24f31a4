"""``<workspace-root>/.evidence-cache/``: derived data, git-ignored by its own .gitignore."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evidence_tool import fsio
from evidence_tool.workspace.layout import Layout


def ensure_cache(layout: Layout) -> Path:
    cache = layout.cache
    ignore = cache / ".gitignore"
    if not ignore.exists():
        fsio.write_atomic(ignore, b"# derived by evidence-tool: never commit\n*\n")
    return cache


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in records]
    fsio.write_atomic(path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))
    return len(lines)
