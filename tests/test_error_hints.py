"""Issue 15, Messages: every code's hint fits its causes, and docs/errors.md agrees.

Two halves:

- generic, over every code in ``CODES`` (codes added later are picked up without
  editing this file): the **Fix.** paragraph of the code's docs/errors.md section
  opens with the tool's hint, and everything the hint names exists: each
  ``'tht ...'`` command, each ``--option`` (on that command, or on some command),
  each ``docs/*.md`` page;
- by cause: the causes the issue found with a hint that did not fit (an unknown
  unit id, a missing search index, review items on a refiner proposal, a bad key in
  workspace.yaml) now carry a code whose hint is about them, and the hint shown is
  the documented one.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from cli_runner import CliResult, invoke, record, subcommands, tht
from test_docs import _error_sections, _warning_sections

from evidence_tool.cli.main import cli
from evidence_tool.errors import CODES, WARNINGS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def _commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], click.Command]:
    out: dict[tuple[str, ...], click.Command] = {}
    for name, cmd in subcommands(group).items():
        out[(*path, name)] = cmd
        if isinstance(cmd, click.Group):
            out.update(_commands(cmd, (*path, name)))
    return out


COMMANDS = _commands(cli)
ALL_OPTIONS = {
    opt for cmd in [cli, *COMMANDS.values()] for p in cmd.params for opt in getattr(p, "opts", [])
} | {"--help"}


def _named_commands(hint: str) -> list[tuple[str, ...]]:
    """Command paths quoted in a hint: 'tht workspace evidence review resolve ID --note ...'."""
    out = []
    for quoted in re.findall(r"'tht ([^']+)'", hint):
        words = []
        for word in quoted.split():
            if (*words, word) not in COMMANDS:
                break
            words.append(word)
        out.append(tuple(words) if words else (quoted.split()[0],))
    return out


def test_the_code_table_is_not_empty() -> None:
    assert len(CODES) >= 40  # the sweep below must not pass on zero cases


# Warnings too (issue 34 item 4): each has its fix in WARNINGS and in the docs.
HINTS = {**{c: i.fix for c, i in CODES.items()}, **{c: i.fix for c, i in WARNINGS.items()}}


@pytest.mark.parametrize("code", sorted(HINTS))
def test_the_docs_fix_paragraph_opens_with_the_hint(code: str) -> None:
    sections = _warning_sections() if code.startswith("W") else _error_sections()
    [(_title, body)] = sections[code]
    fix = body.split("**Fix.** ", 1)
    assert len(fix) == 2, f"{code}: docs/errors.md has no **Fix.** paragraph"
    # Compared as words: a paragraph may wrap its lines anywhere.
    assert " ".join(fix[1].split()).startswith(" ".join(HINTS[code].split())), (
        f"{code}: the **Fix.** paragraph must open with the tool's hint {HINTS[code]!r}"
    )


@pytest.mark.parametrize("code", sorted(HINTS))
def test_everything_a_hint_names_exists(code: str) -> None:
    hint = HINTS[code]
    for path in _named_commands(hint):
        assert path in COMMANDS, f"{code}: the hint names 'tht {' '.join(path)}', no such command"
    for quoted in re.findall(r"'tht ([^']+)'", hint):
        words = quoted.split()
        cmd_path = max((p for p in COMMANDS if tuple(words[: len(p)]) == p), key=len)
        own = {o for p in COMMANDS[cmd_path].params for o in getattr(p, "opts", [])}
        for option in re.findall(r"(--[a-z][a-z-]*)", quoted):
            assert option in own, f"{code}: 'tht {' '.join(cmd_path)}' has no {option}"
    for option in re.findall(r"(?<![\w'])(--[a-z][a-z-]*)", re.sub(r"'(tht|git) [^']+'", "", hint)):
        assert option in ALL_OPTIONS, f"{code}: the hint names {option}, which no command has"
    for page in re.findall(r"docs/([\w-]+\.md)", hint):
        assert (DOCS / page).is_file(), f"{code}: the hint names docs/{page}, which is missing"


# -- by cause ---------------------------------------------------------------------------


def _error(result: CliResult, code: str) -> dict[str, object]:
    [error] = result.json["errors"]
    assert error["code"] == code, result.stdout
    assert error["hint"] == CODES[code].fix
    assert result.exit_code == CODES[code].exit_code
    return error  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("args", "near"),
    [
        (("show", "evidence:clinical:dgr"), "evidence:clinical:drg"),
        (("restore", "evidence:clinical:ward"), None),
        (("review", "resolve", "evidence:clinical:sdo", "--note", "checked"), None),
        (("show", "evidence:nowhere:at-all"), None),
    ],
)
def test_an_unknown_unit_id_is_E904_not_a_usage_error(
    workspace: Path, args: tuple[str, ...], near: str | None
) -> None:
    assert tht(workspace, "init").exit_code == 0

    error = _error(tht(workspace, *args), "E904")

    assert "--help" not in str(error["hint"])
    if near:
        assert f"did you mean '{near}'" in str(error["message"])


def test_a_missing_search_index_names_the_step_to_run_first(workspace: Path) -> None:
    error = _error(tht(workspace, "search", "ricoveri"), "E905")

    assert "tht workspace evidence consolidate" in str(error["message"])
    assert "--help" not in str(error["hint"])


def test_a_retry_without_a_saved_decision_names_decide(workspace: Path) -> None:
    assert tht(workspace, "refresh").exit_code == 0
    sid = record(workspace, "fs:evidence/incoming/ward-codes.md")["source_id"]

    error = _error(tht(workspace, "decide", "--source-id", sid[:8], "--retry"), "E905")

    assert "tht workspace evidence decide' with --revision and --decision" in str(error["message"])


def test_review_items_on_a_proposal_get_a_hint_about_the_proposal(workspace: Path) -> None:
    # An Italian draft that claims the id of a manual unit: an ownership conflict.
    taken = (workspace / "evidence/curated/glossary/numero-nosologico.md").read_text()
    (workspace / "evidence/incoming/nosologico.md").write_text(taken.replace("# ", "# Bozza: ", 1))
    assert tht(workspace, "refresh").exit_code == 0
    rec = record(workspace, "fs:evidence/incoming/nosologico.md")
    assert rec["comparison"]["review_items"]

    result = tht(
        workspace, "decide", "--source-id", rec["source_id"], "--revision",
        rec["comparison"]["revision"], "--decision", "replace",
    )  # fmt: skip

    error = _error(result, "E140")
    assert "proposal" in str(error["hint"])
    assert "decide keep" in str(error["hint"]) or "--decision keep" in str(error["hint"])


def test_a_bad_key_in_workspace_yaml_is_not_sent_to_the_activation_docs(workspace: Path) -> None:
    descriptor = workspace / "workspace.yaml"
    descriptor.write_text(descriptor.read_text().replace("default_language:", "default_lang:"))

    error = _error(
        invoke(["workspace", "evidence", "validate", "--workspace-root", str(workspace), "--json"]),
        "E902",
    )

    assert "default_lang" in str(error["message"])
    assert "activation.md" not in str(error["hint"])
    assert "workspace.yaml" in str(error["hint"])


def test_no_hint_is_written_out_beside_the_code_table() -> None:
    # A hint spelled out elsewhere (the click usage-error envelope once was) drifts from CODES.
    import ast

    found = []
    files = sorted((REPO / "evidence_tool").rglob("*.py"))
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and key.value == "hint"
                        and isinstance(value, (ast.Constant, ast.JoinedStr))
                    ):
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert len(files) > 50
    assert not found, f"hints written out instead of taken from CODES: {found}"
