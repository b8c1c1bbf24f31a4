"""Hostile and malformed WrenAI projects: a coded error naming file and line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from wren_cortex_fixtures import run, write_tree

from evidence_tool.errors import SourceError

META = "models/m/metadata.yml"
PAIR = "knowledge/sql/q.md"

# (file, bytes, line the error names; None: the whole file)
CASES: dict[str, tuple[str, bytes, int | None]] = {
    "duplicate key": (META, b"name: m\ncolumns: []\nname: n\n", 3),
    "anchor": (META, b"name: m\ncolumns:\n  - &c {name: a}\n", 3),
    "alias": (META, b"name: m\nx: {name: a}\ncolumns:\n  - *x\n", 4),
    "tag": (META, b"name: !!python/object:os.system m\n", 1),
    "syntax": (META, b"name: m\ncolumns:\n  - name: [a\n", 4),
    "two documents": (META, b"name: m\n---\nname: n\n", 2),
    "not a mapping": (META, b"- name: m\n", 1),
    "not utf-8": (META, b"name: m\ncolumns:\n  - name: \xff\xfe\n", 3),
    "deep nesting": (META, b"name: m\nx: " + b"[" * 80 + b"]" * 80 + b"\n", 2),
    "column without name": (META, b"name: m\ncolumns:\n  - type: INT\n", 3),
    "frontmatter list": (PAIR, b"---\n- nl\n- sql\n---\n", 2),
    "frontmatter nl not text": (PAIR, b"---\nnl: [a, b]\nsql: SELECT 1\n---\n", 2),
    "frontmatter alias": (PAIR, b"---\nnl: &a q\nsql: *a\n---\n", 2),
    "relationship with one model": (
        "relationships.yml",
        b"relationships:\n  - name: r\n    models: [a]\n",
        2,
    ),
    "cube measure without expression": (
        "cubes/c/metadata.yml",
        b"name: c\nmeasures:\n  - name: n\n",
        3,
    ),
    "rules not utf-8": ("knowledge/rules/r.md", b"# R\n\n## A\n\ncaf\xe9\n", 5),
    "columns not a list": (META, b"name: m\ncolumns:\n  a: {name: a}\n", 3),
    "measures not a list": ("cubes/c/metadata.yml", b"name: c\nmeasures: SUM(x)\n", 2),
    "frontmatter never closed": (PAIR, b"---\nnl: q\nsql: SELECT 1\n", 1),
    "v1 flat-file project": ("wren_project.yml", b"name: old\nschema_version: 1\n", 2),
    "project schema_version not a number": ("wren_project.yml", b"schema_version: five\n", 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_attack_malformed_wren_file_is_e504_naming_file_and_line(tmp_path: Path, case: str) -> None:
    rel, data, line = CASES[case]
    root = write_tree(tmp_path / "p", {rel: data})
    with pytest.raises(SourceError) as caught:
        run("wrenai", root)
    err = caught.value
    assert (err.code, err.path, err.line) == ("E504", rel, line), err.message
    assert err.message.startswith(f"{rel}:{line}:" if line else f"{rel}:")
    assert "refresh" in err.message  # says what to do next


def test_all_hostile_cases_ran() -> None:
    assert len(CASES) == 21


def test_attack_file_over_the_read_bound_is_refused_before_reading(tmp_path: Path) -> None:
    big = b"name: m\ncolumns:\n" + b"  - name: c\n" * 2000
    root = write_tree(tmp_path / "p", {META: big})
    from wren_cortex_fixtures import source_input

    from evidence_tool.importers.wrenai import WrenImporter

    source = source_input(root)
    bounded = type(source)(source.files, {}, "en", 1000)
    with pytest.raises(SourceError) as caught:
        WrenImporter().read(bounded)
    assert caught.value.code == "E503"
