"""Units saved where no unit is read (W108): ``evidence/aov.md`` or ``./aov.md`` holds a
v4 unit that no command sees, and without a word the curator thinks it is in use.

Only curated units are read (``evidence/curated/<kind>/``); ``evidence/incoming/`` and
``evidence/source/`` are read as source documents, so they are not searched here.  The
walk is bounded (depth and files read) so that a workspace inside a large repository
(a dbt project, node_modules) costs little; docs/unit-format.md says where it looks.
"""

from __future__ import annotations

import os
import re

from evidence_tool.errors import EvidenceWarning
from evidence_tool.unit.fields import KINDS
from evidence_tool.workspace.layout import Layout

MAX_DEPTH = 4  # folders below the workspace root searched
MAX_READS = 2000  # Markdown files whose first bytes are read, at most
_HEAD = 4096
_SKIPPED = frozenset({"evidence/curated", "evidence/incoming", "evidence/source", "node_modules"})
_V4 = re.compile(rb"^schema_version:[ \t]*4[ \t]*\r?$", re.M)
_KIND = re.compile(rb"^kind:[ \t]*['\"]?([a-z]+)['\"]?[ \t]*\r?$", re.M)


def misplaced_units(layout: Layout) -> list[EvidenceWarning]:
    """W108 for each Markdown file with v4 unit frontmatter outside ``evidence/curated/``,
    naming the folder it belongs in; in path order."""
    found: list[EvidenceWarning] = []
    reads = 0
    root = str(layout.root)
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack and reads < MAX_READS:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue  # unreadable: nothing of it is read by any command either
        for entry in entries:
            rel = os.path.relpath(entry.path, root).replace(os.sep, "/")
            if entry.name.startswith(".") or rel in _SKIPPED or entry.is_symlink():
                continue
            if entry.is_dir():
                if depth < MAX_DEPTH:
                    stack.append((entry.path, depth + 1))
            elif entry.name.endswith(".md") and reads < MAX_READS:
                reads += 1
                kind = _unit_kind(entry.path)
                if kind is not None:
                    found.append(_warning(rel, kind))
    return sorted(found, key=lambda w: w.path or "")


def _unit_kind(path: str) -> str | None:
    """The kind a v4 unit's frontmatter names ('' when it names none we know); None when
    the file is not a v4 unit."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return None
    if not head.startswith(b"---"):
        return None
    end = head.find(b"\n---", 3)
    front = head[: end if end > 0 else len(head)]
    if not _V4.search(front):
        return None
    kind = _KIND.search(front)
    name = kind.group(1).decode() if kind else ""
    return name if name in KINDS else ""


def _warning(rel: str, kind: str) -> EvidenceWarning:
    name = rel.rsplit("/", 1)[-1]
    target = f"evidence/curated/{kind}/{name}" if kind else "evidence/curated/<kind>/"
    return EvidenceWarning(
        f"{rel} holds a v4 unit, but units are read only from evidence/curated/<kind>/: "
        f"no command sees this one; move it to {target} (or delete it if it is a copy)",
        rel,
        1,
        "W108",
    )
