"""Which files under ``evidence/curated/`` are unit files, and what to say about the others.

A file that is not read as a unit is never skipped silently (E108): a unit saved under a
wrong name would otherwise be read as deleted, and its id reserved for good.
"""

from __future__ import annotations

import re

from evidence_tool import fsio
from evidence_tool.errors import Diagnostic

# Files that Git or the operating system put in any folder and that never hold a unit
# (docs/unit-format.md, section 1): neither read nor reported.
IGNORED_NAMES = frozenset({".gitkeep", ".keep", ".gitignore", ".DS_Store", "Thumbs.db"})
_MARKDOWN = (".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdx")
# Bytes an editor saved while a killed run swapped the file (archive/journal.py):
# "<name>.md.kept-<12 hex>", next to the unit so the operator sees it.
KEPT_NAME = re.compile(r"(.+\.md)\.kept-[0-9a-f]{12}")
_BACKUP = ("~", "#", ".bak", ".orig", ".rej", ".swp", ".swo", ".swn", ".tmp", ".old", ".save")


def not_a_unit(name: str) -> Diagnostic | None:
    """E108 for a file under ``evidence/curated/`` that is not a unit file, None for a
    unit file or a placeholder.  Never skipped silently: a unit saved under a wrong name
    would be read as deleted, and its id reserved for good."""
    if name.endswith(".md") or name in IGNORED_NAMES:
        return None
    if fsio.TEMP_NAME.fullmatch(name) or fsio.PARKED_NAME.fullmatch(name):
        # The tool's own write in flight; a locked run sweeps an orphaned temp file and
        # settles parked bytes (restored, or kept under a visible name with E302).
        return None
    lower = name.lower()
    if kept := KEPT_NAME.fullmatch(name):
        message = (
            f"{name!r} holds an editor's save that an interrupted run set aside (E302): "
            f"compare it with {kept.group(1)!r}, copy what you want to keep into that file, "
            "then delete this copy"
        )
    elif lower.endswith(_MARKDOWN):
        stem = name[: name.rindex(".")]
        message = (
            f"{name!r} is not read: unit files end in '.md' (lower case); rename it to "
            f"'{stem.lower()}.md', or move it out of evidence/curated/"
        )
    elif ".md" in lower and (lower.endswith(_BACKUP) or name.startswith(("#", ".#"))):
        message = (
            f"{name!r} looks like an editor's backup or swap file: close the editor, then "
            "delete it or move it out of evidence/curated/ (if it holds the only copy of a "
            "unit, rename it to <name>.md)"
        )
    else:
        message = (
            f"{name!r} is not a unit file (units are evidence/curated/<kind>/<name>.md): "
            "rename it to <name>.md if it holds a unit, or move it out of evidence/curated/"
        )
    return Diagnostic("E108", message)
