"""The command groups load their commands on demand (evidence_tool/cli/lazy_group.py).

What a command imports is counted in a fresh interpreter (the only honest view of what
an import loads); the tables that say which module holds which command are checked
against what the modules really register, so a command can neither go missing from
``--help`` nor be listed without a module behind it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_runner import subcommands

from evidence_tool.cli.lazy_group import LazyGroup

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / "evidence_tool" / "cli"


def fresh(code: str) -> object:
    """Run ``code`` in a new interpreter; its last stdout line is JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


LOADED_COMMANDS = (
    "import sys, json\n"
    "from evidence_tool.cli.main import main\n"
    "try:\n"
    "    main({args!r})\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps(sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
    "                        if m.startswith('evidence_tool.cli.') and m.endswith('_cmds'))))\n"
)


def test_tht_help_imports_no_command_module(tmp_path: Path) -> None:
    assert fresh(LOADED_COMMANDS.format(args=["--help"])) == []


def test_a_command_imports_only_the_modules_on_its_way(tmp_path: Path) -> None:
    every = sorted(p.stem for p in CLI.glob("*_cmds.py"))
    assert len(every) >= 9  # the sweep below sees every command module
    status = ["workspace", "evidence", "status", "--workspace-root", str(tmp_path)]
    assert fresh(LOADED_COMMANDS.format(args=status)) == ["archive_cmds", "workspace_cmds"]
    refresh = ["workspace", "evidence", "refresh", "--workspace-root", str(tmp_path)]
    # sources_cmds registers through workspace_cmds' ``register``: archive_cmds stays out.
    assert fresh(LOADED_COMMANDS.format(args=refresh)) == ["sources_cmds", "workspace_cmds"]
    assert fresh(LOADED_COMMANDS.format(args=["evidence", "fmt", "--help"])) == ["evidence_cmds"]


def lazy_groups(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, LazyGroup]]:
    found = [(" ".join(path) or "tht", group)] if isinstance(group, LazyGroup) else []
    for name, cmd in sorted(subcommands(group).items()):
        if isinstance(cmd, click.Group):
            found += lazy_groups(cmd, (*path, name))
    return found


def test_each_lazy_entry_names_the_module_that_brings_its_command() -> None:
    """In a fresh interpreter per module, loading one entry of that module brings every
    command the table says it holds (whatever other modules it pulls in)."""
    from evidence_tool.cli.main import cli

    groups = lazy_groups(cli)
    assert {name for name, _ in groups} == {"tht", "evidence", "workspace evidence"}
    checked = 0
    for path, group in groups:
        by_module: dict[str, list[str]] = {}
        for name, spec in group.lazy.items():
            by_module.setdefault(spec, []).append(name)
        for spec, names in sorted(by_module.items()):
            code = (
                "import json, click\n"
                "from evidence_tool.cli.main import cli\n"
                "group = cli\n"
                f"for word in {[] if path == 'tht' else path.split()!r}:\n"
                "    group = group.get_command(click.Context(group), word)\n"
                f"group._load({names[0]!r})\n"
                "print(json.dumps(sorted(group.commands)))\n"
            )
            present = fresh(code)
            assert isinstance(present, list)
            assert set(names) <= set(present), (path, spec, names, present)
            checked += len(names)
    assert checked == sum(len(g.lazy) for _, g in groups) >= 25


def test_every_registered_command_is_listed() -> None:
    """With every command module imported, no group holds a command its table omits."""
    import importlib

    from evidence_tool.cli.main import cli

    for path in sorted(CLI.glob("*_cmds.py")):
        importlib.import_module(f"evidence_tool.cli.{path.stem}")
    for path, group in lazy_groups(cli):
        ctx = click.Context(group)
        assert set(group.commands) <= set(group.list_commands(ctx)), path


@pytest.mark.parametrize("width", [30, 50, 80, 200])
def test_the_top_level_help_lists_what_click_would(width: int) -> None:
    """``helps`` are the groups' own docstrings: the rows equal click's at any width."""
    from evidence_tool.cli.main import cli

    for name, cmd in subcommands(cli).items():
        assert cli.helps[name] == cmd.help and cmd.short_help is None, name
        assert not cmd.hidden and not cmd.deprecated, name
    ctx = click.Context(cli, terminal_width=width, max_content_width=width)
    lazy, eager = click.HelpFormatter(width=width), click.HelpFormatter(width=width)
    cli.format_commands(ctx, lazy)
    click.Group.format_commands(cli, ctx, eager)
    assert lazy.getvalue() == eager.getvalue()
    assert "workspace" in lazy.getvalue()
