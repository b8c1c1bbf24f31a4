"""`tht evidence fmt` racing an editor: a save that lands between fmt's read and its
rename belongs to the operator and is never replaced by fmt's canonical copy of the
bytes it read before."""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_workspace import unit_text
from cli_runner import invoke

from evidence_tool import fsio

# Valid but not canonical: purposes in block style, extra blank lines after the title.
LOOSE = (
    unit_text(7)
    .replace("purposes: [disambiguation]", "purposes:\n  - disambiguation")
    .replace("# Dosage form 7\n", "# Dosage form 7\n\n\n")
)


@pytest.mark.parametrize("files", [1, 5])
def test_attack_editor_saves_a_unit_while_fmt_rewrites_it(tmp_path: Path, files: int) -> None:
    folder = tmp_path / "ward-formulary" / "evidence" / "curated" / "glossary"
    folder.mkdir(parents=True)
    paths = [folder / f"form-{n}.md" for n in range(files)]
    for n, path in enumerate(paths):
        path.write_text(LOOSE.replace("form-7", f"form-{n}").replace("form 7", f"form {n}"))
    victim = paths[-1]
    saved = unit_text(len(paths) - 1, "suppository").encode()
    fired: list[str] = []

    def editor_saves(op: str, path: str, phase: str) -> None:
        if op == "replace" and path == str(victim) and phase == "before" and not fired:
            fired.append(path)
            victim.write_bytes(saved)  # the curator's editor, a moment before fmt's rename

    fsio.set_hook(editor_saves)
    try:
        result = invoke(["evidence", "fmt", str(folder), "--json"])
    finally:
        fsio.set_hook(None)
    assert fired == [str(victim)], "the race never happened: the test proves nothing"
    assert victim.read_bytes() == saved, "fmt replaced the editor's save"
    assert result.exit_code == 3, result.stdout
    assert [e["code"] for e in result.json["errors"]] == ["E301"]
    assert str(victim.name) in result.json["errors"][0]["message"] + str(
        result.json["errors"][0]["path"]
    )
    # The other files were formatted; running fmt again settles the victim too.
    for path in paths[:-1]:
        assert "purposes: [disambiguation]" in path.read_text()
    again = invoke(["evidence", "fmt", str(folder), "--json"])
    assert again.exit_code == 0, again.stdout
    assert not [p for p in folder.iterdir() if p.name.endswith((".tmp", ".parked"))]
