"""Issue 27: a JSON input naming one member twice is refused (E504 with the file and the
line of the second name), as the YAML formats refuse a duplicate key: ``json.loads``
would keep the last one silently (a second ``SQL`` wins, a second ``db_id`` moves the id)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import bird_fixture as bf
import pytest
from dbt_helpers import MANIFEST
from wren_cortex_fixtures import run, write_tree

from evidence_tool.errors import SourceError


def _bird_with(member: str, twice: str) -> str:
    """dev.json whose second question names ``member`` again, on a line of its own."""
    text = bf.questions_json()
    first = text.index(f'"{member}"', text.index('"question_id": 2'))
    line_end = text.index("\n", first)
    return text[: line_end + 1] + f'        "{member}": {twice},\n' + text[line_end + 1 :]


@pytest.mark.parametrize(("member", "twice"), [("SQL", '"SELECT 1"'), ("db_id", '"other"')])
def test_bird_question_with_a_member_twice_is_e504_at_its_line(
    tmp_path: Path, member: str, twice: str
) -> None:
    root = bf.write(tmp_path / "bird")
    text = _bird_with(member, twice)
    (root / "dev.json").write_text(text)
    line = text[: text.index(f'"{member}": {twice}')].count("\n") + 1
    with pytest.raises(SourceError) as caught:
        run("bird", root)
    assert caught.value.code == "E504"
    assert caught.value.message.startswith(f"dev.json:{line}: ")
    assert repr(member) in caught.value.message


def test_manifest_node_with_a_member_twice_is_e504(tmp_path: Path) -> None:
    text = MANIFEST.read_text()
    at = text.index('"schema": "planning"')
    text = text[:at] + '"schema": "elsewhere",\n   ' + text[at:]
    path = tmp_path / "target" / "manifest.json"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(SourceError) as caught:
        run("dbt", path)
    assert caught.value.code == "E504" and "'schema'" in caught.value.message
    second = text[:at].count("\n") + 2  # the original, now after the inserted one
    assert caught.value.message.startswith(f"manifest.json:{second}: ")


def test_manifest_with_a_top_level_member_twice_is_e504(tmp_path: Path) -> None:
    data = json.loads(MANIFEST.read_text())
    text = json.dumps(data, indent=1)
    text = text[:-2] + ',\n "nodes": {}\n}'
    path = tmp_path / "manifest.json"
    path.write_text(text)
    with pytest.raises(SourceError) as caught:
        run("dbt", path)
    assert caught.value.code == "E504" and "'nodes'" in caught.value.message


def test_vanna_record_with_a_member_twice_is_e504(tmp_path: Path) -> None:
    rows = '[{"id": "a-doc", "question": null,\n "content": "x", "content": "y",\n "training_data_type": "documentation"}]'
    root = write_tree(tmp_path / "v", {"export.json": rows})
    with pytest.raises(SourceError) as caught:
        run("vanna", root)
    assert caught.value.code == "E504" and "'content'" in caught.value.message
    assert caught.value.message.startswith("export.json:2: ")
    shutil.rmtree(root)
