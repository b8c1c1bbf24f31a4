"""What the per-unit hot path does not do: log, or import what a command does not use.

Counts of calls and of imported modules, never time (issue 20).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import tht_modules

from evidence_tool.unit import parse_unit

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "workspace"


def test_parsing_units_makes_no_logging_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """markdown-it's block rules log a debug line per rule and line even with logging off:
    none of those calls may remain on the parse path."""
    files = sorted((FIXTURE / "evidence" / "curated").rglob("*.md"))
    assert len(files) >= 20
    calls = [0]
    real = logging.Logger.debug

    def counting(self: logging.Logger, *args: object, **kwargs: object) -> None:
        calls[0] += 1
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(logging.Logger, "debug", counting)
    parsed = [parse_unit(f.read_bytes(), path=f.name) for f in files]
    assert sum(1 for r in parsed if r.unit is not None) >= 20
    assert calls[0] == 0


def test_debug_logging_of_markdown_it_still_works_when_enabled() -> None:
    """Who turns markdown-it's debug logging on before the first parse still gets it."""
    code = (
        "import logging, sys\n"
        "logging.basicConfig(level=logging.DEBUG, stream=sys.stdout)\n"
        "from evidence_tool.unit import parse_unit\n"
        "parse_unit(open(sys.argv[1], 'rb').read())\n"
    )
    unit = next((FIXTURE / "evidence" / "curated").rglob("*.md"))
    out = subprocess.run(
        [sys.executable, "-c", code, str(unit)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert "entering heading" in out.stdout


# Imported only by the commands that need them: start-up is what every command pays.
_HEAVY = (
    "jsonschema",
    "referencing",
    "markdown_it",
    "multiprocessing",
    "concurrent.futures",
    "ssl",
    "evidence_tool.report",
    "evidence_tool.unit.html",
    "boto3",
    "qdrant_client",
    "pglast",
)


def _modules_of(cwd: Path, *args: str) -> set[str]:
    return tht_modules(cwd, *args)[0]


def test_help_imports_no_library_module_it_does_not_show(tmp_path: Path) -> None:
    loaded = _modules_of(tmp_path, "--help")
    assert "click" in loaded  # the check really saw the run
    heavy = [
        m for m in (*_HEAVY, "ruamel", "sqlite3", "evidence_tool.archive.local") if m in loaded
    ]
    assert heavy == []


def test_a_noop_consolidate_imports_no_parser_or_validator(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from bench.generate import generate

    root = generate(29, tmp_path / "ws", seed=5)
    first = _modules_of(root, "workspace", "evidence", "consolidate")
    assert {"markdown_it", "sqlite3"} <= first  # the first one parses and activates
    loaded = _modules_of(root, "workspace", "evidence", "consolidate")
    assert (
        "evidence_tool.archive.local" in loaded and "evidence_tool.unit._speed.yaml_fast" in loaded
    )
    # workspace.yaml and state.yaml as the tool writes them take the line reader: no libyaml.
    assert "ruamel" not in loaded
    assert [m for m in _HEAVY if m in loaded] == []
    assert [m for m in _NOT_FOR_A_NOOP if m in loaded] == []


# What a no-op consolidate of a v4 workspace without a catalog section never calls: the
# parser (every file is in the stat cache), the migration converter, the importers and
# comparison (no source is missing), the catalog, the stemmers (no index row is built),
# and importlib.resources' archive readers (schemas are files); without an embedder the
# sqlite-vec probe neither (sqlite_vec imports numpy: 65 ms of a no-op's start when it did).
_NOT_FOR_A_NOOP = (
    "sqlite_vec",
    "numpy",
    "evidence_tool.unit.parse",
    "evidence_tool.unit.body",
    "evidence_tool.unit.metadata",
    "evidence_tool.migrate.run",
    "evidence_tool.migrate.convert",
    "evidence_tool.sources.compare",
    "evidence_tool.sources.refresh",
    "evidence_tool.sources.import_add",
    "evidence_tool.catalog",
    "evidence_tool.catalog.step",
    "snowballstemmer",
    "importlib.resources",
    "zipfile",
    # issue 20, third pass: read-only views (status, show), the source registry when the
    # workspace keeps none (no source can be missing), the unit model and renderer.
    "evidence_tool.archive.queries",
    "evidence_tool.sources.registry",
    "evidence_tool.sources.store",
    "evidence_tool.sources.records",
    "evidence_tool.unit.model",
    "evidence_tool.unit.render",
    # the YAML parser: workspace.yaml's value is kept by its bytes' hash, and state.yaml
    # is read directly when it is exactly what the tool writes
    "ruamel",
    # used only by what a no-op never does: a command backend's child, a W701 diff of the
    # YAML mirror, a crash's traceback, an atomic swap's renameat2
    "subprocess",
    "difflib",
    "traceback",
    "ctypes",
    "evidence_tool.workspace.redact",
)
