"""No manifest key is spelled outside the archive (issue 18): other packages read a
snapshot's manifest through its typed view (``Snapshot.view``, ``entries()``,
``deletions``), so the manifest's layout has one owner, ``evidence_tool/archive``."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "evidence_tool"
# Keys of the snapshot manifest's top level: read through archive.manifest.Manifest.
TOP_KEYS = {"units", "deletions", "suppressed_sources", "sources", "catalog", "format"}


def manifest_key_reads(package: Path) -> tuple[int, list[str]]:
    """(files scanned, places outside archive/ that index or .get() a ``.manifest``)."""
    found, scanned = [], 0
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] == "archive":
            continue
        scanned += 1
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            target = key = None
            if isinstance(node, ast.Subscript):
                target, key = node.value, node.slice
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
            ):
                target, key = node.func.value, node.args[0]
            indexed = (
                isinstance(target, ast.Attribute)
                and target.attr == "manifest"
                and isinstance(key, ast.Constant)
                and key.value in TOP_KEYS
            )
            spelled = isinstance(node, ast.Constant) and node.value == "suppressed_sources"
            if indexed or spelled:
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return scanned, found


def test_no_package_but_the_archive_reads_manifest_keys() -> None:
    scanned, found = manifest_key_reads(PACKAGE)
    assert scanned > 100  # the whole package outside archive/ was read
    assert found == [], "read these through Snapshot.view / entries() / deletions instead"


def test_the_check_finds_a_manifest_key_read(tmp_path: Path) -> None:
    """The check can fail: each spelling it forbids is found."""
    pkg = tmp_path / "evidence_tool"
    (pkg / "archive").mkdir(parents=True)
    (pkg / "archive" / "ok.py").write_text('x = snap.manifest["units"]\n')  # the owner may
    (pkg / "report").mkdir()
    (pkg / "report" / "bad.py").write_text(
        'a = snap.manifest["units"]\nb = newest.manifest.get("catalog")\nc = "suppressed_sources"\n'
    )
    scanned, found = manifest_key_reads(pkg)
    assert scanned == 1
    assert found == [
        "evidence_tool/report/bad.py:1",
        "evidence_tool/report/bad.py:2",
        "evidence_tool/report/bad.py:3",
    ]
