"""docs/sources.md is tested like code, with the conventions of the project's docs tests.

``yaml`` blocks name their schema on the first line (``# workspace.yaml``,
``# installation descriptor``); ``json`` blocks parse, and validate against
the schema a preceding ``<!-- schema: NAME -->`` names; ``sh`` blocks run with
``bash -euo pipefail`` in a fresh copy of the fixture workspace and exit 0
unless ``<!-- exit: N -->`` precedes them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import load
from evidence_tool.workspace.descriptor import validate_descriptor

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "sources.md"
MARKER = re.compile(r"<!--\s*(exit|schema):\s*(\S+?)\s*-->")
HEADERS = {
    "# workspace.yaml": "workspace.schema.json",
    "# installation descriptor": "installation.schema.json",
}


def _blocks() -> list[tuple[int, str, str, tuple[str, str] | None]]:
    """(line, language, text, marker) of every fenced block."""
    source = DOC.read_text(encoding="utf-8")
    lines = source.split("\n")
    out = []
    for tok in MarkdownIt("commonmark").parse(source):
        if tok.type != "fence" or tok.map is None:
            continue
        prev = tok.map[0] - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        match = MARKER.fullmatch(lines[prev].strip()) if prev >= 0 else None
        marker = (match.group(1), match.group(2)) if match else None
        out.append((tok.map[0] + 1, tok.info.split()[0], tok.content, marker))
    return out


BLOCKS = _blocks()


def _of(lang: str) -> list[tuple[int, str, str, tuple[str, str] | None]]:
    return [b for b in BLOCKS if b[1] == lang]


def test_the_page_covers_every_kind_of_example() -> None:
    assert _of("yaml") and _of("json") and len(_of("sh")) >= 5
    for command in ("refresh", "decide", "--retry", "sources list", "sources show", "retract"):
        assert command in DOC.read_text(), command


@pytest.mark.parametrize("block", _of("yaml"), ids=lambda b: f"line-{b[0]}")
def test_yaml_examples_match_their_schema(block: tuple) -> None:
    line, _, text, _ = block
    header = text.split("\n", 1)[0].rstrip()
    assert header in HEADERS, f"line {line}: a YAML example must start with {sorted(HEADERS)}"
    validate_descriptor(load(text).value, HEADERS[header], f"docs/sources.md:{line}")


@pytest.mark.parametrize("block", _of("json"), ids=lambda b: f"line-{b[0]}")
def test_json_examples_parse_and_match_their_schema(block: tuple) -> None:
    import jsonschema

    line, _, text, marker = block
    value = json.loads(text)
    if marker and marker[0] == "schema":
        schema = load_schema(f"{marker[1]}.schema.json")
        errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(value))
        assert not errors, f"line {line}: {[e.message for e in errors]}"


@pytest.mark.parametrize("block", _of("sh"), ids=lambda b: f"line-{b[0]}")
def test_shell_examples_run(block: tuple, tmp_path: Path) -> None:
    line, _, text, marker = block
    ws = tmp_path / "ws"
    shutil.copytree(
        REPO / "fixtures" / "workspace", ws, ignore=shutil.ignore_patterns(".evidence-cache")
    )
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),  # this checkout, even where the venv points elsewhere
        "THT_ACTOR": "docs",
        "TMPDIR": str(tmp_path),
    }
    env.pop("THT_INSTALLATION", None)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", text],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    expected = int(marker[1]) if marker and marker[0] == "exit" else 0
    assert proc.returncode == expected, (
        f"line {line}: exit {proc.returncode}, expected {expected}\n{text}\n"
        f"--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    )
