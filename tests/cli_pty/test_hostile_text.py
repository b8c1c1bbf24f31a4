"""Terminal and CI-log injection (issue 27, G6): no byte of a title, a body, a file name
or an argument reaches a text channel as a control character.

ESC and BEL retitle or clear a terminal, a newline in a file name starts a line of its own
(``::error ...`` is then a GitHub Actions annotation), a carriage return overwrites what
came before, U+202E reverses what follows.  Every text output escapes them (``\\x1b``,
``\\n``, ``\\u202e``); ``--json`` keeps the exact value (JSON escapes it).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from ptyrun import Ran, at_terminal, piped

from evidence_tool.errors import Diagnostic, EvidenceWarning

REPO = Path(__file__).resolve().parents[2]
# What a terminal or a log reader acts on: C0 but tab and newline, DEL, C1, the line and
# paragraph separators and the bidirectional overrides and isolates.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE_NAME = "q\r\n::warning file=ci.yml,line=3::owned\x1b[2J\x07.md"
HOSTILE_TITLE = "Bed \x1b]0;owned\x07days\x1b[31m \x9b2J \u202egnp.exe\u2028::error::x"


def clean(ran: Ran, annotations: int = 0) -> None:
    """No control character reaches stdout or stderr, and no line is a workflow command
    but the ``annotations`` the tool means to write (one per finding, ``--format github``)."""
    for name, text in (("stdout", ran.stdout), ("stderr", ran.stderr)):
        found = CONTROL.search(text)
        assert found is None, f"{name} holds {found.group()!r}: {ran.where()}"
    commands = [line for line in (ran.stdout + ran.stderr).split("\n") if line.startswith("::")]
    assert len(commands) == annotations, f"workflow commands: {commands}"


def findings(argv: list[str], ws: Path) -> int:
    """How many findings ``argv`` reports (its --json run)."""
    envelope = json.loads(piped([*argv, "--json"], ws).stdout)
    return len(envelope["errors"]) + len(envelope["warnings"])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture workspace with a unit whose title is hostile (consolidated) and an
    invalid curated file whose name is."""
    ws = tmp_path_factory.mktemp("hostile") / "ws"
    shutil.copytree(REPO / "fixtures/workspace", ws)
    unit = ws / "evidence/curated/glossary/drg.md"
    text = unit.read_text(encoding="utf-8")
    unit.write_text(text.replace("\n# ", f"\n# {HOSTILE_TITLE} ", 1), encoding="utf-8")
    body = "One day \x1b[8mhidden\x1b[0m in a bed.\n"
    text = unit.read_text(encoding="utf-8")
    unit.write_text(text.replace("\n## Definition\n\n", f"\n## Definition\n\n{body}", 1))
    done = piped(["workspace", "evidence", "consolidate"], ws)
    assert done.exit == 0, done.where()
    (ws / "evidence/curated/glossary" / HOSTILE_NAME).write_text("not a unit\n")
    return ws


TEXT_COMMANDS = {
    "validate": ["workspace", "evidence", "validate"],
    "validate-github": ["workspace", "evidence", "validate", "--format", "github"],
    "validate-paths": ["evidence", "validate", "evidence/curated"],
    "validate-paths-github": ["evidence", "validate", "evidence/curated", "--format", "github"],
    "show": ["workspace", "evidence", "show", "evidence:clinical:drg"],
    "search": ["workspace", "evidence", "search", "bed days"],
    "status": ["workspace", "evidence", "status"],
    "consolidate": ["workspace", "evidence", "consolidate"],
    # Arguments echoed back in errors: an unknown id, a missing path (click's message).
    "unknown-id": ["workspace", "evidence", "show", "evidence:x\x1b]0;owned\x07"],
    "missing-path": ["evidence", "validate", "no\x1b[2Jsuch\n::error::dir"],
}


@pytest.mark.parametrize("name", sorted(TEXT_COMMANDS))
def test_text_channels_escape_control_characters(name: str, hostile: Path) -> None:
    argv = TEXT_COMMANDS[name]
    ran = piped(argv, hostile)
    assert ran.exit != 70 and (ran.exit != 2 or name in ("missing-path", "unknown-id")), ran
    assert "Traceback" not in ran.stderr, ran.where()
    if "github" in argv:
        plain = [a for a in argv if a not in ("--format", "github")]
        expected = findings(plain, hostile)
        assert expected >= 1, "the hostile file is reported"
        clean(ran, expected)
    else:
        clean(ran)


def test_the_escaped_forms_still_say_what_is_there(hostile: Path) -> None:
    ran = piped(["workspace", "evidence", "validate"], hostile)
    assert "q\\r\\n::warning file=ci.yml,line=3::owned\\x1b[2J\\x07.md" in ran.stdout, ran.where()
    shown = piped(["workspace", "evidence", "show", "evidence:clinical:drg"], hostile)
    assert "Bed \\x1b]0;owned\\x07days" in shown.stdout and "\\u202e" in shown.stdout, shown.where()
    assert "One day \\x1b[8mhidden" in shown.stdout, shown.where()


def test_json_keeps_the_exact_bytes(hostile: Path) -> None:
    ran = piped(["workspace", "evidence", "validate", "--json"], hostile)
    paths = {e["path"] for e in json.loads(ran.stdout)["errors"]}
    assert f"evidence/curated/glossary/{HOSTILE_NAME}" in paths


def test_at_a_terminal_too(hostile: Path) -> None:
    for name in ("validate", "show", "unknown-id"):
        clean(at_terminal(TEXT_COMMANDS[name], hostile))


def test_a_diagnostic_and_a_warning_render_one_printable_line() -> None:
    d = Diagnostic("E108", "bad name\x1b[2J", "a/x\n::error file=e.md::y\x9b.md", 3, 1)
    assert CONTROL.search(str(d)) is None and "\n" not in str(d), str(d)
    assert str(d).startswith("a/x\\n::error file=e.md::y\\x9b.md:3:1: E108 bad name\\x1b[2J")
    w = EvidenceWarning("w\x07", "p\r.md")
    assert w.message == "w\x07", "the value itself is kept: only its rendering escapes"
