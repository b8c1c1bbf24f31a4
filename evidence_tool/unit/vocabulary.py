"""The eight kinds and four purposes of SPEC.md 3: the one list of each.

A leaf of plain tuples, so the CLI's ``--kind``/``--purpose`` choices read them
without loading the field table or the parser (start-up time, docs/performance.md).
"""

from __future__ import annotations

KINDS: tuple[str, ...] = (
    "domain",
    "glossary",
    "enum",
    "example",
    "mapping",
    "normalization",
    "formula",
    "reference",
)
PURPOSES: tuple[str, ...] = ("disambiguation", "rewriting", "schema_linking", "sql_generation")
