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
