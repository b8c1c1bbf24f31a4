"""Issue 2, part 2: the two rules a single file cannot check, through validate_workspace.

E108: the folder must equal the unit's kind; E120: ids are unique in the workspace.
"""

from __future__ import annotations

from pathlib import Path

from unit_helpers import DOMAIN_BODY, unit_text

from evidence_tool.workspace import validate_workspace

GLOSSARY_BODY = "# Term\n\n## Definition\n\nd\n"


def _workspace(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / "evidence" / "curated" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_valid_workspace_has_no_errors(tmp_path: Path) -> None:
    root = _workspace(
        tmp_path,
        {
            "domain/a.md": unit_text(DOMAIN_BODY, id="evidence:a"),
            "glossary/b.md": unit_text(GLOSSARY_BODY, kind="glossary", id="evidence:b"),
        },
    )
    report = validate_workspace(root)
    assert report.errors == []
    assert sorted(u.id for u in report.units()) == ["evidence:a", "evidence:b"]


def test_a_kind_that_does_not_match_its_folder_is_E108_only(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"glossary/a.md": unit_text(DOMAIN_BODY, id="evidence:a")})

    report = validate_workspace(root)

    assert [(d.code, d.path, d.line) for d in report.errors] == [
        ("E108", "evidence/curated/glossary/a.md", 4)  # the 'kind:' line
    ]
    assert "kind 'domain' does not match the folder 'glossary'" in report.errors[0].message


def test_a_file_outside_a_kind_folder_is_E108(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"rules/a.md": unit_text(DOMAIN_BODY, id="evidence:a")})
    assert [d.code for d in validate_workspace(root).errors] == ["E108"]


def test_a_file_name_outside_the_name_pattern_is_E108(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"domain/Bad Name.md": unit_text(DOMAIN_BODY, id="evidence:a")})
    assert [d.code for d in validate_workspace(root).errors] == ["E108"]


def test_a_duplicate_id_is_E120_on_the_second_file_naming_the_first(tmp_path: Path) -> None:
    root = _workspace(
        tmp_path,
        {
            "domain/a.md": unit_text(DOMAIN_BODY, id="evidence:same"),
            "glossary/b.md": unit_text(GLOSSARY_BODY, kind="glossary", id="evidence:same"),
        },
    )

    report = validate_workspace(root)

    assert [(d.code, d.path, d.line, d.unit_id) for d in report.errors] == [
        ("E120", "evidence/curated/glossary/b.md", 3, "evidence:same")  # the 'id:' line
    ]
    assert "evidence/curated/domain/a.md" in report.errors[0].message


def test_a_duplicate_id_is_found_even_when_a_file_has_other_errors(tmp_path: Path) -> None:
    # The id of a file with a body error still counts: renaming it must not be hidden.
    root = _workspace(
        tmp_path,
        {
            "domain/a.md": unit_text(DOMAIN_BODY, id="evidence:same"),
            "domain/b.md": unit_text("# Title\n", id="evidence:same"),
        },
    )
    assert sorted(d.code for d in validate_workspace(root).errors) == ["E113", "E120"]


def test_workspace_errors_point_at_the_key_wherever_it_is_written(tmp_path: Path) -> None:
    # Regression: metadata key lines were one too low (frontmatter, not file, coordinates).
    reordered = (
        "---\nkind: domain\nid: evidence:same\nschema_version: 4\nlanguage: en\n"
        "purposes: [rewriting]\n---\n\n" + DOMAIN_BODY
    )
    root = _workspace(
        tmp_path,
        {
            "domain/a.md": unit_text(DOMAIN_BODY, id="evidence:same"),
            "glossary/b.md": reordered,
        },
    )

    report = validate_workspace(root)

    assert sorted((d.code, d.line) for d in report.errors) == [("E108", 2), ("E120", 3)]
