"""``sources add``: the descriptor entry written for the operator, or a coded refusal that
writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke, tht
from import_helpers import add, error_of, sid_of, write

from evidence_tool.unit.yaml_strict import load
from evidence_tool.workspace.descriptor import validate_descriptor

EXPORT = (
    '[{"id":"k1-doc","question":null,"content":"A rule.","training_data_type":"documentation"}]'
)


def evidence(ws: Path) -> dict[str, object]:
    value = load((ws / "workspace.yaml").read_text()).value
    validate_descriptor(value, "workspace.schema.json", "workspace.yaml")
    return value["evidence"]  # type: ignore[no-any-return]


def test_add_turns_v1_into_v2_and_appends_entries(workspace: Path) -> None:
    write(workspace, "imports/a/training.json", EXPORT)
    write(workspace, "imports/b.csv", "id,question,content,training_data_type\n")
    first = add(workspace, "vanna", "imports/a", "--language", "en")
    assert first.exit_code == 0, first.stdout
    assert first.json["result"] == {
        "source_id": sid_of("vanna", "imports/a"),
        "locator": "import:vanna:imports/a",
        "key": "evidence.sources[0]",
        "entry": {"kind": "import", "format": "vanna", "path": "imports/a", "language": "en"},
        "descriptor": "workspace.yaml",
        "rewritten": False,  # the shipped descriptor is in canonical form: nothing lost
    }
    second = add(workspace, "vanna", "imports/b.csv")
    assert second.json["result"]["key"] == "evidence.sources[1]"
    assert evidence(workspace) == {
        "descriptor_version": 2,
        "sources": [
            {"kind": "import", "format": "vanna", "path": "imports/a", "language": "en"},
            {"kind": "import", "format": "vanna", "path": "imports/b.csv"},
        ],
    }
    # The rest of the descriptor is kept as it was.
    value = load((workspace / "workspace.yaml").read_text()).value
    assert (value["id"], value["default_language"]) == ("psd-clinical", "it")
    refreshed = tht(workspace, "refresh")
    assert refreshed.exit_code == 0
    kinds = sorted(s["locator"] for s in refreshed.json["result"]["sources"])
    assert "import:vanna:imports/a" in kinds and "import:vanna:imports/b.csv" in kinds


def test_path_is_taken_relative_to_the_current_directory(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace, "imports/deep/training.json", EXPORT)
    monkeypatch.chdir(workspace / "imports")
    result = invoke(
        ["workspace", "evidence", "sources", "add", "--format", "vanna", "deep", "--json"]
    )
    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["entry"]["path"] == "imports/deep"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("--format", "vana"), "E904", "the formats are: bird, cortex, dbt, vanna, wrenai"),
        (("--format", "vanna", "--option", "schema=analytics"), "E902", "options.schema"),
        (("--format", "vanna", "--option", "schema"), "E901", "KEY=VALUE"),
        (("--format", "vanna", "--language", "English"), "E901", "--language 'English'"),
    ],
    ids=["unknown-format", "unknown-option", "option-without-value", "bad-language"],
)
def test_refusals_write_nothing(
    workspace: Path, args: tuple[str, ...], code: str, says: str
) -> None:
    write(workspace, "imports/a/training.json", EXPORT)
    before = (workspace / "workspace.yaml").read_bytes()
    result = tht(workspace, "sources", "add", *args, str(workspace / "imports/a"))
    error = error_of(result)
    assert error["code"] == code and says in error["message"], error
    assert (workspace / "workspace.yaml").read_bytes() == before


def test_a_duplicate_entry_is_refused(workspace: Path) -> None:
    write(workspace, "imports/a/training.json", EXPORT)
    assert add(workspace, "vanna", "imports/a").exit_code == 0
    before = (workspace / "workspace.yaml").read_bytes()
    again = add(workspace, "vanna", "imports/a/")
    error = error_of(again)
    assert error["code"] == "E901" and "evidence.sources[0]" in error["message"]
    assert (workspace / "workspace.yaml").read_bytes() == before


def test_an_editor_save_between_read_and_write_wins(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compare-and-swap: the operator's save made after add read the file is kept (E301)."""
    from evidence_tool.sources import import_add

    write(workspace, "imports/a/training.json", EXPORT)
    saved = (workspace / "workspace.yaml").read_text().replace("PSD clinical", "PSD clinical 2")
    real = import_add.read_descriptor

    def read_then_editor_saves(path: Path, what: str) -> bytes:
        data = real(path, what)
        path.write_text(saved)  # the editor's save lands right after the read
        return data

    monkeypatch.setattr(import_add, "read_descriptor", read_then_editor_saves)
    result = add(workspace, "vanna", "imports/a")
    assert error_of(result)["code"] == "E301"
    assert (workspace / "workspace.yaml").read_text() == saved


def test_a_hand_written_unknown_format_or_option_is_e902_naming_the_key(
    workspace: Path,
) -> None:
    write(workspace, "imports/a/training.json", EXPORT)
    for entry, key in (
        ({"kind": "import", "format": "vanilla", "path": "imports/a"}, "sources[1].format"),
        (
            {"kind": "import", "format": "vanna", "path": "imports/a", "options": {"x": 1}},
            "sources[1].options.x",
        ),
    ):
        value = {
            "descriptor_version": 4,
            "id": "psd-clinical",
            "name": "PSD clinical",
            "default_language": "it",
            "evidence": {
                "descriptor_version": 2,
                "sources": [{"kind": "http", "url": "https://docs.example.org/a.md"}, entry],
            },
        }
        (workspace / "workspace.yaml").write_text(json.dumps(value))
        error = error_of(tht(workspace, "refresh"))
        assert error["code"] == "E902" and f"evidence.{key}" in error["message"], error


def test_a_descriptor_with_comments_is_said_to_be_rewritten(workspace: Path) -> None:
    write(workspace, "imports/a/training.json", EXPORT)
    desc = workspace / "workspace.yaml"
    desc.write_text(
        "# PSD clinical workspace: ask the data team before editing\n" + desc.read_text()
    )
    result = add(workspace, "vanna", "imports/a")
    assert result.exit_code == 0
    assert result.json["result"]["rewritten"] is True
    assert not desc.read_text().startswith("#")
    again = add(workspace, "vanna", "imports/a/training.json")
    assert again.json["result"]["rewritten"] is False


def test_a_registered_format_whose_module_is_missing_is_a_coded_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evidence_tool.importers import formats

    monkeypatch.setitem(formats.FORMATS, "gone", "no_such_importer_module:Gone")
    write(workspace, "imports/a/training.json", EXPORT)
    error = error_of(add(workspace, "gone", "imports/a"))
    assert error["code"] == "E501" and "format 'gone' is not available" in error["message"]


def test_an_option_value_giving_a_key_twice_is_refused_naming_it(workspace: Path) -> None:
    """``--option schemas={a: x, a: y}``: which schema counts must not be the loader's guess,
    and nothing is written to workspace.yaml."""
    write(workspace, "imports/a/training.json", EXPORT)
    before = (workspace / "workspace.yaml").read_bytes()
    result = add(workspace, "vanna", "imports/a", "--option", "schemas={main: a, main: b}")
    assert result.exit_code == 2, result.stdout
    error = error_of(result)
    assert "--option schemas" in error["message"] and "main" in error["message"], error
    assert (workspace / "workspace.yaml").read_bytes() == before
