"""The import contracts of pyproject.toml cover every package, and each one can fail.

lint-imports runs on a copy of the package in a temp folder with forbidden imports
appended (grimp reads the source, nothing is executed); every injected import must be
reported by the contract that forbids it, and the untouched copy must keep them all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"][
    "contracts"
]
BY_ID = {c["id"]: c for c in CONTRACTS}
LINT = Path(sys.executable).with_name("lint-imports")
# Who may import what: the owner of each third-party dependency with a contract.
OWNERS = {
    "click": "cli",
    "ruamel": "unit",
    "markdown_it": "unit",
    "git": "gitflow",
    "psycopg": "catalog",
    "torch": "embedding",
    "sentence_transformers": "embedding",
    "onnxruntime": "embedding",
    "tokenizers": "embedding",
}
SIBLINGS = ("sources", "activation", "migrate", "gitflow", "catalog")
FINDING = re.compile(r"^(evidence_tool[\w.]*) is not allowed to import ([\w.]+):$")


def packages() -> list[str]:
    """Every top-level package and module of evidence_tool (errors.py, session.py too)."""
    root = REPO / "evidence_tool"
    names = [p.name for p in root.iterdir() if (p / "__init__.py").is_file()]
    names += [p.stem for p in root.glob("*.py") if p.stem != "__init__"]
    return sorted(names)


def entry_file(copy: Path, package: str) -> Path:
    """The file of ``package`` that gets the injected imports."""
    if package == "sources":
        return copy / "evidence_tool/sources/policy.py"  # the example
    folder = copy / "evidence_tool" / package
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "400", "NO_COLOR": "1"}
    return subprocess.run(
        [str(LINT), "--no-cache", "--no-logo", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def findings(output: str) -> set[tuple[str, str, str]]:
    """(contract id, importer, imported) for every broken rule lint-imports reports."""
    names = {c["name"]: c["id"] for c in CONTRACTS}
    found: set[tuple[str, str, str]] = set()
    current = None
    for line in output.splitlines():
        if line.strip() in names:
            current = names[line.strip()]
        elif (m := FINDING.match(line.strip())) and current is not None:
            found.add((current, m.group(1), m.group(2)))
    return found


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(
        REPO / "evidence_tool",
        tmp_path / "evidence_tool",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_every_package_is_named_by_each_dependency_contract() -> None:
    """A new package must be added to the contracts, or this fails."""
    everyone = set(packages())
    assert {"cli", "unit", "sources", "fsio", "session", "errors"} <= everyone
    for contract_id in ("no-click", "no-yaml-markdown", "no-git", "no-psycopg", "no-torch"):
        contract = BY_ID[contract_id]
        named = {m.removeprefix("evidence_tool.") for m in contract["source_modules"]}
        owners = {OWNERS[m] for m in contract["forbidden_modules"]}
        assert named | owners == everyone, (contract_id, everyone - named - owners)
        assert not named & owners, contract_id


def test_the_untouched_copy_keeps_every_contract(copy: Path) -> None:
    result = lint(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def test_attack_forbidden_imports_appended_to_every_package_break_their_contracts(
    copy: Path,
) -> None:
    expected: set[tuple[str, str, str]] = set()
    injected: dict[Path, list[str]] = {}
    for contract_id in ("no-click", "no-yaml-markdown", "no-git", "no-psycopg", "no-torch"):
        contract = BY_ID[contract_id]
        for module in contract["source_modules"]:
            package = module.removeprefix("evidence_tool.")
            for dependency in contract["forbidden_modules"]:
                injected.setdefault(entry_file(copy, package), []).append(dependency)
                expected.add((contract_id, module, dependency))
    for sibling in SIBLINGS:
        for other in SIBLINGS:
            if other != sibling:
                # migrate's package face, not migrate.run: the allowed edge is that one only.
                injected.setdefault(entry_file(copy, sibling), []).append(f"evidence_tool.{other}")
                expected.add(
                    (f"sibling-{sibling}", f"evidence_tool.{sibling}", f"evidence_tool.{other}")
                )
                expected.add(("layers", f"evidence_tool.{sibling}", f"evidence_tool.{other}"))
    # Upward imports across the layers.
    for low, high in (
        ("archive", "cli"),
        ("unit", "workspace"),
        ("fsio", "archive"),
        ("embedding", "activation"),
        ("serve", "session"),
        ("importers", "sources"),
    ):
        injected.setdefault(entry_file(copy, low), []).append(f"evidence_tool.{high}")
        expected.add(("layers", f"evidence_tool.{low}", f"evidence_tool.{high}"))
    for path, names in injected.items():
        with path.open("a", encoding="utf-8") as f:
            f.write("".join(f"import {name}  # injected\n" for name in names))

    result = lint(copy)
    assert result.returncode == 1, result.stdout + result.stderr
    found = findings(result.stdout)
    assert expected - found == set(), result.stdout
    # 19 packages x 1 + 19 x 2 + 19 x 1 + 19 x 1 + 19 x 4 (torch, sentence_transformers,
    # onnxruntime, tokenizers) dependency rules, 20 sibling pairs twice, 6 layers.
    assert len(expected) == 19 + 38 + 19 + 19 + 76 + 40 + 6
    assert f"Contracts: 0 kept, {len(CONTRACTS)} broken." in result.stdout
