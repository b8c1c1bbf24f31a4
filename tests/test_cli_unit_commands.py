"""``tht evidence validate|fmt`` and ``tht workspace evidence validate`` through the real CLI.

In-process through ``evidence_tool.cli.main.main`` (the ``cli`` fixture), with
stdout (the result, or the one JSON object) and stderr (hints, warnings)
asserted apart; one subprocess test runs the installed ``tht`` script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from cli_runner import subcommands
from helpers import codes, envelope

from evidence_tool.cli.main import cli as tht_group
from evidence_tool.errors import CODES
from evidence_tool.unit import parse, render

REPO = Path(__file__).resolve().parent.parent
FIXTURE_WORKSPACE = REPO / "fixtures" / "workspace"
BIN = Path(sys.executable).parent
N_FIXTURE_UNITS = len(list((FIXTURE_WORKSPACE / "evidence" / "curated").glob("*/*.md")))

Cli = Callable[[list[str]], Any]

VALID_ICU = """\
---
schema_version: 4
id: evidence:clinical:icu
kind: glossary
language: en
purposes: [disambiguation]
---

# ICU

## Definition

A ward with discipline `049` in `admin.wards.discipline_code`.

## Synonyms

- intensive care unit
- terapia intensiva
"""

# The same unit, valid but not canonical: key order, block list, blank lines, field order,
# an unnecessary JSON string.
NONCANONICAL_ICU = """\
---
id: evidence:clinical:icu
schema_version: 4
kind: glossary
language: en
purposes:
  - disambiguation
---
# ICU
## Synonyms
- intensive care unit
- "terapia intensiva"
## Definition
A ward with discipline `049` in `admin.wards.discipline_code`.
"""

# A relative URL on line 13: E116.
BAD_URL = """\
---
schema_version: 4
id: evidence:reference:ward-map
kind: reference
language: en
purposes: [schema_linking]
---

# Ward map

## URL

/intranet/ward-map

## Label

Ward map

## Description

Where each ward is, by building and floor.
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# -- tht evidence validate ---------------------------------------------------------


def test_validate_fixture_workspace_json(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = cli(["evidence", "validate", "fixtures/workspace", "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    value = envelope(result)
    assert value["command"] == "evidence validate"
    assert value["errors"] == [] and value["warnings"] == []
    summary = value["result"]
    assert summary["files"] == summary["valid"] == N_FIXTURE_UNITS
    assert summary["invalid"] == 0
    assert sum(summary["by_kind"].values()) == N_FIXTURE_UNITS
    assert set(summary["by_kind"]) == {
        p.name for p in (FIXTURE_WORKSPACE / "evidence" / "curated").iterdir()
    }
    assert "Traceback" not in result.stderr


def test_invalid_file_is_reported_with_path_line_code_unit_and_hint(
    cli: Cli, tmp_path: Path
) -> None:
    bad = write(tmp_path / "ward-map.md", BAD_URL)
    good = write(tmp_path / "icu.md", VALID_ICU)
    result = cli(["evidence", "validate", str(good), str(bad), "--json"])
    assert result.exit_code == 1
    value = envelope(result)
    assert value["result"] == {"files": 2, "valid": 1, "invalid": 1, "by_kind": {"glossary": 1}}
    [error] = value["errors"]
    assert error == {
        "code": "E116",
        "message": error["message"],
        "path": str(bad),
        "line": 13,
        "column": 1,
        "unit_id": "evidence:reference:ward-map",
        "hint": CODES["E116"].fix,
    }
    assert "/intranet/ward-map" in error["message"]


def test_errors_are_sorted_by_path_then_line(cli: Cli, tmp_path: Path) -> None:
    # Two problems in b.md (lines 4 and 13), one in a.md: a.md first, then b.md by line.
    write(tmp_path / "a.md", BAD_URL.replace("evidence:reference:ward-map", "evidence:a"))
    write(
        tmp_path / "b.md",
        BAD_URL.replace("evidence:reference:ward-map", "evidence:b").replace(
            "kind: reference", "kind: reference\nkind: reference"
        ),
    )
    value = envelope(cli(["evidence", "validate", str(tmp_path), "--json"]))
    found = [(Path(e["path"]).name, e["line"], e["code"]) for e in value["errors"]]
    assert found == [("a.md", 13, "E116"), ("b.md", 5, "E103"), ("b.md", 14, "E116")]


def test_text_output_names_file_line_and_code(cli: Cli, tmp_path: Path) -> None:
    bad = write(tmp_path / "ward-map.md", BAD_URL)
    result = cli(["evidence", "validate", str(bad)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "1 file(s), 0 valid, 1 error(s)"
    assert lines[1].startswith(f"{bad}:13:1: E116 ")
    # The fix goes to stderr, so stdout stays the list of findings.
    assert f"fix E116: {CODES['E116'].fix}" in result.stderr
    assert "fix E116" not in result.stdout


def test_metadata_errors_point_at_the_offending_key(cli: Cli, tmp_path: Path) -> None:
    text = VALID_ICU.replace(
        "purposes: [disambiguation]\n", "purposes: [disambiguation]\ntitle: ICU\n"
    )
    bad = write(tmp_path / "icu.md", text)
    result = cli(["evidence", "validate", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:7:1: E104 " in result.stdout  # 'title:' is on file line 7


def test_a_missing_path_is_an_error_not_an_empty_success(cli: Cli, tmp_path: Path) -> None:
    value = envelope(cli(["evidence", "validate", str(tmp_path / "nope.md"), "--json"]))
    assert value["ok"] is False
    assert [e["path"] for e in value["errors"]] == [str(tmp_path / "nope.md")]


def test_a_plain_folder_means_every_md_file_below_it(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path / "drafts" / "deep" / "icu.md", VALID_ICU)
    write(tmp_path / "drafts" / "notes.txt", "not a unit")
    value = envelope(cli(["evidence", "validate", str(tmp_path / "drafts"), "--json"]))
    assert value["result"]["files"] == 1 and value["result"]["valid"] == 1


# -- tht evidence fmt ------------------------------------------------------------


def test_fmt_check_passes_on_the_fixture_workspace(cli: Cli, workspace: Path) -> None:
    before = tree_bytes(workspace)
    result = cli(["evidence", "fmt", "--check", str(workspace), "--json"])
    assert result.exit_code == 0, result.stdout
    value = envelope(result)
    assert value["result"] == {"checked": N_FIXTURE_UNITS, "changed": [], "check": True}
    assert tree_bytes(workspace) == before


def test_fmt_check_fails_on_a_non_canonical_file_and_changes_nothing(
    cli: Cli, workspace: Path
) -> None:
    icu = write(workspace / "evidence" / "curated" / "glossary" / "icu.md", NONCANONICAL_ICU)
    before = tree_bytes(workspace)
    result = cli(["evidence", "fmt", "--check", str(workspace), "--json"])
    assert result.exit_code == 1
    value = envelope(result)
    assert codes(value) == ["E117"]
    [error] = value["errors"]
    assert error["unit_id"] == "evidence:clinical:icu"
    assert Path(error["path"]).resolve() == icu.resolve()
    assert [Path(p).resolve() for p in value["result"]["changed"]] == [icu.resolve()]
    assert tree_bytes(workspace) == before  # byte for byte, every file


def test_fmt_check_text_output(cli: Cli, workspace: Path) -> None:
    icu = write(workspace / "evidence" / "curated" / "glossary" / "icu.md", NONCANONICAL_ICU)
    result = cli(["evidence", "fmt", "--check", str(icu)])
    assert result.exit_code == 1
    assert f"would reformat {icu}" in result.stdout
    assert f"{icu}: E117 " in result.stdout
    assert icu.read_text(encoding="utf-8") == NONCANONICAL_ICU


def test_fmt_rewrites_canonically_and_leaves_invalid_files_untouched(
    cli: Cli, workspace: Path
) -> None:
    curated = workspace / "evidence" / "curated"
    icu = write(curated / "glossary" / "icu.md", NONCANONICAL_ICU)
    bad = write(curated / "reference" / "ward-map.md", BAD_URL.replace("\n", "\r\n"))
    crlf = curated / "glossary" / "drg.md"
    crlf_text = crlf.read_bytes()
    write(crlf, crlf_text.replace(b"\n", b"\r\n"))
    before = tree_bytes(workspace)

    result = cli(["evidence", "fmt", str(workspace), "--json"])
    assert result.exit_code == 1  # the invalid file still needs correction
    value = envelope(result)
    assert codes(value) == ["E116"]
    assert sorted(Path(p).name for p in value["result"]["changed"]) == ["drg.md", "icu.md"]

    assert icu.read_text(encoding="utf-8") == VALID_ICU == render(parse(NONCANONICAL_ICU))
    assert parse(icu.read_bytes()).content_hash == parse(NONCANONICAL_ICU).content_hash
    assert crlf.read_bytes() == crlf_text  # CRLF -> LF, nothing else
    assert bad.read_bytes() == before["evidence/curated/reference/ward-map.md"]
    after = tree_bytes(workspace)
    changed = sorted(k for k in before if before[k] != after[k])
    assert changed == ["evidence/curated/glossary/drg.md", "evidence/curated/glossary/icu.md"]

    bad.unlink()
    assert cli(["evidence", "fmt", "--check", str(workspace)]).exit_code == 0


# -- tht workspace evidence validate -----------------------------------------------


def validate_ws(cli: Cli, root: Path) -> tuple[int, dict[str, Any]]:
    result = cli(["workspace", "evidence", "validate", "--workspace-root", str(root), "--json"])
    return result.exit_code, envelope(result)


def test_workspace_validate_fixture(cli: Cli, workspace: Path) -> None:
    exit_code, value = validate_ws(cli, workspace)
    assert exit_code == 0
    assert value["command"] == "workspace evidence validate"
    assert value["workspace"] == str(workspace)
    assert value["result"]["files"] == N_FIXTURE_UNITS


def test_workspace_validate_reports_layout_errors(cli: Cli, workspace: Path) -> None:
    curated = workspace / "evidence" / "curated"
    # A domain rule in the glossary folder.
    shutil.move(curated / "domain" / "patient-merge.md", curated / "glossary" / "patient-merge.md")
    # A file name outside [a-z0-9][a-z0-9._-]*.md (own id, so no E120 noise).
    write(curated / "glossary" / "Intensive Care.md", VALID_ICU)
    # A file directly under curated/ and one in a folder that is not a kind.
    write(curated / "loose.md", VALID_ICU.replace("clinical:icu", "clinical:loose"))
    write(curated / "rules" / "x.md", VALID_ICU.replace("clinical:icu", "clinical:x"))

    exit_code, value = validate_ws(cli, workspace)
    assert exit_code == 1
    assert sorted((e["path"], e["code"]) for e in value["errors"]) == [
        ("evidence/curated/glossary/Intensive Care.md", "E108"),
        ("evidence/curated/glossary/patient-merge.md", "E108"),
        ("evidence/curated/loose.md", "E108"),
        ("evidence/curated/rules/x.md", "E108"),
    ]
    moved = next(e for e in value["errors"] if e["path"].endswith("patient-merge.md"))
    assert "'domain'" in moved["message"] and moved["unit_id"] == "evidence:admin:patient-merge"


def test_workspace_validate_reports_duplicate_ids_naming_both_files(
    cli: Cli, workspace: Path
) -> None:
    curated = workspace / "evidence" / "curated"
    shutil.copy(curated / "glossary" / "drg.md", curated / "glossary" / "drg-weights.md")
    exit_code, value = validate_ws(cli, workspace)
    assert exit_code == 1
    [error] = value["errors"]
    assert error["code"] == "E120" and error["unit_id"] == "evidence:clinical:drg"
    both = {"evidence/curated/glossary/drg.md", "evidence/curated/glossary/drg-weights.md"}
    assert error["path"] in both
    (other,) = both - {error["path"]}
    assert other in error["message"]


def test_missing_curated_tree_is_unavailable_not_empty(cli: Cli, workspace: Path) -> None:
    shutil.rmtree(workspace / "evidence" / "curated")
    exit_code, value = validate_ws(cli, workspace)
    assert exit_code == 6
    assert codes(value) == ["E601"]
    assert value["result"] is None

    text = cli(["workspace", "evidence", "validate", "--workspace-root", str(workspace)])
    assert text.exit_code == 6
    assert "E601" in text.stderr and text.stdout == ""


def test_current_folder_is_the_default_workspace(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    result = cli(["workspace", "evidence", "validate", "--json"])
    assert result.exit_code == 0
    assert envelope(result)["workspace"] == str(workspace)


def test_workspace_errors_point_at_the_id_and_kind_lines(cli: Cli, workspace: Path) -> None:
    curated = workspace / "evidence" / "curated"
    drg = (curated / "glossary" / "drg.md").read_text(encoding="utf-8")
    head = "schema_version: 4\nid: evidence:clinical:drg\n"
    assert head in drg
    # Same id as drg.md, with 'id' on line 2; walked after drg.md, so it gets the E120.
    write(
        curated / "glossary" / "zz-drg.md",
        drg.replace(head, "id: evidence:clinical:drg\nschema_version: 4\n"),
    )
    # A glossary unit in the domain folder, with 'kind' on line 2.
    keys = "schema_version: 4\nid: evidence:clinical:icu\nkind: glossary\n"
    write(
        curated / "domain" / "icu.md",
        VALID_ICU.replace(keys, "kind: glossary\nschema_version: 4\nid: evidence:clinical:icu\n"),
    )
    _, value = validate_ws(cli, workspace)
    found = {(e["code"], Path(e["path"]).name): e["line"] for e in value["errors"]}
    assert found == {("E120", "zz-drg.md"): 2, ("E108", "icu.md"): 2}


def test_summary_counts_add_up(cli: Cli, workspace: Path) -> None:
    curated = workspace / "evidence" / "curated"
    shutil.copy(curated / "glossary" / "drg.md", curated / "glossary" / "drg-weights.md")
    _, value = validate_ws(cli, workspace)
    summary = value["result"]
    assert summary["invalid"] == 1
    assert summary["valid"] + summary["invalid"] == summary["files"]


def test_fmt_reports_paths_as_given(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "evidence" / "curated" / "glossary" / "icu.md", NONCANONICAL_ICU)
    monkeypatch.chdir(workspace.parent)
    value = envelope(cli(["evidence", "fmt", "--check", workspace.name, "--json"]))
    expected = f"{workspace.name}/evidence/curated/glossary/icu.md"
    assert value["result"]["changed"] == [expected]
    assert [e["path"] for e in value["errors"]] == [expected]


def test_nonexistent_workspace_root_is_workspace_unavailable(cli: Cli, tmp_path: Path) -> None:
    exit_code, value = validate_ws(cli, tmp_path / "nope")
    assert exit_code == 6
    assert codes(value) == ["E603"]


def test_workspace_descriptor_is_validated(cli: Cli, workspace: Path) -> None:
    descriptor = workspace / "workspace.yaml"
    text = descriptor.read_text(encoding="utf-8")
    write(descriptor, text.replace("default_language:", "default_languag:"))
    exit_code, value = validate_ws(cli, workspace)
    assert exit_code == 2
    assert codes(value) == ["E902"]
    assert "default_languag" in value["errors"][0]["message"]


# -- installation descriptor ---------------------------------------------------------


def registry_with(workspace: Path, tmp_path: Path) -> tuple[Path, Path]:
    registry = tmp_path / "registry"
    root = registry / "repo" / "psd-clinical"
    shutil.copytree(workspace, root)
    inst = write(
        tmp_path / "installation.yaml",
        f"installation_version: 1\nworkspace_registry_root: {registry}\nactor: operator\n",
    )
    return inst, root


def test_installation_and_workspace_id_resolve_the_registry_folder(
    cli: Cli, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inst, root = registry_with(workspace, tmp_path)
    # Make the registry copy distinguishable from the current folder.
    write(root / "evidence" / "curated" / "glossary" / "icu.md", VALID_ICU)
    monkeypatch.chdir(workspace)
    args = ["workspace", "evidence", "validate", "--workspace", "psd-clinical", "--json"]

    result = cli(["--installation", str(inst), *args])
    assert result.exit_code == 0, result.stdout
    value = envelope(result)
    assert value["workspace"] == str(root)
    assert value["result"]["files"] == N_FIXTURE_UNITS + 1

    monkeypatch.setenv("THT_INSTALLATION", str(inst))
    assert envelope(cli(args))["workspace"] == str(root)


@pytest.mark.parametrize(
    ("descriptor", "key_path", "suggestion"),
    [
        (
            "installation_version: 1\nworkspace_registry_root: {reg}\n"
            "evidence:\n  activation:\n    kindd: sqlite\n",
            "evidence.activation.kindd",
            "kind",
        ),
        (
            "installation_version: 1\nworkspace_registy_root: {reg}\n",
            "workspace_registy_root",
            None,
        ),
    ],
)
def test_misspelled_installation_key_is_a_usage_error_with_its_path(
    cli: Cli,
    workspace: Path,
    tmp_path: Path,
    descriptor: str,
    key_path: str,
    suggestion: str | None,
) -> None:
    _, _root = registry_with(workspace, tmp_path)
    inst = write(tmp_path / "bad.yaml", descriptor.format(reg=tmp_path / "registry"))
    args = ["--installation", str(inst), "workspace", "evidence", "validate"]
    result = cli([*args, "--workspace", "psd-clinical", "--json"])
    assert result.exit_code == 2
    value = envelope(result)
    assert codes(value) == ["E902"]
    assert key_path in value["errors"][0]["message"]
    assert value["result"] == {"key_path": key_path}
    if suggestion:
        assert f"did you mean '{suggestion}'" in value["errors"][0]["message"]

    text = cli([*args, "--workspace", "psd-clinical"])
    assert text.exit_code == 2 and key_path in text.stderr and text.stdout == ""


def test_workspace_id_needs_an_installation(cli: Cli) -> None:
    result = cli(["workspace", "evidence", "validate", "--workspace", "psd-clinical", "--json"])
    assert result.exit_code == 2
    assert codes(envelope(result)) == ["E901"]


def test_workspace_id_cannot_leave_the_registry(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    inst, _root = registry_with(workspace, tmp_path)
    args = ["--installation", str(inst), "workspace", "evidence", "validate", "--json"]
    result = cli([*args, "--workspace", "../psd-clinical"])
    assert result.exit_code == 2
    assert envelope(result)["workspace"] is None


def test_installation_is_validated_with_workspace_root_too(
    cli: Cli, workspace: Path, tmp_path: Path
) -> None:
    inst = write(tmp_path / "bad.yaml", "installation_version: 1\nactorr: ops\n")
    args = ["workspace", "evidence", "validate", "--workspace-root", str(workspace), "--json"]
    result = cli(["--installation", str(inst), *args])
    assert result.exit_code == 2
    assert codes(envelope(result)) == ["E902"]


# -- usage errors and help ---------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["evidence", "validate", "--json"],
        ["evidence", "validate", "--bogus", ".", "--json"],
        ["evidence", "nosuch", "--json"],
        ["evidence", "fmt", "--check", "--json"],
        [
            "workspace",
            "evidence",
            "validate",
            "--workspace-root",
            ".",
            "--workspace",
            "x",
            "--json",
        ],
    ],
    ids=["missing-argument", "unknown-option", "unknown-command", "fmt-no-path", "both-roots"],
)
def test_usage_errors_keep_the_json_promise(cli: Cli, args: list[str]) -> None:
    result = cli(args)
    assert result.exit_code == 2
    value = envelope(result)
    assert codes(value) == ["E901"]
    assert value["errors"][0]["hint"] == CODES["E901"].fix


def test_usage_error_without_json_prints_usage_on_stderr(cli: Cli) -> None:
    result = cli(["evidence", "validate", "--bogus", "."])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "No such option" in result.stderr and "Usage: tht evidence validate" in result.stderr


def test_root_usage_error_envelope_is_valid(cli: Cli) -> None:
    result = cli(["--json"])
    assert result.exit_code == 2
    assert codes(envelope(result)) == ["E901"]


def _command_paths(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, cmd in sorted(subcommands(group).items()):
        out.append((*path, name))
        if isinstance(cmd, click.Group):
            out.extend(_command_paths(cmd, (*path, name)))
    return out


@pytest.mark.parametrize(
    "path", [(), *_command_paths(tht_group)], ids=lambda p: " ".join(p) or "tht"
)
def test_help_works_for_every_command(cli: Cli, path: tuple[str, ...]) -> None:
    for flag in ("--help", "-h"):
        result = cli([*path, flag])
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith(f"Usage: {' '.join(('tht', *path))} ")
        assert result.stderr == ""


# -- the installed script ------------------------------------------------------------


def test_installed_console_script_runs(tmp_path: Path) -> None:
    tht = BIN / "tht"
    assert tht.is_file(), f"no console script at {tht}"
    env = {k: v for k, v in os.environ.items() if k != "THT_INSTALLATION"}
    result = subprocess.run(
        [str(tht), "evidence", "validate", str(FIXTURE_WORKSPACE), "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    value = json.loads(result.stdout)
    assert value["ok"] is True and value["result"]["valid"] == N_FIXTURE_UNITS

    usage = subprocess.run(
        [str(tht), "workspace", "evidence", "validate", "--bogus", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert usage.returncode == 2
    assert json.loads(usage.stdout)["errors"][0]["code"] == "E901"


HEAVY = ("markdown_it", "pglast", "jsonschema", "ruamel", "git", "httpx", "boto3", "qdrant_client")


def test_help_does_not_import_heavy_modules() -> None:
    # `tht --help` must start fast (SPEC 12): parsers, schemas and clients load on first use.
    code = (
        "import contextlib, io, json, sys\n"
        "from evidence_tool.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(heavy))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_the_cli_choices_of_kind_and_purpose_are_the_format_s() -> None:
    import click

    from evidence_tool.cli.workspace_cmds import workspace_evidence
    from evidence_tool.unit import KINDS, PURPOSES

    search = subcommands(workspace_evidence)["search"]
    choices = {p.name: p.type for p in search.params if isinstance(p.type, click.Choice)}
    assert tuple(choices["kind"].choices) == tuple(KINDS)
    assert tuple(choices["purpose"].choices) == tuple(PURPOSES)
