"""What the names of a WrenAI project stand for: a model's physical table, the
columns a relationship's condition joins, the layout version a project declares."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence_tool.importers import yaml_spans as ys
from evidence_tool.importers.base import malformed
from evidence_tool.importers.unit_parts import ident

_REF = r'([A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
_EQUALITY = re.compile(rf"\s*{_REF}\s*\.\s*{_REF}\s*=\s*{_REF}\s*\.\s*{_REF}\s*")
# Starts only where a blank run starts: tried at every blank, a long run was quadratic.
_AND = re.compile(r"(?<!\s)\s+and\s+", re.IGNORECASE)


@dataclass
class Model:
    name: str
    schema: str
    table: str

    def table_name(self) -> str:
        return f"{ident(self.schema)}.{ident(self.table)}"

    def column(self, name: str) -> str:
        return f"{self.table_name()}.{ident(name)}"


def named(root: ys.Node, path: str) -> str:
    """A model's or cube's name: its ``name``, else its folder's (``models/<name>/...``)."""
    return root.text("name") or path.split("/")[1]


def check_layout(path: str, root: ys.Node) -> None:
    """Refuse a v1 (flat-file) project, whose models this importer would not find."""
    node = root.get("schema_version")
    if node is None:
        return
    if not isinstance(node.value, int) or isinstance(node.value, bool):
        raise malformed(path, node.line, "schema_version is not a number")
    if node.value < 2:
        raise malformed(
            path,
            node.line,
            f"a schema_version {node.value} project keeps its models in flat files; upgrade "
            "it with 'wren context upgrade' (v5 is read whole, v2-v4 for their models, cubes "
            "and relationships)",
        )


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def condition_columns(condition: str, models: dict[str, Model]) -> list[str] | None:
    """The columns of ``a.x = b.y [AND ...]`` over the relationship's models, else None."""
    if not condition.strip():
        return None
    out: list[str] = []
    for part in _AND.split(condition.strip()):
        match = _EQUALITY.fullmatch(part)
        if match is None:
            return None
        for model_name, column in (match.group(1, 2), match.group(3, 4)):
            model = models.get(_unquote(model_name))
            if model is None:
                return None
            out.append(model.column(_unquote(column)))
    return list(dict.fromkeys(out))
