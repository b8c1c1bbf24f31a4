"""Messages that say what the user can do (issue 34 items 2 and 6): E503 names what is
fixed and what can be raised; E106 on a language gives the form it wants."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke
from helpers import codes, envelope

from evidence_tool.errors import CODES
from evidence_tool.sources import policy


def test_too_many_documents_for_one_refresh_is_told_how_to_proceed(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    assert (
        invoke(["workspace", "new", str(root), "--id", "wiki", "--language", "en"]).exit_code == 0
    )
    incoming = root / "evidence/incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    for n in range(policy.MAX_DOCUMENTS + 7):
        (incoming / f"page-{n:03d}.md").write_text(f"# Page {n}\n\nLine {n}.\n", encoding="utf-8")
    assert invoke(["workspace", "evidence", "init", "--workspace-root", str(root)]).exit_code == 0
    result = invoke(["workspace", "evidence", "refresh", "--workspace-root", str(root), "--json"])
    out = envelope(result)
    assert codes(out) == ["E503"] and result.exit_code == 5
    hint = out["errors"][0]["hint"]
    assert "--source-id" in hint, hint
    # The count and total bounds are constants: the hint must not offer to raise them.
    assert "raise the limit" not in hint
    assert "max_bytes" in hint and "one document" in hint, hint
    for bound in ("200", "100 MiB", "10,000"):
        assert bound in hint, (bound, hint)


def test_the_e503_hint_states_the_bounds_the_code_enforces() -> None:
    hint = CODES["E503"].fix
    assert f"{policy.MAX_DOCUMENTS} documents" in hint
    assert f"{policy.MAX_TOTAL_BYTES // (1024 * 1024)} MiB" in hint
    assert f"{policy.MAX_LISTED:,}" in hint


@pytest.mark.parametrize("written", ["english", "Italiano", "EN", "en_US", "it-"])
def test_a_language_that_is_not_a_tag_is_told_the_form(tmp_path: Path, written: str) -> None:
    unit = tmp_path / "term.md"
    unit.write_text(
        "---\nschema_version: 4\nid: evidence:t:term\nkind: glossary\n"
        f"language: {written}\npurposes: [disambiguation]\n---\n\n# Term\n\n"
        "## Definition\n\nA word.\n",
        encoding="utf-8",
    )
    out = envelope(invoke(["evidence", "validate", str(unit), "--json"]))
    assert codes(out) == ["E106"], out
    message = out["errors"][0]["message"]
    assert "BCP 47" in message and "'it-CH'" in message and "'en'" in message, message
