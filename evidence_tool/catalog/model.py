"""The warehouse catalog as values: relations, their columns and types, lookups.

Names are stored as PostgreSQL holds them: unquoted identifiers folded to lower
case, quoted ones verbatim.  A SQLite catalog matches names case-insensitively,
as SQLite does.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property

RELATION_KINDS = ("table", "view")
_TYPO = 0.85  # similarity above which a name is taken for a misspelling of another
# One part of a dotted name: a quoted identifier ("" inside for "), or a bare one.
_PART = re.compile(r'"(?:[^"]|"")*"|[^."][^.]*', re.S)
_NAME = re.compile(rf"(?:{_PART.pattern})(?:\.(?:{_PART.pattern}))*", re.S)


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class Relation:
    schema: str
    name: str
    kind: str
    columns: tuple[Column, ...]

    def __post_init__(self) -> None:
        if self.kind not in RELATION_KINDS:
            raise ValueError(f"relation kind {self.kind!r} is not one of {RELATION_KINDS}")

    @property
    def qualified(self) -> str:
        return f"{quote_ident(self.schema)}.{quote_ident(self.name)}"

    def column(self, name: str, *, fold_case: bool = False) -> Column | None:
        for col in self.columns:
            if col.name == name or (fold_case and col.name.lower() == name.lower()):
                return col
        return None

    def near_columns(self, name: str) -> list[str]:
        return closest(name, [c.name for c in self.columns])

    @cached_property
    def fingerprint(self) -> str:
        """sha256 of the kind, column names and types in order: what drift compares."""
        data = [self.kind, [[c.name, c.type] for c in self.columns]]
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Catalog:
    """Every relation the warehouse holds, found by qualified or unqualified name."""

    kind: str  # ddl | sqlite | postgres
    relations: tuple[Relation, ...]
    search_path: tuple[str, ...] = ("public",)
    fold_case: bool = False
    sources: tuple[str, ...] = field(default=())

    @cached_property
    def _index(self) -> dict[tuple[str, str], Relation]:
        return {self._key(r.schema, r.name): r for r in self.relations}

    def _key(self, schema: str, name: str) -> tuple[str, str]:
        return (schema.lower(), name.lower()) if self.fold_case else (schema, name)

    def same(self, a: str | None, b: str) -> bool:
        """Whether two names are one: exactly in PostgreSQL, ignoring case in SQLite."""
        return a is not None and (a.lower() == b.lower() if self.fold_case else a == b)

    def relation(self, schema: str | None, name: str) -> Relation | None:
        """The relation ``schema.name``; without a schema, the first of the search path."""
        if schema is not None:
            return self._index.get(self._key(schema, name))
        for candidate in self.search_path:
            found = self._index.get(self._key(candidate, name))
            if found is not None:
                return found
        return None

    @cached_property
    def _near_cache(self) -> dict[tuple[str | None, str], list[str]]:
        return {}

    def near_relations(self, schema: str | None, name: str) -> list[str]:
        """Qualified names close to the one asked for ("did you mean"); remembered, since
        a dropped table is named by many units and each search reads every relation."""
        key = (schema, name)
        if key not in self._near_cache:
            self._near_cache[key] = self._near_relations(schema, name)
        return list(self._near_cache[key])

    def _near_relations(self, schema: str | None, name: str) -> list[str]:
        wanted = f"{schema}.{name}" if schema else name
        names = {(f"{r.schema}.{r.name}" if schema else r.name): r for r in self.relations}
        close = closest(wanted, list(names))
        if not close and schema:  # the table moved to another schema, or the schema is misspelt
            same = [r for r in self.relations if r.name == name]
            return [r.qualified for r in same[:3]]
        return [names[c].qualified for c in close]

    def having_column(self, schema: str | None, column: str) -> list[str]:
        """Relations (of ``schema`` first) with a column of that name: where a column
        went when its table was renamed or split."""
        having = [r for r in self.relations if r.column(column, fold_case=self.fold_case)]
        same = [
            r
            for r in having
            if schema is not None and self._key(r.schema, "") == self._key(schema, "")
        ]
        return [r.qualified for r in sorted(same or having, key=_order)[:3]]

    def fingerprint(self) -> dict[str, str]:
        """Per-relation hash of columns and types, by qualified name (sorted)."""
        return {r.qualified: r.fingerprint for r in sorted(self.relations, key=_order)}

    def summary(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "sources": list(self.sources),
            "search_path": list(self.search_path),
            "relations": len(self.relations),
            "fingerprint": self.fingerprint(),
        }


def closest(word: str, names: list[str]) -> list[str]:
    """Up to three names close to ``word``; a near-identical one stands alone (a typo
    has one answer; a rename may have several plausible ones)."""
    scored = []
    m = difflib.SequenceMatcher()
    m.set_seq2(word)  # difflib caches what it learns about seq2: the fixed word goes there
    for name in names:
        m.set_seq1(name)
        if m.real_quick_ratio() >= 0.6 and m.quick_ratio() >= 0.6 and m.ratio() >= 0.6:
            scored.append((m.ratio(), name))
    scored.sort(key=lambda x: (-x[0], x[1]))
    if scored and scored[0][0] >= _TYPO:
        return [scored[0][1]]
    return [name for _, name in scored[:3]]


def did_you_mean(near: list[str]) -> str:
    """'; did you mean a or b?' for the names ``closest`` found, or ''."""
    return f"; did you mean {' or '.join(near)}?" if near else ""


def _order(r: Relation) -> tuple[str, str]:
    return (r.schema, r.name)


def quote_ident(name: str) -> str:
    """``name`` as SQL would need it written: bare when it is a folded identifier."""
    bare = bool(name) and (name[0].isalpha() or name[0] == "_") and name == name.lower()
    if bare and name.isascii() and all(ch.isalnum() or ch in "_$" for ch in name):
        return name
    return '"' + name.replace('"', '""') + '"'


def split_name(text: str) -> list[str] | None:
    """``a.b."C"`` -> ['a', 'b', 'C'] as PostgreSQL reads it (bare names fold to lower
    case); None when the text is not a dotted list of identifiers."""
    if not _NAME.fullmatch(text):
        return None
    return [p[1:-1].replace('""', '"') if p[0] == '"' else p.lower() for p in _PART.findall(text)]
