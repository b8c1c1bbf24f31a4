"""Lint, formatting and the layering contracts of SPEC.md 2, as part of the test suite.

The tools run from the bin folder of the interpreter running the tests (the
project's virtual environment), so CI and a developer see the same verdict.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "evidence_tool", "tests"],
        ["ruff", "format", "--check", "evidence_tool", "tests"],
        ["lint-imports"],
    ],
    ids=["ruff-check", "ruff-format", "import-linter"],
)
def test_tool_passes(command: list[str]) -> None:
    tool = BIN / command[0]
    assert tool.is_file(), f"{command[0]} is not installed next to {sys.executable}"
    result = subprocess.run(
        [str(tool), *command[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, (
        f"{' '.join(command)} failed (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
    )


def test_every_heavy_module_exists_and_the_fast_loop_leaves_them_out() -> None:
    """A renamed heavy module would silently join the fast loop; a stale name fails here."""
    from heavy_tests import HEAVY_MODULES, HEAVY_TESTS, LONGEST_MODULES

    repo = Path(__file__).resolve().parent.parent
    named = {m for m in HEAVY_MODULES} | {t.split("::")[0] for t in HEAVY_TESTS}
    named |= set(LONGEST_MODULES)
    missing = sorted(m for m in named if not (repo / m).is_file())
    assert not missing, f"heavy_tests.py names files that do not exist: {missing}"
    assert len(HEAVY_MODULES) >= 10


def test_no_library_function_runs_over_sixty_lines() -> None:
    """Issue 32's figure, held: a function past 60 lines is split where it changes topic."""
    import ast

    long, seen = [], 0
    for path in sorted((REPO / "evidence_tool").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                seen += 1
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > 60:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({size})")
    assert seen > 1000  # the walk found the library's functions
    assert long == []
