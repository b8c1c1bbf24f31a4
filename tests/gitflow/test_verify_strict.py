"""``verify --strict``: every tampering case fails naming the path (E701; an unconsolidated
edit E703, an invalid unit file E704); a clean clone passes."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gitflow_helpers import Checkout, edit_unit, git, invoke


def verify(ws: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = invoke(
        ["workspace", "evidence", "verify", "--workspace-root", str(ws), "--json", *extra]
    )
    return result.exit_code, result.json


def broken_paths(out: dict[str, Any], code: str = "E701") -> set[str]:
    assert {e["code"] for e in out["errors"]} == {code}
    return {e["path"] for e in out["errors"]}


def active(ws: Path) -> str:
    state = (ws / "evidence/.local/state.yaml").read_text(encoding="utf-8")
    return next(line.split()[1] for line in state.splitlines() if line.startswith("active:"))


def test_a_fresh_clone_of_a_consolidated_checkout_passes(
    checkout: Checkout, tmp_path: Path
) -> None:
    edit_unit(checkout.ws)
    result = invoke(["workspace", "evidence", "consolidate", "--workspace-root", str(checkout.ws)])
    assert result.exit_code == 0
    checkout.commit_all("consolidated edit")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(checkout.top), str(clone))
    code, out = verify(clone / checkout.prefix, "--strict")
    assert code == 0, out
    assert out["result"]["checked"]["git"] is True
    assert out["result"]["checked"]["unit_files"] == 48


def hand_edit_manifest(co: Checkout) -> str:
    path = co.ws / "evidence/local-manifest.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("psd-curator", "mallory", 1), encoding="utf-8"
    )
    return "evidence/local-manifest.yaml"


def hand_edit_acquired_source(co: Checkout) -> str:
    text = b"# Lab handbook\n\nHbA1c is reported in mmol/mol.\n"
    digest = hashlib.sha256(text).hexdigest()
    source_id = hashlib.sha256(b"fs:evidence/source/lab-handbook.md").hexdigest()
    rel = f"evidence/source/acquired/{source_id}/{digest}.md"
    (co.ws / rel).parent.mkdir(parents=True)
    (co.ws / rel).write_bytes(text)
    co.commit_all("acquired source")
    code, out = verify(co.ws, "--strict")
    assert code == 0, out  # a name that matches its bytes is fine
    (co.ws / rel).write_bytes(text.replace(b"mmol/mol", b"%"))
    return rel


def remove_snapshot_folder(co: Checkout) -> str:
    folder = co.ws / "evidence/.local/snapshots" / active(co.ws)
    shutil.rmtree(folder)
    return f"evidence/.local/snapshots/{active(co.ws)}/manifest.json"


def unconsolidated_edit(co: Checkout) -> str:
    return edit_unit(co.ws)


def invalid_unit(co: Checkout) -> str:
    rel = "evidence/curated/glossary/drg.md"
    path = co.ws / rel
    path.write_text(
        path.read_text(encoding="utf-8").replace("kind: glossary", "kind: glosary"),
        encoding="utf-8",
    )
    return rel


def deleted_unit(co: Checkout) -> str:
    rel = "evidence/curated/glossary/ward.md"
    (co.ws / rel).unlink()
    return rel


def rewritten_event_log(co: Checkout) -> str:
    log = co.ws / "evidence/.local/log.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[1:]), encoding="utf-8")
    return "evidence/.local/log.jsonl"


def removed_object(co: Checkout) -> str:
    objects = sorted((co.ws / "evidence/.local/objects").rglob("*"))
    victim = next(p for p in objects if p.is_file())
    victim.unlink()
    return co.ws.joinpath(victim).relative_to(co.ws).as_posix()


# The code of each case: damaged managed state is E701; an edit not consolidated (E703)
# and an invalid unit file (E704) have codes of their own, whose hints fit (issue 34).
CODE_OF = {
    "unconsolidated edit": "E703",
    "unconsolidated deletion": "E703",
    "invalid unit file": "E704",
}

TAMPERING: dict[str, Callable[[Checkout], str]] = {
    "hand-edited local-manifest.yaml": hand_edit_manifest,
    "hand-edited acquired source": hand_edit_acquired_source,
    "missing snapshot folder": remove_snapshot_folder,
    "unconsolidated edit": unconsolidated_edit,
    "invalid unit file": invalid_unit,
    "unconsolidated deletion": deleted_unit,
    "rewritten event log": rewritten_event_log,
    "removed object": removed_object,
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_strict_fails_on_tampering(checkout: Checkout, case: str) -> None:
    broken = TAMPERING[case](checkout)
    code, out = verify(checkout.ws, "--strict")
    assert code == 7, out
    assert out["ok"] is False
    assert broken in broken_paths(out, CODE_OF.get(case, "E701")), json.dumps(
        out["errors"], indent=1
    )


def test_only_strict_fails_on_unconsolidated_edits(checkout: Checkout) -> None:
    rel = edit_unit(checkout.ws)
    code, _ = verify(checkout.ws)
    assert code == 0
    code, out = verify(checkout.ws, "--strict")
    assert code == 7
    [error] = out["errors"]
    assert error["path"] == rel and error["unit_id"] == "evidence:admission-date"
    assert "not consolidated" in error["message"]


def test_invalid_file_names_its_line(checkout: Checkout) -> None:
    invalid_unit(checkout)
    _, out = verify(checkout.ws, "--strict")
    [error] = out["errors"]
    found = invoke(
        ["workspace", "evidence", "validate", "--workspace-root", str(checkout.ws), "--json"]
    )
    [first] = found.json["errors"]
    assert (error["path"], error["line"], error["column"]) == (
        first["path"],
        first["line"],
        first["column"],
    )
    assert error["line"] is not None and "E106" in error["message"]


def test_strict_outside_git_runs_the_other_checks(workspace: Path) -> None:
    code, out = verify(workspace, "--strict")
    assert code == 0, out
    assert out["result"]["checked"]["git"] is False
    assert any("not inside a Git worktree" in w["message"] for w in out["warnings"])
    edit_unit(workspace)
    code, out = verify(workspace, "--strict")
    assert code == 7
