"""A click group whose commands are imported when one is asked for.

``tht --help`` and a no-op consolidate should not import the modules of commands they
do not run (start-up time, docs/performance.md).  A group names, for each command, the
module that defines or registers it; ``get_command`` imports that module only.  Listing
the commands (``--help``) imports them all, except where the group is given each
command's help text (``helps``, its docstring): the top-level group lists its three groups without
importing any (tests/test_cli_lazy.py checks the lines equal the commands' own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from gettext import gettext
from importlib import import_module
from typing import Any

import click


class LazyGroup(click.Group):
    """``lazy``: command name -> ``"module"`` (importing it registers the command on this
    group) or ``"module:attr"`` (the command object there, added under that name)."""

    def __init__(
        self,
        *args: Any,
        lazy: Mapping[str, str] | None = None,
        helps: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        self.helps = dict(helps or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            # An unknown name loads them all: click suggests the closest of self.commands.
            for name in [cmd_name] if cmd_name in self.lazy else list(self.lazy):
                self._load(name)
        return self.commands.get(cmd_name)

    def _load(self, name: str) -> None:
        if name not in self.commands:
            module, _colon, attr = self.lazy[name].partition(":")
            loaded = import_module(module)
            if attr:
                self.add_command(getattr(loaded, attr), name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names or any(name not in self.helps for name in names):
            super().format_commands(ctx, formatter)
            return
        # click's own rows: each help cut as click cuts it, to the room beside the longest name
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows: Sequence[tuple[str, str]] = [
            (name, click.Command(name, help=self.helps[name]).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section(gettext("Commands")):  # click's word, translated as click does
            formatter.write_dl(rows)
