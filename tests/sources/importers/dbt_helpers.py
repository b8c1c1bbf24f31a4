"""Helpers for the dbt importer tests: run the importer on a folder or file, check spans."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from evidence_tool.importers.base import Imported, ImportInput, ImportResult, SourceFile
from evidence_tool.importers.dbt import DbtImporter

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures" / "imports" / "dbt"
PROJECT = FIXTURES / "project"
MANIFEST = FIXTURES / "manifest" / "manifest.json"
MiB = 1024 * 1024


def source_of(
    root: Path,
    options: dict[str, Any] | None = None,
    language: str = "en",
    max_bytes: int = 10 * MiB,
) -> ImportInput:
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    files = tuple(
        SourceFile(
            p.name if root.is_file() else p.relative_to(root).as_posix(), p, p.stat().st_size
        )
        for p in paths
    )
    return ImportInput(files, options or {}, language, max_bytes)


def read(root: Path, **kwargs: Any) -> ImportResult:
    return DbtImporter().read(source_of(root, **kwargs))


def by_id(result: ImportResult) -> dict[str, Imported]:
    out: dict[str, Imported] = {}
    for imported in result.units:
        assert imported.unit.id not in out, f"{imported.unit.id} proposed twice"
        out[imported.unit.id] = imported
    return out


def assert_spans_exact(root: Path, result: ImportResult) -> int:
    """Every span's text is exactly the file's bytes at its range; returns how many were checked."""
    checked = 0
    for imported in result.units:
        assert imported.spans, f"{imported.unit.id} has no span"
        for span in imported.spans:
            path = root if root.is_file() else root / span.path
            raw = path.read_bytes()
            assert 0 <= span.start < span.end <= len(raw), (imported.unit.id, span)
            assert raw[span.start : span.end].decode("utf-8") == span.text, (imported.unit.id, span)
            checked += 1
    return checked


def copy_project(tmp_path: Path) -> Path:
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest)
    return dest


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path
