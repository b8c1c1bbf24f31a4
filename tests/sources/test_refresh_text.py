"""refresh's text ends with decide commands that work when pasted (issue 15, output people read).

The text used to end with ``decide ... --source-id ID --revision REV``: placeholders the
reader had to fill in from the lines above.  Now every compared source gets its own
commands, with its real id and comparison revision, shell-quoted like the review page's.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from source_helpers import LAB, WARD, invoke, record, tht


def _text_refresh(ws: Path, *args: str) -> list[str]:
    result = invoke(["workspace", "evidence", "refresh", "--workspace-root", str(ws), *args])
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout.splitlines()


def _commands(lines: list[str]) -> list[list[str]]:
    return [shlex.split(line) for line in lines if line.lstrip().startswith("tht ")]


def test_the_printed_decide_commands_name_each_source_and_work(tmp_path: Path) -> None:
    # A folder name with a space: the commands must quote the workspace root.
    ws = tmp_path / "ward workspace"
    shutil.copytree(Path(__file__).parents[2] / "fixtures/workspace", ws)

    lines = _text_refresh(ws)

    assert not any("ID" in line.split() or "REV" in line.split() for line in lines), lines
    report = [line for line in lines if not line.lstrip().startswith("tht ")]
    assert not any("[" in line or "'" in line for line in report), report  # no reprs
    commands = _commands(lines)
    expected = {
        (record(ws, loc)["source_id"], record(ws, loc)["comparison"]["revision"], decision)
        for loc in (LAB, WARD)
        for decision in ("keep", "replace")
    }
    named = set()
    for argv in commands:
        assert argv[:4] == ["tht", "workspace", "evidence", "decide"], argv
        opts = dict(zip(argv[4::2], argv[5::2], strict=True))
        assert opts["--workspace-root"] == str(ws)
        named.add((opts["--source-id"], opts["--revision"], opts["--decision"]))
    assert named == expected and len(commands) == 4

    # Pasted as printed: keep the ward codes, adopt the lab handbook.
    ward_id = record(ws, WARD)["source_id"]
    lab_id = record(ws, LAB)["source_id"]
    for argv in commands:
        opts = dict(zip(argv[4::2], argv[5::2], strict=True))
        if (opts["--source-id"], opts["--decision"]) in ((ward_id, "keep"), (lab_id, "replace")):
            done = invoke([*argv[1:], "--json"])
            assert done.exit_code == 0, done.stdout
    assert record(ws, WARD)["comparison"] is None and record(ws, LAB)["comparison"] is None
    assert tht(ws, "verify").exit_code == 0


def test_a_dry_run_prints_no_decide_command(workspace: Path) -> None:
    lines = _text_refresh(workspace, "--dry-run")
    assert sum(line.startswith("compared") for line in lines) == 2, lines
    assert _commands(lines) == [] and lines[-1] == "dry run: nothing written"


def test_sources_show_text_has_no_reprs(tmp_path: Path) -> None:
    """A source without a title, not suppressed: '-' and 'no', never None or False."""
    ws = tmp_path / "ward workspace"
    shutil.copytree(Path(__file__).parents[2] / "fixtures/workspace", ws)
    _text_refresh(ws)
    shown = 0
    for loc in (LAB, WARD):
        sid = record(ws, loc)["source_id"]
        result = invoke(
            ["workspace", "evidence", "sources", "show", sid, "--workspace-root", str(ws)]
        )
        assert result.exit_code == 0, result.stdout
        words = result.stdout.replace(":", " ").split()
        assert not {"None", "False", "True"} & set(words), result.stdout
        assert "suppressed: no" in result.stdout or "suppressed: yes" in result.stdout
        shown += 1
    assert shown == 2
