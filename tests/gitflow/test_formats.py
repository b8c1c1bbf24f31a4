"""``--format github`` (workflow commands) and ``--format sarif`` (SARIF 2.1.0) of validate."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest
from gitflow_helpers import invoke

from evidence_tool.cli.reporters.github_reporter import (
    escape_data,
    escape_property,
    workflow_command,
)
from evidence_tool.errors import CODES

SCHEMA = json.loads(
    (Path(__file__).parent / "sarif-2.1.0-subset.schema.json").read_text(encoding="utf-8")
)
PROPERTY = r"(?:file|line|col|endLine|endColumn|title)=[^,:\r\n]*"
WORKFLOW_COMMAND = re.compile(
    rf"::(error|warning|notice)(?: ({PROPERTY}(?:,{PROPERTY})*))?::([^\r\n]*)"
)
# A file whose name needs escaping in a property (',' and ':') and gets E108.
ODD = "evidence/curated/domain/odd,name:1.md"


def unescape(text: str) -> str:
    for code, char in (("%3A", ":"), ("%2C", ","), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(code, char)
    return text


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace under the current folder with three broken files."""
    ws = tmp_path / "ws"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures/workspace", ws)
    drg = ws / "evidence/curated/glossary/drg.md"
    drg.write_text(
        drg.read_text(encoding="utf-8").replace("kind: glossary", "kind: glosary"), encoding="utf-8"
    )
    shutil.copy(ws / "evidence/curated/domain/patient-merge.md", ws / ODD)
    (ws / "evidence/curated/enum/lab-result-flag.md").write_text(
        "no frontmatter\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    return ws


def validate(*args: str) -> tuple[int, str]:
    result = invoke(["workspace", "evidence", "validate", *args])
    return result.exit_code, result.stdout


def test_escaping_follows_the_actions_toolkit() -> None:
    assert escape_data("50% a\r\nb: c, d") == "50%25 a%0D%0Ab: c, d"
    assert escape_property("50% a\r\nb: c, d") == "50%25 a%0D%0Ab%3A c%2C d"
    assert workflow_command("error", "m", file=None, line=None) == "::error::m"
    assert (
        workflow_command("error", "a:b", file="x,y:z", line=3)
        == "::error file=x%2Cy%3Az,line=3::a:b"
    )


def test_github_format_is_one_workflow_command_per_finding(broken: Path) -> None:
    code, out = validate("--workspace-root", "ws", "--format", "github")
    assert code == 1
    _, as_json = validate("--workspace-root", "ws", "--json")
    expected = json.loads(as_json)["errors"]
    lines = out.splitlines()
    assert len(lines) == len(expected) >= 3
    for line, error in zip(lines, expected, strict=True):
        match = WORKFLOW_COMMAND.fullmatch(line)
        assert match, line
        props = dict(p.split("=", 1) for p in match.group(2).split(","))
        assert match.group(1) == "error"
        assert props["title"] == error["code"]
        assert unescape(props["file"]) == f"ws/{error['path']}"
        assert int(props.get("line", 0)) == (error["line"] or 0)
        assert int(props.get("col", 0)) == ((error["line"] and error["column"]) or 0)
        message = unescape(match.group(3))
        assert message.startswith(error["message"]) and f"Fix: {error['hint']}" in message
    assert any("odd%2Cname%3A1.md" in line for line in lines)


def test_github_format_of_a_raised_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors that stop the command (E601 here) take the same route as findings."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    # A workspace (it has its descriptor) whose curated tree is not mounted.
    (tmp_path / "ws/workspace.yaml").write_bytes(
        (Path(__file__).resolve().parents[2] / "fixtures/workspace/workspace.yaml").read_bytes()
    )
    code, out = validate("--workspace-root", "ws", "--format", "github")
    assert code == 6
    [line] = out.splitlines()
    assert re.fullmatch(r"::error file=ws/evidence/curated,title=E601::[^\r\n]+", line), line


def sarif_log(*args: str) -> tuple[int, dict[str, Any]]:
    code, out = validate(*args, "--format", "sarif")
    return code, json.loads(out)


def test_sarif_validates_against_the_schema(broken: Path) -> None:
    code, log = sarif_log("--workspace-root", "ws")
    assert code == 1
    validator = jsonschema.Draft4Validator(
        SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]
    assert not problems, problems
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(CODES)
    assert all(r["shortDescription"]["text"] == CODES[r["id"]].title for r in rules)
    _, as_json = validate("--workspace-root", "ws", "--json")
    expected = json.loads(as_json)["errors"]
    assert len(run["results"]) == len(expected)
    for result, error in zip(run["results"], expected, strict=True):
        assert result["level"] == "error"
        assert result["ruleId"] == error["code"] == rules[result["ruleIndex"]]["id"]
        assert result["message"]["text"] == error["message"]
        physical = result["locations"][0]["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert urlsplit(uri).scheme == "" and " " not in uri
        assert unquote(uri) == f"ws/{error['path']}"
        if error["line"]:
            assert physical["region"]["startLine"] == error["line"]
        else:
            assert "region" not in physical
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file://") and base.endswith("/")


def test_sarif_of_a_valid_workspace_has_no_results(workspace: Path) -> None:
    code, log = sarif_log("--workspace-root", str(workspace))
    assert code == 0
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]
    assert not list(jsonschema.Draft4Validator(SCHEMA).iter_errors(log))


def test_evidence_validate_takes_the_formats_too(broken: Path) -> None:
    file = f"ws/{ODD}"
    result = invoke(
        ["evidence", "validate", file, "ws/evidence/curated/glossary/drg.md", "--format", "github"]
    )
    assert result.exit_code == 1
    assert all(WORKFLOW_COMMAND.fullmatch(line) for line in result.stdout.splitlines())
    result = invoke(["evidence", "validate", "ws", "--format", "sarif"])
    log = json.loads(result.stdout)
    assert not list(jsonschema.Draft4Validator(SCHEMA).iter_errors(log))
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"E101", "E106"}


def test_json_is_an_alias_of_format_json(broken: Path) -> None:
    assert validate("--workspace-root", "ws", "--json") == validate(
        "--workspace-root", "ws", "--format", "json"
    )
    code, out = validate("--workspace-root", "ws", "--json", "--format", "sarif")
    assert code == 2
    assert json.loads(out)["errors"][0]["code"] == "E901"
    code, out = validate("--workspace-root", "ws", "--format", "json", "--format", "nope")
    assert code == 2 and json.loads(out)["errors"][0]["code"] == "E901"
