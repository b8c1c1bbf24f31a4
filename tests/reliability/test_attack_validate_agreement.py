"""Issue 27: ``tht evidence validate evidence/curated`` (by path, as a CI job runs it with
``--format github``) flags every file the workspace's own ``validate`` flags: hostile and
careless names (blanks, capitals, control characters, a newline that would forge an
annotation, a wrong kind folder, a file at the wrong depth).  Before, the path form read
them as units and passed them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_runner import invoke

NAMES = {
    "blank": "glossary/Bad Name.md",
    "capitals": "glossary/Upper.md",
    "escape": "glossary/e\x1bvil.md",
    "bell": "glossary/b\x07ell.md",
    "newline": "glossary/x\n::error file=evil.md,line=1::forged.md",
    "leading-dot-dash": "glossary/-dash.md",
    "wrong-kind-folder": "enum/term.md",
    "too-deep": "glossary/deeper/term.md",
    "at-curated-root": "term.md",
}


def _findings(result_json: dict[str, Any], base: str) -> set[tuple[str, str]]:
    out = set()
    for e in result_json["errors"]:
        path = e["path"] or ""
        out.add((path.removeprefix(base), e["code"]))
    return out


def test_attack_validate_by_path_flags_what_the_workspace_validate_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    made = invoke(["workspace", "new", str(root), "--id", "t", "--language", "en", "--example"])
    assert made.exit_code == 0, made.stdout
    curated = root / "evidence/curated"
    unit = next((curated / "glossary").glob("*.md"))
    text = unit.read_text()
    monkeypatch.chdir(root)
    ran = 0
    for i, (case, rel) in enumerate(sorted(NAMES.items())):
        target = curated / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # A valid unit of its own id, so only the name or place is wrong.
        target.write_text(text.replace("id: evidence:", f"id: evidence:case{i}.", 1))
        whole = invoke(["workspace", "evidence", "validate", "--json"])
        by_path = invoke(["evidence", "validate", "--json", "evidence/curated"])
        github = invoke(["evidence", "validate", "--format", "github", "evidence/curated"])
        assert whole.exit_code != 0, case
        assert by_path.exit_code == whole.exit_code, (case, by_path.stdout)
        assert github.exit_code == whole.exit_code, case
        assert _findings(by_path.json, "") == _findings(whole.json, ""), case
        assert "E108" in {code for _, code in _findings(by_path.json, "")}, case
        target.unlink()
        if target.parent != curated / "glossary" and not any(target.parent.iterdir()):
            shutil.rmtree(target.parent)
        ran += 1
    assert ran == len(NAMES) == 9
