"""A link loop in the curated tree (a link to itself, or two links to each other): the
commands that read the units name each file with a coded error, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from cli_runner import invoke, tht

COMMANDS = (("validate",), ("consolidate",))


def test_attack_a_link_loop_in_the_curated_tree_is_a_coded_finding(workspace: Path) -> None:
    curated = workspace / "evidence" / "curated"
    os.symlink("self-loop.md", curated / "enum" / "self-loop.md")
    os.symlink("ping.md", curated / "domain" / "pong.md")
    os.symlink("pong.md", curated / "domain" / "ping.md")
    ran = 0
    for command in COMMANDS:
        result = tht(workspace, *command)
        out = result.stdout + result.stderr
        assert result.exit_code not in (0, 70), (command, out)
        assert "Traceback" not in out and "E999" not in out, (command, out)
        named = {e.get("path") or "" for e in result.json["errors"]}
        assert any(p.endswith("self-loop.md") for p in named), (command, named)
        assert any(p.endswith(("ping.md", "pong.md")) for p in named), (command, named)
        ran += 1
    assert ran == len(COMMANDS)
    status = tht(workspace, "status")  # status reports; it does not fail over a bad file
    assert status.exit_code == 0, status.stdout + status.stderr
    invalid = status.json["result"]["unconsolidated"]["invalid"]
    assert sum(p.endswith(("self-loop.md", "ping.md", "pong.md")) for p in invalid) == 3, invalid


def test_a_link_loop_is_named_as_one_with_what_to_do(workspace: Path) -> None:
    """The finding says it is a link loop and how to end it; nothing about encodings."""
    curated = workspace / "evidence" / "curated"
    ring = [curated / "formula" / f"{name}.md" for name in ("rho", "sigma", "tau")]
    for link, target in zip(ring, [*ring[1:], ring[0]], strict=True):
        os.symlink(target.name, link)  # rho -> sigma -> tau -> rho
    os.symlink("../glossary/mirror.md", curated / "glossary" / "mirror.md")
    loops = {str(p.relative_to(workspace)) for p in ring} | {"evidence/curated/glossary/mirror.md"}
    checked = 0
    for result in (
        tht(workspace, "validate"),
        tht(workspace, "consolidate"),
        invoke(["evidence", "validate", str(workspace), "--json"]),
        invoke(["evidence", "validate", str(ring[1]), str(curated / "glossary"), "--json"]),
    ):
        errors = result.json["errors"]
        named = {
            e["path"]: e
            for e in errors
            if e["path"] and e["path"].endswith(("rho.md", "sigma.md", "tau.md", "mirror.md"))
        }
        assert named, errors
        for path, error in named.items():
            assert any(path.endswith(rel) for rel in loops), path
            assert error["code"] == "E118", error
            text = (error["message"] + " " + error["hint"]).lower()
            assert "symbolic link loop" in error["message"], error
            assert "remove the link" in error["hint"].lower(), error
            assert "utf-8" not in text and "bom" not in text, error
            checked += 1
    assert checked == 4 + 4 + 4 + 2
