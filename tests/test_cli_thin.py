"""The CLI is uniformly thin (issue 18): typed bodies over a Session, reporters per format.

- every command body registered with ``register`` takes a typed ``Session`` (not ``Any``)
  and never reaches past it into the archive (``s.archive``);
- each output format (text, json, github, sarif) has its own reporter module meeting the
  ``Reporter`` protocol, and ``--format``/``--json`` choose it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path

from evidence_tool.cli import main  # the entry point, beside the command modules
from evidence_tool.cli.options import FORMATS
from evidence_tool.session import Session

CLI = Path(main.__file__).parent
BODY_MODULES = [
    "archive_cmds",
    "sources_cmds",
    "activation_cmds",
    "report_cmds",
    "publish_cmds",
]


def _bodies() -> list[tuple[str, typing.Callable[..., object]]]:
    found = []
    for name in BODY_MODULES:
        module = importlib.import_module(f"evidence_tool.cli.{name}")
        for attr, fn in vars(module).items():
            if (
                attr.endswith("_body")
                and inspect.isfunction(fn)
                and fn.__module__ == module.__name__
            ):
                found.append((f"{name}.{attr}", fn))
    return found


def test_every_command_body_takes_a_typed_session() -> None:
    bodies = _bodies()
    assert len(bodies) >= 23, [n for n, _ in bodies]  # every registered body was seen
    untyped = []
    for name, fn in bodies:
        hints = typing.get_type_hints(fn, localns={"Session": Session})
        first = next(iter(inspect.signature(fn).parameters))
        if hints.get(first) is not Session:
            untyped.append(f"{name}: {first}: {hints.get(first)}")
        untyped += [f"{name}: {p}: Any" for p, t in hints.items() if t is typing.Any]
    assert not untyped, untyped


def test_no_command_body_reaches_past_the_session() -> None:
    reached = []
    files = sorted(CLI.glob("*_cmds.py"))
    assert len(files) >= 8
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "archive"
                and isinstance(node.value, ast.Name)
                and node.value.id == "s"
            ):
                reached.append(f"{path.name}:{node.lineno}")
    assert not reached, reached


def test_one_reporter_module_per_format() -> None:
    from evidence_tool.cli.reporters import Reporter, reporter_for

    assert set(FORMATS) == {"text", "json", "github", "sarif"}
    modules = set()
    for fmt in FORMATS:
        reporter = reporter_for(fmt)
        assert isinstance(reporter, Reporter), fmt
        modules.add(type(reporter).__module__)
        assert type(reporter).__module__ == f"evidence_tool.cli.reporters.{fmt}_reporter"
    assert len(modules) == len(FORMATS)
