"""A small workspace unlike the shipped fixture, for the attack tests of issue 14."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cli_runner import tht


def unit_text(n: int, word: str = "tablet") -> str:
    return (
        "---\nschema_version: 4\n"
        f"id: evidence:pharmacy:form-{n}\nkind: glossary\nlanguage: en\n"
        "purposes: [disambiguation]\n---\n\n"
        f"# Dosage form {n}\n\n## Definition\n\nA {word} dispensed from ward cabinet {n}.\n"
    )


def pharmacy_workspace(root: Path, units: int = 3) -> Path:
    """A small initialized workspace, unlike the shipped fixture."""
    (root / "evidence/curated/glossary").mkdir(parents=True)
    (root / "evidence/incoming").mkdir()
    (root / "evidence/source").mkdir()
    (root / "workspace.yaml").write_text(
        "descriptor_version: 4\nid: pharmacy-ops\nname: Pharmacy ops\n"
        "default_language: en\nevidence:\n  descriptor_version: 1\n  sources: []\n"
    )
    for n in range(units):
        (root / f"evidence/curated/glossary/form-{n}.md").write_text(unit_text(n))
    (root / "evidence/incoming/cabinets.md").write_text("# Cabinets\n\nCabinet 4 is cold.\n")
    assert tht(root, "init").exit_code == 0
    # Init sets the baseline only: one edit activates a snapshot and builds the index.
    (root / "evidence/curated/glossary/form-0.md").write_text(unit_text(0, "syrup"))
    assert tht(root, "consolidate").exit_code == 0
    assert tht(root, "search", "syrup").json["result"]["hits"]
    return root


def tree(top: Path) -> dict[str, str]:
    """Every file under ``top`` (links not followed) with the sha256 of its bytes."""
    out = {}
    for dirpath, _dirs, names in os.walk(top):
        for name in names:
            path = Path(dirpath, name)
            data = os.readlink(path) if path.is_symlink() else path.read_bytes()
            out[str(path.relative_to(top))] = hashlib.sha256(
                data.encode() if isinstance(data, str) else data
            ).hexdigest()
    return out


def fingerprint(path: Path) -> dict[str, str]:
    """``tree`` of a folder, or the sha256 of one file."""
    if path.is_dir() and not path.is_symlink():
        return tree(path)
    return {"": hashlib.sha256(path.read_bytes()).hexdigest()}
