"""Every ``--json`` run prints exactly one object matching schemas/cli/envelope.schema.json."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_helpers import UNIT, UNIT_PATH, retitle, stage_review_item
from helpers import envelope

COMMANDS = [
    ("init",),
    ("validate",),
    ("status",),
    ("consolidate", "--dry-run"),
    ("consolidate", "--no-activate"),
    ("consolidate",),
    ("show", UNIT),
    ("show", "evidence:unknown"),
    ("diff",),
    ("diff", "baseline", "active"),
    ("diff", "nope"),
    ("log",),
    ("verify",),
    ("restore", UNIT),
    ("review", "resolve", UNIT, "--note", "fine"),
    ("recover",),
    ("export",),
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_prints_one_envelope(consolidated: Path, tht, command) -> None:
    retitle(consolidated / UNIT_PATH)
    result = tht(*command, root=consolidated)  # the fixture validates the envelope
    value = result.json
    assert value["workspace"] == str(consolidated)
    assert value["command"].startswith("workspace evidence ")
    assert result.exit_code in (0, 2), result.stdout


@pytest.mark.parametrize(
    "setup",
    ["curated-missing", "review-item", "reserved-id"],
)
def test_failures_print_one_envelope_too(consolidated: Path, tht, setup: str) -> None:
    if setup == "curated-missing":
        (consolidated / "evidence/curated").rename(consolidated / "evidence/elsewhere")
    elif setup == "review-item":
        stage_review_item(consolidated)
    else:
        data = (consolidated / UNIT_PATH).read_bytes()
        (consolidated / UNIT_PATH).unlink()
        tht("consolidate", root=consolidated)
        (consolidated / UNIT_PATH).write_bytes(data)
    result = tht("consolidate", root=consolidated)
    assert result.exit_code in (1, 6)
    assert result.json["ok"] is False and result.json["errors"]
    assert all(e["hint"] for e in result.json["errors"])


def test_usage_errors_keep_the_json_promise(cli, consolidated: Path) -> None:
    for argv in (
        ["workspace", "evidence", "show", "--json", "--workspace-root", str(consolidated)],
        ["workspace", "evidence", "consolidate", "--bogus", "--json"],
        ["workspace", "evidence", "review", "resolve", UNIT, "--json"],
    ):
        result = cli(argv)
        assert result.exit_code == 2, argv
        value = envelope(result)
        assert value["ok"] is False and value["errors"][0]["code"] == "E901"


def test_progress_and_logs_stay_off_stdout(consolidated: Path, tht) -> None:
    retitle(consolidated / UNIT_PATH)
    result = tht("consolidate", root=consolidated)
    assert result.stdout.count("\n") == 1
