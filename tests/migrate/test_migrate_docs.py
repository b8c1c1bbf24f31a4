"""docs/legacy-formats.md stays true: its examples migrate to the v4 files it shows, and its
table of refusals names exactly the lossy fixtures."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from migrate_support import LEGACY

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.migrate import migrate

DOC = Path(__file__).resolve().parents[2] / "docs" / "legacy-formats.md"
BLOCK = re.compile(r"<!-- (legacy-example|converted): (\S+) -->\n```(\w+)\n(.*?)\n```\n", re.S)


def blocks(kind: str) -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    return {m.group(2): m.group(4) + "\n" for m in BLOCK.finditer(text) if m.group(1) == kind}


def test_the_examples_convert_to_the_files_the_page_shows(tmp_path: Path) -> None:
    examples = blocks("legacy-example")
    assert len(examples) == 5  # v1, v2, v3, the cited source, the manifest
    root = tmp_path / "ws"
    for rel, text in examples.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "workspace.yaml").write_text(
        "descriptor_version: 4\nid: sales\nname: Sales\ndefault_language: en\n"
        "evidence:\n  descriptor_version: 1\n  sources: []\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    result = migrate(root, "migrator")
    assert result.status == "migrated"
    assert [u.entry.version for u in result.plan.units] == [1, 2, 3]  # type: ignore[union-attr]
    converted = blocks("converted")
    assert converted
    for rel, text in converted.items():
        assert (root / rel).read_text(encoding="utf-8") == text, rel
    baseline = LocalEvidenceArchive(root).newest_snapshot()
    assert baseline is not None
    entry = baseline.entry("evidence:order-status")
    assert entry is not None
    assert entry.provenance["source_path"] in DOC.read_text(encoding="utf-8")
    assert (root / entry.provenance["source_path"]).is_file()
    assert [i["code"] for i in entry.review_items] == ["R-CHECK"]


def test_the_refusal_table_names_every_lossy_fixture() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 8.") : text.index("## 9.")]
    named = set(re.findall(r"^\| `([a-z0-9-]+)` \|", section, re.M))
    assert named == {p.name for p in (LEGACY / "lossy").iterdir()}
