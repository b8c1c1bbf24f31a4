"""dbt node selection for an import: the ``select`` and ``exclude`` options.

The subset of ``dbt ls --select`` that names models without a graph: a name or a
``*``/``?`` glob (matched against the model's name and the folders of its fqn, as dbt
does for a bare word: ``staging`` is every model under ``models/staging``),
``path:<prefix or glob>`` (the model's files, project-relative) and ``tag:<glob>``.
Selectors separated by spaces (or given as a YAML list) are a union; a comma joins
selectors into an intersection (``staging,tag:nightly``). Graph operators (``+``,
``@``, ``n+``) and other methods are E902: they would select what the import cannot see.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from evidence_tool.importers.base import option_error

_METHODS = ("path", "tag")


@dataclass(frozen=True)
class Node:
    """What selection sees of one model."""

    name: str
    fqn: tuple[str, ...]  # project name, folders under the model path, model name
    paths: tuple[str, ...]  # project-relative files that define or describe it
    tags: tuple[str, ...]


Criterion = tuple[str, str]  # (method: "" | "path" | "tag", value)
Selector = tuple[Criterion, ...]  # an intersection


def parse(value: object, where: str) -> tuple[Selector, ...] | None:
    """The union of selectors an option names (None when the option is absent)."""
    if value is None:
        return None
    if isinstance(value, str):
        words = value.split()
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        words = [w for v in value for w in v.split()]
    else:
        raise option_error(where, f"{value!r} is not a selector text or a list of them")
    if not words:
        raise option_error(where, "no selector; give a model name, a glob, path:... or tag:...")
    return tuple(_selector(word, where) for word in words)


def _selector(word: str, where: str) -> Selector:
    criteria = []
    for part in word.split(","):
        if not part or part[0] in "+@" or part[-1] == "+" or (part[0].isdigit() and "+" in part):
            raise option_error(
                where,
                f"{word!r}: graph operators (+, @) select by lineage, which an import does "
                "not read; name the models, a folder, path: or tag:",
            )
        method, sep, rest = part.partition(":")
        if not sep:
            criteria.append(("", part))
        elif method in _METHODS and rest:
            criteria.append((method, rest.rstrip("/") if method == "path" else rest))
        else:
            raise option_error(
                where,
                f"{word!r}: the method {method!r} is not supported here; supported: a name "
                "or glob, path:, tag:",
            )
    return tuple(criteria)


def _matches(node: Node, criterion: Criterion) -> bool:
    method, value = criterion
    if method == "tag":
        return any(fnmatch.fnmatchcase(t, value) for t in node.tags)
    if method == "path":
        return any(
            p == value or p.startswith(value + "/") or fnmatch.fnmatchcase(p, value)
            for p in node.paths
        )
    return fnmatch.fnmatchcase(node.name, value) or any(
        fnmatch.fnmatchcase(part, value) for part in node.fqn
    )


def _any(node: Node, union: Sequence[Selector]) -> bool:
    return any(all(_matches(node, c) for c in selector) for selector in union)


@dataclass(frozen=True)
class Selection:
    select: tuple[Selector, ...] | None = None
    exclude: tuple[Selector, ...] | None = None

    @classmethod
    def of(cls, options: dict[str, object], key: str) -> Selection:
        return cls(
            parse(options.get("select"), f"{key}.options.select"),
            parse(options.get("exclude"), f"{key}.options.exclude"),
        )

    def chooses(self, node: Node) -> bool:
        if self.select is not None and not _any(node, self.select):
            return False
        return not (self.exclude is not None and _any(node, self.exclude))
