"""A host embedding the library imports only public names (docs/api.md), and the archive
has SPEC.md section 5's methods, each doing what the CLI's command does."""

from __future__ import annotations

import ast
import hashlib
import importlib
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from evidence_tool.activation import Backend, IndexBackend, backend_for
from evidence_tool.activation.backends import CommandBackend
from evidence_tool.activation.qdrant_index import QdrantBackend
from evidence_tool.activation.sqlite_index import SqliteBackend
from evidence_tool.archive import LocalEvidenceArchive
from evidence_tool.errors import ConflictError, UnknownNameError

REPO = Path(__file__).resolve().parents[1]
API = REPO / "docs" / "api.md"
FACES = ("archive", "sources", "activation", "unit", "errors", "workspace", "gitflow", "migrate")
FACES += ("session",)  # the one face (docs/api.md) is a module, not a package
SPEC_5 = ("initialize", "consolidate", "active_snapshot", "get", "save", "remove", "restore")
UNIT_ID = "evidence:lab:hba1c-unit"  # a fixture unit other than the one docs/api.md edits


def documented_imports() -> list[tuple[str, str]]:
    """(module, name) of every ``from M import N`` on docs/api.md: its Python blocks and the
    import table."""
    text = API.read_text(encoding="utf-8")
    sources = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    sources += re.findall(r"`(from evidence_tool[\w.]* import [\w, ]+)`", text)
    found = []
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evidence_tool"):
                found += [(node.module or "", alias.name) for alias in node.names]
    return found


def test_documented_imports_are_public_names_of_package_faces() -> None:
    imports = documented_imports()
    assert len(imports) >= 30, imports
    for module, name in imports:
        parts = module.split(".")
        assert not any(p.startswith("_") for p in parts), module
        assert len(parts) == 2, f"{module}: a host imports from the package face only"
        face = importlib.import_module(module)
        assert name in face.__all__, f"{name} is not in {module}.__all__"
        assert not name.startswith("_")


@pytest.mark.parametrize("face", FACES)
def test_every_name_of_a_package_face_resolves(face: str) -> None:
    module = importlib.import_module(f"evidence_tool.{face}")
    names = module.__all__
    assert names, face
    for name in names:
        assert getattr(module, name) is not None, f"evidence_tool.{face}.{name}"


def test_the_archive_has_the_methods_of_spec_section_5() -> None:
    for method in SPEC_5:
        assert callable(getattr(LocalEvidenceArchive, method)), method
        assert getattr(LocalEvidenceArchive, method).__doc__, f"{method} has no docstring"


def test_each_shipped_backend_meets_its_protocol(tmp_path: Path) -> None:
    from evidence_tool.workspace.layout import Layout

    layout = Layout.at(tmp_path)
    sqlite = SqliteBackend(layout)
    qdrant = QdrantBackend(layout, {"collection": "evidence", "path": str(tmp_path / "q")})
    command = CommandBackend(layout, ["true"])
    assert isinstance(sqlite, IndexBackend) and isinstance(qdrant, IndexBackend)
    assert isinstance(command, Backend) and not isinstance(command, IndexBackend)
    assert backend_for({"kind": "none"}, layout) is None  # no backend: stays pending
    assert isinstance(backend_for({"kind": "sqlite"}, layout), IndexBackend)


@pytest.fixture
def archive(tmp_path: Path) -> LocalEvidenceArchive:
    ws = tmp_path / "lab"
    fixture = REPO / "fixtures" / "workspace"
    shutil.copytree(fixture, ws, ignore=shutil.ignore_patterns(".evidence-cache"))
    return LocalEvidenceArchive(ws)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_save_with_a_hash_read_before_another_save_is_a_conflict(
    archive: LocalEvidenceArchive,
) -> None:
    first = archive.get(UNIT_ID)
    assert first.unit is not None
    path = archive.layout.root / first.path
    assert sha(path) == first.file_hash
    mine = archive.save(
        replace(first.unit, title="HbA1c units, IFCC first"), first.file_hash, "carol"
    )
    with pytest.raises(ConflictError) as refused:
        archive.save(replace(first.unit, title="stale"), first.file_hash, "dave")
    assert refused.value.code == "E301"
    with pytest.raises(ConflictError):
        archive.remove(UNIT_ID, first.file_hash, "dave")
    assert sha(path) == mine.file_hash  # carol's bytes stand
    assert archive.get(UNIT_ID).unit.title == "HbA1c units, IFCC first"  # type: ignore[union-attr]


def test_remove_then_restore_through_the_archive(archive: LocalEvidenceArchive) -> None:
    held = archive.get(UNIT_ID)
    archive.remove(UNIT_ID, held.file_hash, "carol")
    assert not (archive.layout.root / held.path).exists()
    with pytest.raises(UnknownNameError):
        archive.get(UNIT_ID)
    assert archive.consolidate("carol").changes["deleted"] == [UNIT_ID]
    back = archive.restore(UNIT_ID, "carol")
    assert back.status == "pending_activation" and back.changes["restored"] == [UNIT_ID]
    assert archive.get(UNIT_ID).file_hash == held.file_hash


def test_every_error_class_is_public() -> None:
    """A new error class is part of the hierarchy a host catches: it belongs in __all__."""
    import evidence_tool.errors as errors

    classes = [
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and value.__module__ == errors.__name__
    ]
    assert len(classes) >= 15
    assert sorted(set(classes) - set(errors.__all__)) == []
