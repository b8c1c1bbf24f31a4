"""``fmt --check --diff`` shows the change it wants, as a unified diff that ``patch``
applies (issue 34 item 9); ``--diff`` writes nothing."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke
from helpers import codes, envelope


@pytest.fixture
def untidy(tmp_path: Path) -> tuple[Path, list[Path]]:
    root = tmp_path / "ledger"
    assert (
        invoke(
            ["workspace", "new", str(root), "--id", "ledger", "--language", "en", "--example"]
        ).exit_code
        == 0
    )
    curated = root / "evidence/curated"
    crlf = curated / "formula/average-order-value.md"
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    spaced = curated / "glossary/customer.md"
    spaced.write_text(
        spaced.read_text(encoding="utf-8").replace("\n## ", "\n\n\n## "), encoding="utf-8"
    )
    return root, [crlf, spaced]


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "evidence/curated").rglob("*.md"))
    }


def test_check_diff_prints_a_unified_diff_per_file_and_writes_nothing(
    untidy: tuple[Path, list[Path]],
) -> None:
    root, changed = untidy
    before = _digests(root)
    result = invoke(["evidence", "fmt", "--check", "--diff", str(root)])
    assert result.exit_code == 1, result.stderr
    for path in changed:
        shown = str(path)
        assert f"--- {shown}\n" in result.stdout and f"+++ {shown}\n" in result.stdout
    assert result.stdout.count("\n@@ ") >= 2
    assert _digests(root) == before  # nothing written

    out = envelope(invoke(["evidence", "fmt", "--check", "--diff", str(root), "--json"]))
    assert codes(out) == ["E117", "E117"]
    assert sorted(out["result"]["diffs"]) == sorted(str(p) for p in changed)  # type: ignore[index]


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_the_diff_applied_with_patch_gives_what_fmt_writes(
    untidy: tuple[Path, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, [_crlf, spaced] = untidy
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    monkeypatch.chdir(tmp_path)
    rel = spaced.relative_to(tmp_path).as_posix()
    diff = invoke(["evidence", "fmt", "--diff", rel])
    assert diff.exit_code == 0, diff.stderr  # --diff alone reports, as formatters do
    assert _digests(twin) == _digests(root)  # and writes nothing
    patched = subprocess.run(
        ["patch", "-p0", "--batch", "--silent"],
        input=diff.stdout.replace(f" {rel}\n", f" {rel.replace('ledger/', 'twin/', 1)}\n"),
        text=True,
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert patched.returncode == 0, patched.stdout + patched.stderr
    assert invoke(["evidence", "fmt", rel]).exit_code == 0
    assert _digests(twin) == _digests(root)
    assert (
        invoke(["evidence", "fmt", "--check", str(twin / "evidence/curated/glossary")]).exit_code
        == 0
    )
