"""Hostile and malformed dbt input: a coded error naming the file and line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import MiB, read, source_of, write

from evidence_tool.errors import DescriptorError, SourceError
from evidence_tool.importers.base import ImportInput
from evidence_tool.importers.dbt import DbtImporter

PROJECT_YML = "name: hostile\nmodel-paths: [models]\n"
GOOD_MODEL = "models:\n  - name: rooms\n    description: Rooms of the clinic.\n"

# (case name, file, text, expected line, a word the message must hold)
YAML_CASES = [
    (
        "invalid-yaml",
        "models/a.yml",
        "models:\n  - name: rooms\n    columns: [\n",
        4,
        "YAML syntax",
    ),
    (
        "duplicate-key",
        "models/a.yml",
        "models:\n  - name: rooms\n    description: one\n    description: two\n",
        4,
        "duplicate key 'description'",
    ),
    ("anchor", "models/a.yml", "models:\n  - &m\n    name: rooms\n  - *m\n", 2, "anchor"),
    ("tag", "models/a.yml", "models:\n  - name: !!str rooms\n", 2, "tag"),
    (
        "jinja-model-name",
        "models/a.yml",
        "models:\n  - name: \"{{ var('room_model') }}\"\n",
        2,
        "not a plain name",
    ),
    (
        "jinja-column-name",
        "models/a.yml",
        "models:\n  - name: rooms\n    columns:\n      - name: '{{ col }}'\n",
        4,
        "not a plain name",
    ),
    (
        "doc-names-no-block",
        "models/a.yml",
        "models:\n  - name: rooms\n\n    description: \"{{ doc('nowhere') }}\"\n",
        4,
        "doc('nowhere') names no docs block",
    ),
    ("models-not-a-list", "models/a.yml", "models:\n  name: rooms\n", 2, "not a list of mappings"),
    (
        "values-not-a-list",
        "models/a.yml",
        "models:\n  - name: rooms\n    columns:\n      - name: kind\n        tests:\n"
        "          - accepted_values:\n              values: {a: 1}\n",
        7,
        "not a list of values",
    ),
    (
        "values-missing",
        "models/a.yml",
        "models:\n  - name: rooms\n    columns:\n      - name: kind\n        tests:\n"
        "          - accepted_values:\n              quote: false\n",
        6,
        "no 'values' list",
    ),
    ("two-documents", "models/a.yml", "models: []\n---\nmodels: []\n", 2, "more than one"),
    ("deep-nesting", "models/a.yml", "x: " + "[" * 200 + "]" * 200 + "\n", 1, "deeper than"),
    ("not-utf8", "models/a.yml", b"models:\n  - name: r\xffoms\n", 2, "not UTF-8"),
    (
        "docs-never-closed",
        "models/docs.md",
        "intro\n\n{% docs room_kind %}\nKinds of room.\n",
        3,
        "never closed",
    ),
    (
        "docs-nested",
        "models/docs.md",
        "{% docs a %}\nA\n{% docs b %}\nB\n{% enddocs %}\n",
        3,
        "inside the block 'a'",
    ),
    ("enddocs-alone", "models/docs.md", "text\n{% enddocs %}\n", 2, "without a {% docs"),
    (
        "docs-bad-name",
        "models/docs.md",
        "{% docs room kind %}\nx\n{% enddocs %}\n",
        1,
        "not a docs",
    ),
    (
        "duplicate-model",
        "models/b.yml",
        "models:\n  - name: rooms\n",
        2,
        "also described at models/a_good.yml:2",
    ),
    (
        "project-paths-not-a-list",
        "dbt_project.yml",
        "name: hostile\nmodel-paths: models\n",
        2,
        "model-paths is not a list",
    ),
]


@pytest.mark.parametrize(
    ("name", "rel", "text", "line", "words"), YAML_CASES, ids=[c[0] for c in YAML_CASES]
)
def test_attack_malformed_project_file_is_e504_naming_file_and_line(
    tmp_path: Path, name: str, rel: str, text: str | bytes, line: int, words: str
) -> None:
    write(tmp_path, "dbt_project.yml", PROJECT_YML)
    write(tmp_path, "models/a_good.yml", GOOD_MODEL)
    write(tmp_path, rel, text)
    with pytest.raises(SourceError) as caught:
        read(tmp_path)
    error = caught.value
    assert (error.code, error.path, error.line) == ("E504", rel, line), error.message
    assert words in error.message and error.message.startswith(f"{rel}:{line}: ")


def test_every_yaml_case_ran() -> None:
    assert len(YAML_CASES) == 19


def test_attack_huge_property_file_is_refused_not_read(tmp_path: Path) -> None:
    write(tmp_path, "dbt_project.yml", PROJECT_YML)
    big = "models:\n" + "".join(
        f"  - name: m{n}\n    description: {'x' * 80}\n" for n in range(20000)
    )
    write(tmp_path, "models/huge.yml", big)
    with pytest.raises(SourceError) as caught:
        read(tmp_path, max_bytes=MiB)
    assert caught.value.code == "E503" and caught.value.path == "models/huge.yml"


def test_jinja_in_a_description_or_values_is_a_review_item_not_a_guess(tmp_path: Path) -> None:
    write(tmp_path, "dbt_project.yml", PROJECT_YML)
    write(
        tmp_path,
        "models/a.yml",
        "models:\n  - name: rooms\n    description: 'Rooms of {{ var(\"site\") }}'\n"
        "    columns:\n      - name: kind\n        data_tests:\n"
        "          - accepted_values:\n              values: \"{{ var('kinds') }}\"\n"
        "      - name: wing\n        data_tests:\n"
        "          - accepted_values:\n              values: ['{{ north }}', south]\n",
    )
    result = read(tmp_path)
    assert result.units == []
    assert sorted((code, uid) for code, _, uid in result.review_items) == [
        ("not-representable", "evidence:dbt:rooms"),
        ("not-representable", "evidence:dbt:rooms.kind.values"),
        ("not-representable", "evidence:dbt:rooms.wing.values"),
    ]


MANIFEST_CASES = [
    ("empty", b"", None, "is empty"),
    ("not-json", b"<html>\n<body>no</body>\n", 1, "expected '{'"),
    ("array", b"[1, 2]\n", 1, "expected '{'"),
    (
        "truncated",
        b'{"metadata": {"dbt_schema_version": "x/manifest/v12.json"},\n "nodes": {"a": {',
        2,
        "not closed",
    ),
    (
        "unclosed-string",
        b'{"metadata": {"dbt_schema_version": "x/manifest/v12.json"},\n\n "nodes": "abc',
        3,
        "string is not closed",
    ),
    (
        "old-version",
        b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v7.json"}}',
        1,
        "not manifest v12",
    ),
    ("no-metadata", b'{"nodes": {}}', 1, "no 'metadata'"),
    (
        "bad-node-json",
        b'{"metadata": {"dbt_schema_version": "x/manifest/v12.json"},\n"nodes": {\n"model.p.a": {"name": "a", "x": tru}}}',
        3,
        "invalid JSON",
    ),
    (
        "deep-node",
        b'{"metadata": {"dbt_schema_version": "x/manifest/v12.json"}, "nodes": {"model.p.a": '
        + b"[" * 100000
        + b"]" * 100000
        + b"}}",
        1,
        "nested too deeply",
    ),
    (
        "binary",
        b'{"metadata": {"dbt_schema_version": "x/manifest/v12.json"}, "nodes": {"model.p.\xff": {}}}',
        1,
        "not UTF-8 text (byte 0xff)",
    ),
]


@pytest.mark.parametrize(
    ("name", "raw", "line", "words"), MANIFEST_CASES, ids=[c[0] for c in MANIFEST_CASES]
)
def test_attack_malformed_manifest_is_e504_naming_file_and_line(
    tmp_path: Path, name: str, raw: bytes, line: int | None, words: str
) -> None:
    path = write(tmp_path, "target/manifest.json", raw)
    with pytest.raises(SourceError) as caught:
        read(path)
    error = caught.value
    assert (error.code, error.path, error.line) == ("E504", "manifest.json", line), error.message
    assert words in error.message


def test_every_manifest_case_ran() -> None:
    assert len(MANIFEST_CASES) == 10


def test_a_folder_that_is_neither_project_nor_manifest_is_e504(tmp_path: Path) -> None:
    write(tmp_path, "notes/readme.md", "hello\n")
    with pytest.raises(SourceError) as caught:
        read(tmp_path)
    assert caught.value.code == "E504" and "dbt_project.yml" in caught.value.message


@pytest.mark.parametrize("value", ["", "  ", 3, ["a"]])
def test_a_schema_option_that_is_not_a_name_is_e902_naming_the_key(
    tmp_path: Path, value: object
) -> None:
    write(tmp_path, "dbt_project.yml", PROJECT_YML)
    write(tmp_path, "models/a_good.yml", GOOD_MODEL)
    with pytest.raises(DescriptorError) as caught:
        read(tmp_path, options={"schema": value})
    assert caught.value.code == "E902"
    assert caught.value.message.startswith("evidence.sources[?].options.schema: ")


def test_neither_project_nor_manifest_names_the_source_folder(tmp_path: Path) -> None:
    write(tmp_path, "exports/notes.md", "hello\n")
    source = source_of(tmp_path)
    source = ImportInput(source.files, {}, "en", MiB, key="evidence.sources[3]", root="imports/x")
    with pytest.raises(SourceError) as caught:
        DbtImporter().read(source)
    assert caught.value.code == "E504" and caught.value.path == "imports/x"


def test_a_bad_byte_in_a_docs_file_with_a_bom_is_named_on_its_own_line() -> None:
    """The BOM is not counted into the position: the line named is the bad byte's."""
    from evidence_tool.importers.dbt_model import docs_blocks

    raw = b"\xef\xbb\xbf{% docs a %}\nok\n\xff{% enddocs %}\n"
    with pytest.raises(SourceError) as caught:
        docs_blocks("models/docs.md", "imports/dbt/models/docs.md", raw)
    assert caught.value.code == "E504"
    assert "imports/dbt/models/docs.md:3" in str(caught.value)
