"""A hand-damaged ``.local/staged.json`` that is valid JSON but not the file's shape.

Not-JSON was refused with E701 already; a JSON array, a scalar, or a section that is
not an object crashed ``status``, ``consolidate`` and ``verify`` with a traceback
(exit 70), and a section written as a list of pairs was read as a mapping.  Each
shape here must be refused with E701 naming the file, and nothing recorded.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from cli_runner import tht
from helpers import codes

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "workspace"
UNITS = ["enum/triage-code.md", "glossary/ward.md", "mapping/tax-code.md"]

DAMAGED = [
    '[{"declarations": {}}]',  # the object wrapped in an array
    "42",
    "true",
    '"staged"',
    "null",
    '{"retirements": ["glossary.ward"]}',
    '{"restorations": 3}',
    '{"review_items": null}',
    '{"resolutions": "ok"}',
    '{"declarations": [["glossary.ward", {"content_hash": "x"}]]}',  # pairs, not an object
]


@pytest.fixture(scope="module")
def consolidated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("staged") / "ws"
    (ws / "evidence/curated").mkdir(parents=True)
    shutil.copy(FIXTURE / "workspace.yaml", ws / "workspace.yaml")
    for rel in UNITS:
        dest = ws / "evidence/curated" / rel
        dest.parent.mkdir(exist_ok=True)
        shutil.copy(FIXTURE / "evidence/curated" / rel, dest)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("THT_ACTOR", "ines")
        assert tht(ws, "init").exit_code == 0
        assert tht(ws, "consolidate", "--no-activate").exit_code == 0
    return ws


def _digest(ws: Path) -> str:
    h = hashlib.sha256()
    for path in sorted((ws / "evidence").rglob("*")):
        if path.is_file():
            h.update(path.relative_to(ws).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize("content", DAMAGED)
@pytest.mark.parametrize("command", ["status", "consolidate", "verify"])
def test_a_damaged_staged_file_is_refused_with_e701(
    consolidated: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    content: str,
    command: str,
) -> None:
    monkeypatch.setenv("THT_ACTOR", "ines")
    ws = tmp_path / "ws"
    shutil.copytree(consolidated, ws)
    staged = ws / "evidence/.local/staged.json"
    staged.write_text(content, encoding="utf-8")
    before = _digest(ws)

    result = tht(ws, command)

    assert result.exit_code not in (0, 70), result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "E701" in codes(result), result.stdout
    assert any(Path(e["path"] or "").name == "staged.json" for e in result.json["errors"]), (
        result.stdout
    )
    assert _digest(ws) == before  # refused before anything was written
