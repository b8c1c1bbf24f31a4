"""Helpers for the activation tests (SPEC.md 8): units, descriptors, the CLI, indexes.

Named ``activation_helpers`` (test folders have no ``__init__.py``, so the module
name must be unique on ``sys.path``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from evidence_tool.activation import names
from evidence_tool.activation.records import IndexRecord
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import scan_curated

ACTOR = "alice"
Tht = Callable[..., Any]  # the ``tht`` fixture
FORMULA = "evidence:clinical:giornate-di-degenza"
FORMULA_PATH = "evidence/curated/formula/giornate-di-degenza.md"


# -- units ---------------------------------------------------------------------------

_HEADINGS = {
    "domain": ("Rule", "Regola"),
    "glossary": ("Definition", "Definizione"),
}


def unit_text(
    unit_id: str,
    kind: str,
    language: str,
    purposes: list[str],
    title: str,
    text: str,
    *,
    tables: list[str] | None = None,
) -> str:
    """A valid domain or glossary unit (Italian headings for ``it`` and ``it-*``)."""
    italian = language == "it" or language.startswith("it-")
    heading = _HEADINGS[kind][1 if italian else 0]
    applies = f"applies_to:\n  tables: [{', '.join(tables)}]\n" if tables else ""
    return (
        f"---\nschema_version: 4\nid: {unit_id}\nkind: {kind}\nlanguage: {language}\n"
        f"purposes: [{', '.join(purposes)}]\n{applies}---\n\n# {title}\n\n## {heading}\n\n{text}\n"
    )


def formula_text(unit_id: str, title: str, columns: list[str], sql: str) -> str:
    """An English formula unit whose tables come only from its Columns field."""
    cols = "".join(f"- {c}\n" for c in columns)
    return (
        f"---\nschema_version: 4\nid: {unit_id}\nkind: formula\nlanguage: en\n"
        f"purposes: [sql_generation]\n---\n\n# {title}\n\n## Concept\n\n{title.lower()}\n\n"
        f"## Columns\n\n{cols}\n## SQL\n\n```sql\n{sql}\n```\n"
    )


def write_unit(root: Path, kind: str, name: str, text: str) -> Path:
    path = root / "evidence" / "curated" / kind / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def add_word(path: Path, word: str) -> None:
    """A visible edit: the title line gets ``word`` appended."""
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("# "))
    lines[i] += f" {word}"
    path.write_text("\n".join(lines), encoding="utf-8")


def working_content_hash(root: Path, unit_id: str) -> str:
    for f in scan_curated(Layout.at(root)).files:
        if f.unit is not None and f.unit.id == unit_id:
            return f.unit.content_hash
    raise AssertionError(f"no valid curated file holds {unit_id}")


def stage_document(root: Path, unit_id: str, excerpt: str) -> str:
    """Stage a document declaration for the unit's current content (as 'decide' does).

    Returns the source id; the next consolidation records ``provenance.kind: document``.
    """
    text = f"# Source\n\n{excerpt}\n"
    data = text.encode("utf-8")
    source_id = hashlib.sha256(b"activation-tests").hexdigest()
    rel = f"evidence/source/acquired/{source_id}/{hashlib.sha256(data).hexdigest()}.md"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)
    provenance = {
        "kind": "document",
        "source_id": source_id,
        "source_path": rel,
        "source_hash": hashlib.sha256(data).hexdigest(),
        "excerpts": [excerpt],
        "declared_at": "2026-11-29T09:00:00Z",
        "actor": "refiner",
    }
    LocalEvidenceArchive(root).merge_staged(
        {
            "declarations": {
                unit_id: {
                    "content_hash": working_content_hash(root, unit_id),
                    "provenance": provenance,
                }
            }
        }
    )
    return source_id


def stage_retirement(root: Path, unit_id: str) -> None:
    """Retire a unit the way a 'decide replace' does: staged reason, then the file goes."""
    LocalEvidenceArchive(root).merge_staged(
        {"retirements": {unit_id: {"reason": "retired-by-replace", "actor": "refiner"}}}
    )


def unit_file(root: Path, unit_id: str) -> Path:
    for f in scan_curated(Layout.at(root)).files:
        if f.result.unit_id == unit_id:
            return f.path
    raise AssertionError(f"no curated file holds {unit_id}")


# -- archive state ---------------------------------------------------------------------


def state(root: Path) -> Any:
    return LocalEvidenceArchive(root).state()


def active_entries(root: Path) -> dict[str, str]:
    """Unit id -> content hash of the active snapshot."""
    snap = LocalEvidenceArchive(root).active_snapshot()
    assert snap is not None
    return {e.id: e.content_hash for e in snap.entries()}


def active_records(root: Path) -> list[dict[str, Any]]:
    snap = LocalEvidenceArchive(root).active_snapshot()
    assert snap is not None
    return list(snap.records())


def cache_leftovers(root: Path) -> list[str]:
    """Files in .evidence-cache/ other than the published index (and its stamp), the stat
    cache, the mirror seal and the .gitignore."""
    cache = root / ".evidence-cache"
    keep = {".gitignore", "index.sqlite", "index.sqlite.stamp", "stat-cache.bin"}
    keep.add("local-manifest.sha256")
    return sorted(p.name for p in cache.iterdir() if p.name not in keep) if cache.is_dir() else []


# -- a search oracle -------------------------------------------------------------------


def _flatten(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _flatten(v)
    elif isinstance(value, list):
        for v in value:
            yield from _flatten(v)


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(record: dict[str, Any], *, identifiers: bool = False) -> set[str]:
    """Words of title, fields and applies_to, as FTS5 unicode61 sees them ('_' splits
    words); ``identifiers=True``: as the qdrant term embedder sees them (it does not)."""
    text = "\n".join(
        [
            record["title"],
            *_flatten(record["payload"]),
            *_flatten(record["metadata"].get("applies_to", {})),
        ]
    )
    return {_fold(w) for w in re.findall(r"\w+" if identifiers else r"[^\W_]+", text)}


# -- the CLI ---------------------------------------------------------------------------


def write_installation(path: Path, activation: dict[str, Any], **top: Any) -> Path:
    """An installation descriptor with ``evidence.activation`` (JSON is valid YAML 1.2)."""
    data = {"installation_version": 1, **top, "evidence": {"activation": activation}}
    path.write_text("# installation descriptor\n" + json.dumps(data, indent=2) + "\n")
    return path


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (PID 1 in a container may not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def env_without_installation() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("THT_INSTALLATION", None)
    env["THT_ACTOR"] = ACTOR
    return env


# -- the name and value boosts' rule, written out (names.Namer is its fast form) --------


def named(record: IndexRecord, stems: frozenset[str]) -> bool:
    """Does the question (``stems``) name one of ``record``'s names in full?"""
    for name in names.names(record):
        if len(name.strip()) < names.MIN_CHARS:
            continue
        words = names._name_words(name, record.language)
        if words and all(w in stems for w in words):
            return True
    return False


def literal_named(record: IndexRecord, question: str, asked: list[str]) -> bool:
    """Does the question say one of the unit's quoted values, or does the unit hold one
    of the question's quoted values (``asked``), as whole words?"""
    return said_literal(record, names._folded_words(question), asked)


def said_literal(record: IndexRecord, said: str, asked: list[str]) -> bool:
    """``literal_named`` of a question already folded and padded (``said``)."""
    if any(f" {lit} " in said for lit in names.literals(record)):
        return True
    return bool(asked) and names._holds_asked(record, asked)
