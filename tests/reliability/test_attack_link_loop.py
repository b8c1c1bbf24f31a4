"""A link loop in the curated tree (a link to itself, or two links to each other): the
commands that read the units name each file with a coded error, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from cli_runner import tht

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
