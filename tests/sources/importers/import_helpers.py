"""Helpers for import-source tests (every format): add, refresh, compare, replace, read back.

Paths given to ``sources add`` are absolute (it resolves PATH against the current
directory, which in-process is the repository).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from cli_runner import CliResult, registry, tht
from helpers import envelope

STORE = "evidence/.local/sources.json"


def locator(fmt: str, rel: str) -> str:
    return f"import:{fmt}:{rel}"


def sid_of(fmt: str, rel: str) -> str:
    return hashlib.sha256(locator(fmt, rel).encode()).hexdigest()


def write(ws: Path, rel: str, data: str | bytes) -> Path:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def add(ws: Path, fmt: str, rel: str, *extra: str) -> CliResult:
    """``sources add --format FMT <ws>/REL EXTRA``."""
    return tht(ws, "sources", "add", "--format", fmt, str(ws / rel), *extra)


def refresh_one(ws: Path, fmt: str, rel: str) -> CliResult:
    return tht(ws, "refresh", "--source-id", sid_of(fmt, rel))


def record_of(ws: Path, fmt: str, rel: str) -> dict[str, Any]:
    return registry(ws)["sources"][sid_of(fmt, rel)]  # type: ignore[no-any-return]


def comparison(ws: Path, fmt: str, rel: str) -> dict[str, Any]:
    comp = record_of(ws, fmt, rel)["comparison"]
    assert comp is not None, "no pending comparison"
    return comp  # type: ignore[no-any-return]


def replace(ws: Path, fmt: str, rel: str, *extra: str) -> CliResult:
    comp = comparison(ws, fmt, rel)
    return tht(
        ws,
        "decide",
        "--source-id",
        comp["source_id"],
        "--revision",
        comp["revision"],
        "--decision",
        "replace",
        *extra,
    )


def import_and_replace(ws: Path, fmt: str, rel: str, *add_args: str) -> dict[str, Any]:
    """The whole loop up to an activated replace; returns the comparison replaced."""
    added = add(ws, fmt, rel, *add_args)
    assert added.exit_code == 0, added.stdout + added.stderr
    refreshed = refresh_one(ws, fmt, rel)
    assert refreshed.exit_code == 0, refreshed.stdout + refreshed.stderr
    comp = comparison(ws, fmt, rel)
    decided = replace(ws, fmt, rel)
    assert decided.exit_code == 0, decided.stdout + decided.stderr
    assert decided.json["result"]["consolidation"]["status"] == "activated"
    return comp


def search_ids(ws: Path, query: str) -> list[str]:
    found = tht(ws, "search", query)
    assert found.exit_code == 0, found.stdout + found.stderr
    return [h["id"] for h in found.json["result"]["hits"]]


def error_of(result: CliResult) -> dict[str, Any]:
    """The first error object of a failed ``--json`` run (never a traceback: exit != 70),
    its envelope checked against the CLI schema."""
    assert result.exit_code not in (0, 70), result.stdout + result.stderr
    return envelope(result)["errors"][0]  # type: ignore[no-any-return]
