"""The command around the checks: descriptor section, unavailable kinds, output formats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from catalog_helpers import WAREHOUSE, domain, write_units
from cli_runner import invoke, tht

from evidence_tool.catalog.model import Catalog, Column, Relation


def installation(folder: Path, catalog: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "installation.yaml"
    path.write_text(
        json.dumps({"installation_version": 1, "evidence": {"catalog": catalog}}), encoding="utf-8"
    )
    return path


def test_descriptor_section_names_the_catalog_relative_to_its_folder(
    workspace: Path, tmp_path: Path
) -> None:
    shutil.copytree(WAREHOUSE, tmp_path / "etc" / "dwh")
    inst = installation(tmp_path / "etc", {"kind": "ddl", "paths": ["dwh"]})
    result = tht(workspace, "check", installation=inst)
    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["catalog"]["sources"][0] == str(
        tmp_path / "etc/dwh/00-schemas.sql"
    )
    assert result.json["result"]["units_checked"] == 48


def test_descriptor_section_has_strict_keys(workspace: Path, tmp_path: Path) -> None:
    inst = installation(tmp_path, {"kind": "ddl", "paths": ["x"], "blok": True})
    result = tht(workspace, "check", installation=inst)
    assert result.exit_code == 2
    error = result.json["errors"][0]
    assert error["code"] == "E902"
    assert "evidence.catalog.blok" in error["message"] and "'block'" in error["message"]


@pytest.mark.parametrize(
    ("args", "code", "exit_code"),
    [
        (["--catalog", "postgres"], "E189", 6),
        (["--catalog", "ddl", "--ddl", str(WAREHOUSE), "--sample-values"], "E901", 2),
    ],
)
def test_an_unreachable_warehouse_or_values_asked_of_ddl_is_coded_and_never_prints_the_dsn(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], code: str, exit_code: int
) -> None:
    # port 1 of the loopback: refused at once, no server needed
    monkeypatch.setenv("THT_CATALOG_DSN", "postgresql://curator:s3cr3t-pw@127.0.0.1:1/dwh")
    result = tht(workspace, "check", *args)
    assert result.exit_code == exit_code
    assert [e["code"] for e in result.json["errors"]] == [code]
    assert "s3cr3t" not in result.stdout + result.stderr


def test_no_catalog_named_is_a_usage_error(workspace: Path) -> None:
    result = tht(workspace, "check")
    assert result.exit_code == 2
    assert result.json["errors"][0]["code"] == "E901"
    assert "--catalog" in result.json["errors"][0]["message"]


def test_github_and_sarif_formats_carry_the_findings(workspace: Path) -> None:
    unit = domain("bad", ["clinical.admission"], ["admin.patients.birth_dat"])
    write_units(workspace, {"evidence/curated/domain/bad.md": unit})
    base = ["workspace", "evidence", "check", "--workspace-root", str(workspace)]
    base += ["--catalog", "ddl", "--ddl", str(WAREHOUSE)]
    gh = invoke([*base, "--format", "github"])
    assert gh.exit_code == 1
    lines = gh.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=") and ",line=8,col=12,title=E180::" in lines[0]
    assert ",line=9,col=13,title=E181::" in lines[1] and "did you mean birth_date?" in lines[1]
    sarif = json.loads(invoke([*base, "--format", "sarif"]).stdout)
    results = sarif["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]) for r in results] == [
        ("E180", {"startLine": 8, "startColumn": 12}),
        ("E181", {"startLine": 9, "startColumn": 13}),
    ]


def test_unqualified_names_resolve_through_the_search_path_in_order() -> None:
    rel = lambda s, n: Relation(s, n, "table", (Column("id", "integer"),))  # noqa: E731
    catalog = Catalog("ddl", (rel("b", "t"), rel("a", "u"), rel("c", "t")), ("a", "b", "c"))
    assert catalog.relation(None, "t").schema == "b"  # type: ignore[union-attr]
    assert catalog.relation(None, "u").schema == "a"  # type: ignore[union-attr]
    assert catalog.relation(None, "v") is None
    assert catalog.relation("c", "t") is not None and catalog.relation("a", "t") is None


@pytest.mark.parametrize(
    "args",
    [
        ["--catalog", "sqlite", "--ddl", "x.sql"],
        ["--catalog", "ddl", "--sqlite", "x.db"],
        ["--catalog", "postgres", "--ddl", "x.sql"],
    ],
)
def test_a_source_of_another_catalog_kind_is_refused_not_ignored(
    workspace: Path, args: list[str]
) -> None:
    result = tht(workspace, "check", *args)
    assert result.exit_code == 2, result.stdout
    assert result.json["errors"][0]["code"] == "E901"


def test_config_show_prints_the_catalog_section_with_defaults_and_never_the_dsn(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAREHOUSE_DSN", "postgresql://curator:s3cr3t-pw@db.internal/dwh")
    inst = installation(tmp_path, {"kind": "postgres", "dsn_env": "WAREHOUSE_DSN"})
    result = invoke(
        [
            "--installation",
            str(inst),
            "config",
            "show",
            "--workspace-root",
            str(workspace),
            "--json",
        ]
    )
    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["catalog"] == {
        "kind": "postgres",
        "paths": [],
        "search_path": ["public"],
        "block": False,
        "dsn_env": "WAREHOUSE_DSN",
    }
    assert "s3cr3t" not in result.stdout + result.stderr
