"""A no-op reads workspace.yaml and state.yaml with the line reader for YAML as the tool
writes it (unit/_speed/yaml_fast.py, issue 20), libyaml left unloaded.  That shortcut may not
miss an edit or accept a file the strict parser refuses, and a key given twice is
refused in both files (SPEC.md 2), never resolved in favour of either value."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import run_tht

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate
from evidence_tool.archive.state import State, read_state, render_state
from evidence_tool.errors import IntegrityError

CONSOLIDATE = ("workspace", "evidence", "consolidate", "--json")


def _run(root: Path, *args: str) -> tuple[int, dict[str, object]]:
    done = run_tht(root, *args)
    assert done.returncode != 70, done.stderr  # never a crash
    return done.returncode, json.loads(done.stdout)


def _codes(envelope: dict[str, object]) -> list[str]:
    return [e["code"] for e in envelope["errors"]]  # type: ignore[index, union-attr]


@pytest.fixture
def warm(tmp_path: Path) -> Path:
    """A consolidated workspace."""
    root = generate(6, tmp_path / "ws", seed=11)
    assert _run(root, *CONSOLIDATE)[0] == 0
    return root


# Each edit keeps the file's size where it can, so only the bytes tell it apart.
EDITS = {
    "an anchor": (lambda t: t.replace("name: Benchmark", "name: &b Bench"), "E902"),
    # SPEC.md 2: strict YAML refuses duplicate keys; the first value must not win silently
    "duplicate key": (lambda t: t.replace("name: Benchmark", "id: bench\nname: Bench"), "E902"),
    "schema-invalid value": (
        lambda t: t.replace("default_language: en", "default_language: 7"),
        "E902",
    ),
    "not YAML": (lambda t: t.replace("name: Benchmark", "name: [Benchmar"), "E902"),
    "a tag": (lambda t: t.replace("name: Benchmark", "name: !!str Bench"), "E902"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_attack_workspace_yaml_edited_after_a_consolidate(warm: Path, edit: str) -> None:
    change, code = EDITS[edit]
    descriptor = warm / "workspace.yaml"
    original = descriptor.read_text()
    edited = change(original)
    assert edited != original
    descriptor.write_text(edited)
    status, envelope = _run(warm, *CONSOLIDATE)
    assert status != 0 and _codes(envelope) == [code], envelope
    if edit == "duplicate key":  # the error says what to do next
        assert "duplicate key 'id'; keep one of them" in json.dumps(envelope), envelope
    descriptor.write_text(original)
    assert _run(warm, *CONSOLIDATE)[0] == 0


REV_A, REV_B = "a" * 64, "0123456789abcdef" * 4
# Valid YAML for the same state, not in the tool's own form: read by the strict parser.
SAME_STATE = [
    f"format: 1\nbaseline: {REV_A}\nactive: {REV_B}\npending: null\n# a note\n",
    f"format: 1\nbaseline: '{REV_A}'\nactive: \"{REV_B}\"\npending: ~\n",
    f"active: {REV_B}\nformat: 1\npending:\nbaseline: {REV_A}\n",
    f"{{format: 1, baseline: {REV_A}, active: {REV_B}, pending: null}}\n",
]
# Files the strict reader refuses, some one character away from the tool's own form.
REFUSED = [
    f"format: 1\nbaseline: {REV_A[:-1]}\nactive: {REV_B}\npending: null\n",
    f"format: 1\nbaseline: {REV_A.upper()}\nactive: {REV_B}\npending: null\n",
    f"format: 2\nbaseline: {REV_A}\nactive: {REV_B}\npending: null\n",
    f"format: 1\nbaseline: {REV_A}\nactive: {REV_B}\npending: null\nextra: 1\n",
    f"format: 1\nbaseline: {REV_A}\nactive: {REV_B}\npending: nul\n",
    f"format: 1\nbaseline: {REV_A}\nactive: {REV_B}\npending: null\nactive: {REV_A}\n",
    f"format: 1\nbaseline: {REV_A}\nactive: {REV_B}\n",
]


def test_state_yaml_in_another_valid_form_reads_the_same(tmp_path: Path) -> None:
    expected = State(REV_A, REV_B, None)
    canonical = tmp_path / "canonical.yaml"
    canonical.write_bytes(render_state(expected))
    assert read_state(canonical) == expected
    for i, text in enumerate(SAME_STATE):
        path = tmp_path / f"state-{i}.yaml"
        path.write_text(text)
        assert read_state(path) == expected, text
    assert i + 1 == len(SAME_STATE) == 4


def test_attack_state_yaml_one_character_off_is_still_refused(tmp_path: Path) -> None:
    refused = 0
    for i, text in enumerate(REFUSED):
        path = tmp_path / f"state-{i}.yaml"
        path.write_text(text)
        with pytest.raises(IntegrityError):
            read_state(path)
        refused += 1
    assert refused == len(REFUSED) == 7
