"""Issue 15, Messages: ``--warnings-as-errors`` lets CI refuse a near-miss heading (W111).

validate (both forms), consolidate and ``verify --strict`` exit 1 with every coded
warning reported as error E190 at the warning's file and line; the --json output
stays valid against ``schemas/cli/envelope.schema.json``; without the flag the
same workspace passes with the warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from cli_runner import invoke, tht

from evidence_tool.unit.schemas import load_schema

WORKSPACE_YAML = """\
descriptor_version: 4
id: lab-warehouse
name: Lab warehouse
default_language: en
evidence:
  descriptor_version: 1
  sources: []
"""

# An Italian glossary whose optional '## Varianti' is misspelt: prose inside the
# definition, so the variants would silently never reach retrieval.
ITALIAN = """\
---
schema_version: 4
id: evidence:lab:emocromo
kind: glossary
language: it
purposes: [disambiguation]
---

# Emocromo

## Definizione

Esame del sangue in `lab.orders.test_code = 'EMO'`.

## varianti

- esame emocromocitometrico
"""

# An English normalization rule with a near-miss inside its Rule text.
ENGLISH = """\
---
schema_version: 4
id: evidence:lab:units
kind: normalization
language: en
purposes: [rewriting]
---

# Glucose units

## Input

glucose 5.5 mmol/L

## Output

glucose 99 mg/dL

## Rule

Multiply by 18.

## Outputs

Round to an integer.
"""

CLEAN = """\
---
schema_version: 4
id: evidence:lab:fasting
kind: domain
language: en
purposes: [rewriting]
---

# Fasting

## Rule

Count a sample as fasting only when `lab.samples.fasting` is true.
"""

WARNED = {
    "evidence/curated/glossary/emocromo.md": 15,
    "evidence/curated/normalization/glucose-units.md": 23,
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "lab"
    files = {
        "workspace.yaml": WORKSPACE_YAML,
        "evidence/curated/glossary/emocromo.md": ITALIAN,
        "evidence/curated/normalization/glucose-units.md": ENGLISH,
        "evidence/curated/domain/fasting.md": CLEAN,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _valid_envelope(value: dict[str, object]) -> None:
    jsonschema.validate(value, load_schema("cli/envelope.schema.json"))


def _assert_refused(value: dict[str, object]) -> None:
    _valid_envelope(value)
    assert value["ok"] is False
    errors = value["errors"]
    assert isinstance(errors, list)
    assert {(e["code"], e["path"], e["line"]) for e in errors} == {
        ("E190", path, line) for path, line in WARNED.items()
    }
    assert all(e["message"].startswith("W111 ") for e in errors)
    assert all("--warnings-as-errors" in e["hint"] for e in errors)
    assert not [w for w in value["warnings"] if w["code"] == "W111"]  # type: ignore[union-attr]


def test_workspace_validate_passes_with_warnings_and_refuses_them_on_request(ws: Path) -> None:
    plain = tht(ws, "validate")
    assert plain.exit_code == 0, plain.stdout
    assert {(w["path"], w["line"]) for w in plain.json["warnings"]} == set(WARNED.items())

    strict = tht(ws, "validate", "--warnings-as-errors")

    assert strict.exit_code == 1, strict.stdout
    _assert_refused(strict.json)
    assert (strict.json["result"]["valid"], strict.json["result"]["invalid"]) == (1, 2)


def test_evidence_validate_refuses_warnings_in_text_with_file_and_line(ws: Path) -> None:
    curated = str(ws / "evidence" / "curated")

    result = invoke(["evidence", "validate", curated, "--warnings-as-errors"])

    assert result.exit_code == 1
    for path, line in WARNED.items():
        name = path.rsplit("/", 1)[1]
        assert any(
            name in row and f":{line}:" in row and "E190 W111" in row
            for row in result.stdout.splitlines()
        ), result.stdout
    assert "fix E190:" in result.stderr


def test_consolidate_with_the_flag_refuses_and_writes_nothing(ws: Path) -> None:
    result = tht(ws, "consolidate", "--warnings-as-errors")

    assert result.exit_code == 1, result.stdout
    _assert_refused(result.json)
    assert not (ws / "evidence" / ".local" / "snapshots").exists()
    assert not (ws / "evidence" / "local-manifest.yaml").exists()

    dry = tht(ws, "consolidate", "--dry-run", "--warnings-as-errors")
    assert dry.exit_code == 1
    _assert_refused(dry.json)

    plain = tht(ws, "consolidate", "--no-activate")
    assert plain.exit_code == 0, plain.stdout
    assert {w["code"] for w in plain.json["warnings"]} == {"W111"}


def test_verify_strict_reports_unit_warnings_and_refuses_them_on_request(ws: Path) -> None:
    assert tht(ws, "consolidate", "--no-activate").exit_code == 0

    plain = tht(ws, "verify", "--strict")
    assert plain.exit_code == 0, plain.stdout
    _valid_envelope(plain.json)
    assert {(w["path"], w["line"]) for w in plain.json["warnings"] if w["code"]} == set(
        WARNED.items()
    )

    strict = tht(ws, "verify", "--strict", "--warnings-as-errors")

    assert strict.exit_code == 1, strict.stdout
    _assert_refused(strict.json)


def test_the_flag_changes_nothing_for_a_workspace_without_warnings(ws: Path) -> None:
    (ws / "evidence/curated/glossary/emocromo.md").write_text(
        ITALIAN.replace("## varianti", "## Varianti"), encoding="utf-8"
    )
    (ws / "evidence/curated/normalization/glucose-units.md").unlink()

    for args in (("validate",), ("consolidate", "--no-activate"), ("verify", "--strict")):
        result = tht(ws, *args, "--warnings-as-errors")
        assert result.exit_code == 0, (args, result.stdout)
        assert json.loads(result.stdout)["errors"] == []


def test_verify_without_strict_refuses_the_flag_as_a_usage_error(ws: Path) -> None:
    # Only --strict reads the unit files: a plain verify would accept the flag and check nothing.
    result = tht(ws, "verify", "--warnings-as-errors")

    assert result.exit_code == 2
    [error] = result.json["errors"]
    assert error["code"] == "E901"
    assert "--warnings-as-errors needs --strict" in error["message"]


def test_text_warnings_name_file_line_and_code(ws: Path) -> None:
    result = invoke(["workspace", "evidence", "validate", "--workspace-root", str(ws)])

    assert result.exit_code == 0
    rows = [row for row in result.stderr.splitlines() if row.startswith("warning: ")]
    assert len(rows) == len(WARNED)
    for path, line in WARNED.items():
        [row] = [r for r in rows if r.startswith(f"warning: {path}:{line}: W111 '## ")]
        assert f"(line {line})" in row
