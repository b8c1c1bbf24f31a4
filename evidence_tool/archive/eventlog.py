"""``.local/log.jsonl``: one JSON line per event, appended durably."""

from __future__ import annotations

import json
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.archive.clock import now
from evidence_tool.jsonvalue import JsonObject, JsonValue


def append(path: Path, event: str, actor: str, /, **fields: JsonValue) -> JsonObject:
    record: JsonObject = {"event": event, "at": now(), "actor": actor, **fields}
    line = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    fsio.append_line(path, line.encode("utf-8"))
    return record


def read(path: Path) -> list[JsonObject]:  # JSON boundary: the log's lines
    """Every complete event; a torn last line (a crash mid-append) is skipped."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out
