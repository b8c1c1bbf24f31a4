"""Block YAML for files other tools read (a Cortex semantic model, dbt properties):
``yaml_strict``'s one block emitter in the form a reviewer of such a file needs --
a ``# comment`` line above a list entry (``Commented``: the unit id and revision it
came from) and multi-line text as a literal block (``|``), so SQL and prose read as
written.

Every document this writes loads back with ``yaml_strict.load`` to the same values
(tests/publish check it on every published file).
"""

from __future__ import annotations

from typing import Any

from evidence_tool.unit.yaml_strict import Commented, Form, block

__all__ = ["Commented", "dump"]


def dump(value: Any, *, flow_keys: frozenset[str] = frozenset()) -> str:
    """Block-style YAML of dicts, lists and scalars; ``Commented`` values get their comment
    above them; lists under ``flow_keys`` are written in flow style."""
    return block(value, Form(flow_keys))
