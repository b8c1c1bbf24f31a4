"""Every command of ``tht --help``'s tree, run as a person runs it: at a terminal.

Each command runs twice on identical copies of a workspace: piped (as every other test
runs it) and with stdout and stderr on pseudo-terminals.  The terminal run must exit as
the piped one, print the same stdout, the same stderr but for progress bars, and no
traceback.  Two workspaces: one past every threshold that counts units (700: the bars
are drawn and the scan runs in parallel workers; 2,300 under THT_SOAK=1) and a tiny
one.  The terminal variants people have -- ``TERM=dumb``, ``NO_COLOR``, a 20-column
terminal, the C locale, stdin closed -- are spread over the commands (each variant on
five commands of each workspace); the sweep asserts how many commands and variants it
ran, and where bars were drawn.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from cli_runner import subcommands
from pty_workspaces import Templates, copy
from ptyrun import Ran, at_terminal, piped, progress_drawn, without_progress

from evidence_tool.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
# Past every threshold that counts units: the bars' 300 items, the parse workers' 400.
LARGE = 2300 if os.environ.get("THT_SOAK") == "1" else 700
TINY = 12


def command_paths(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every leaf command of the tree ``tht --help`` shows, as its words."""
    out = []
    for name, command in sorted(subcommands(group).items()):
        if isinstance(command, click.Group):
            out += command_paths(command, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


@dataclass(frozen=True)
class Variant:
    name: str
    env: dict[str, str] = field(default_factory=dict)
    columns: int = 80
    stdin: str = "terminal"


VARIANTS = (
    Variant("plain"),
    Variant("TERM=dumb", {"TERM": "dumb"}),
    Variant("NO_COLOR", {"NO_COLOR": "1"}),
    Variant("20 columns", {"COLUMNS": "20"}, columns=20),
    Variant("C locale", {"LANG": "C", "LC_ALL": "C"}),
    Variant("stdin closed", stdin="closed"),
)


@dataclass
class Setting:
    """What the arguments of a command name in one workspace copy."""

    ws: Path
    t: Templates

    def pending(self) -> tuple[str, str]:
        return self.t.pending()


Args = Callable[[Setting], list[str]]


def _decide(s: Setting) -> list[str]:
    source, revision = s.pending()
    return ["--source-id", source, "--revision", revision, "--decision", "replace"]


def _migrate(s: Setting) -> list[str]:
    legacy = s.ws / "legacy-v3"
    if not legacy.exists():  # migration runs only where Git keeps the legacy tree
        shutil.copytree(REPO / "fixtures/legacy/v3", legacy)
        subprocess.run(["git", "init", "-q", "--template=", str(legacy)], check=True)
    return [str(legacy)]


def _eval(s: Setting) -> list[str]:
    questions = s.ws / "questions.yaml"
    questions.write_text(
        f'questions:\n  - question: What is a glossary term?\n    expected: ["{s.t.present}"]\n'
    )
    return [str(questions), "--mode", "bm25"]


def _dbt(s: Setting) -> list[str]:
    imports = s.ws / "imports/dbt"
    if not imports.exists():
        shutil.copytree(REPO / "fixtures/imports/dbt", imports)
    return ["--format", "dbt", "imports/dbt"]


WAREHOUSE = ["--catalog", "ddl", "--ddl", str(REPO / "fixtures/warehouse")]
# The arguments of every command (an empty list: none needed), and which commands write:
# a writer runs on a fresh copy for each of its two runs.
ARGS: dict[tuple[str, ...], Args] = {
    ("config", "show"): lambda s: [],
    ("evidence", "fmt"): lambda s: ["evidence/curated"],
    ("evidence", "migrate"): _migrate,
    ("evidence", "validate"): lambda s: ["evidence/curated"],
    ("workspace", "new"): lambda s: [str(s.ws / "new-ws"), "--id", "fresh", "--language", "en"],
    ("workspace", "evidence", "catalog", "diff"): lambda s: WAREHOUSE,
    ("workspace", "evidence", "check"): lambda s: WAREHOUSE,
    ("workspace", "evidence", "cite-check"): lambda s: [
        *("--cited", s.t.present),
        *("--retrieved", s.t.present),
    ],
    ("workspace", "evidence", "consolidate"): lambda s: [],
    ("workspace", "evidence", "decide"): _decide,
    ("workspace", "evidence", "diff"): lambda s: [],
    ("workspace", "evidence", "eval"): _eval,
    ("workspace", "evidence", "export"): lambda s: [],
    ("workspace", "evidence", "git-commands"): lambda s: [],
    ("workspace", "evidence", "init"): lambda s: [],
    ("workspace", "evidence", "log"): lambda s: [],
    ("workspace", "evidence", "recover"): lambda s: [],
    ("workspace", "evidence", "refresh"): lambda s: [],
    ("workspace", "evidence", "report"): lambda s: ["--html", "review.html"],
    ("workspace", "evidence", "restore"): lambda s: [s.t.deleted],
    ("workspace", "evidence", "review", "resolve"): lambda s: [s.t.present, "--note", "seen"],
    ("workspace", "evidence", "search"): lambda s: ["admission ward"],
    ("workspace", "evidence", "show"): lambda s: [s.t.present],
    ("workspace", "evidence", "sources", "add"): _dbt,
    ("workspace", "evidence", "sources", "list"): lambda s: [],
    ("workspace", "evidence", "sources", "retract"): lambda s: [
        s.pending()[0],
        "--note",
        "withdrawn",
    ],
    ("workspace", "evidence", "sources", "show"): lambda s: [s.pending()[0]],
    ("workspace", "evidence", "status"): lambda s: [],
    ("workspace", "evidence", "validate"): lambda s: [],
    ("workspace", "evidence", "verify"): lambda s: [],
}
# Commands other branches add (issue 33's publish, serve): listed here so that the merge
# keeps the table whole; an entry counts only while its command is in the tree.
LATER: dict[tuple[str, ...], Args] = {
    ("workspace", "evidence", "publish"): lambda s: [
        *("--format", "jsonl"),
        *("--output", "published.jsonl"),
    ],
    ("workspace", "evidence", "serve"): lambda s: ["--transport", "stdio"],
}
ARGS.update({path: args for path, args in LATER.items() if path in command_paths()})
# stdin as a command reads it, whatever the variant: the stdio server serves until its
# input ends, so it is given an empty one.
STDIN = {("workspace", "evidence", "serve"): "null"}
READERS = {
    ("config", "show"),
    ("evidence", "validate"),
    ("workspace", "evidence", "cite-check"),
    ("workspace", "evidence", "diff"),
    ("workspace", "evidence", "git-commands"),
    ("workspace", "evidence", "log"),
    ("workspace", "evidence", "show"),
    ("workspace", "evidence", "sources", "list"),
    ("workspace", "evidence", "sources", "show"),
    ("workspace", "evidence", "status"),
    ("workspace", "evidence", "validate"),
    ("workspace", "evidence", "verify"),
}


def test_the_table_names_every_command_of_the_tree() -> None:
    tree = command_paths()
    assert len(tree) >= 30, tree
    assert sorted(ARGS) == tree, set(ARGS) ^ set(tree)
    assert set(ARGS) >= READERS


def run_pair(path: tuple[str, ...], variant: Variant, t: Templates, scratch: Path) -> Ran:
    """``path`` piped and at a terminal under ``variant`` on identical copies; checks
    what they print and returns the terminal run."""
    shared = scratch / "shared"
    if path in READERS and not shared.exists():
        copy(t.ready, shared)
    ws = shared if path in READERS else scratch / "run"
    argv: list[str] = []
    for terminal in (False, True):
        if path not in READERS:
            copy(t.ready, ws)
        argv = [*path, *ARGS[path](Setting(ws, t))]
        stdin = STDIN.get(path, variant.stdin)
        if terminal:
            tty = at_terminal(argv, ws, variant.env, stdin=stdin, columns=variant.columns)
        else:
            pipe = piped(argv, ws, variant.env, stdin=stdin)
    where = f"[{variant.name}] {tty.where()}\n--- piped ---\n{pipe.where()}"
    assert "Traceback" not in tty.stdout + tty.stderr, where
    assert tty.exit == pipe.exit != 70, where
    assert tty.stdout == pipe.stdout, where
    assert without_progress(tty.stderr) == pipe.stderr, where
    return tty


def sweep(t: Templates, scratch: Path, offset: int) -> dict[str, list[str]]:
    """Every command once, variant ``(n + offset) % len(VARIANTS)`` for the n-th; returns
    the commands run under each variant, those that drew a bar marked ``*``."""
    ran: dict[str, list[str]] = {}
    exits: dict[str, int] = {}
    for n, path in enumerate(command_paths()):
        variant = VARIANTS[(n + offset) % len(VARIANTS)]
        started = time.monotonic()
        tty = run_pair(path, variant, t, scratch)
        name = " ".join(path)
        exits[name] = tty.exit
        drawn = "*" if progress_drawn(tty.stderr) else ""
        ran.setdefault(variant.name, []).append(name + drawn)
        print(
            f"{t.units} units [{variant.name}] {name}{drawn}: exit {tty.exit}, "
            f"{time.monotonic() - started:.1f} s for both runs"
        )
    assert sum(len(names) for names in ran.values()) == len(ARGS)
    return ran


@pytest.mark.timeout(1200)  # 60 runs on LARGE units on a busy 2-core machine
@pytest.mark.parametrize("units, offset", [(TINY, 3), (LARGE, 0)])
def test_every_command_at_a_terminal(
    units: int, offset: int, templates: Callable[[int], Templates], tmp_path: Path
) -> None:
    ran = sweep(templates(units), tmp_path, offset)
    assert set(ran) == {v.name for v in VARIANTS}, ran
    assert min(len(names) for names in ran.values()) >= len(ARGS) // len(VARIANTS), ran
    bars = [name for names in ran.values() for name in names if name.endswith("*")]
    # A dumb terminal cannot redraw a line: never a bar there.  Past the threshold the
    # scanning commands draw one under every other variant (validate, consolidate...).
    assert not any(name.endswith("*") for name in ran["TERM=dumb"]), ran
    if units == TINY:  # below the scans' threshold; refresh shows any fetch
        assert set(bars) <= {"workspace evidence refresh*"}, f"bars for {TINY} units: {bars}"
    else:
        assert len(bars) >= 4, ran
