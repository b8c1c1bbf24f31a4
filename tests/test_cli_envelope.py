"""Every --json envelope, the crash's and the usage error's too, comes from one builder.

A command body that crashes (here: a real subprocess whose body raises) must still
print one schema-valid object whose error carries the hint of its code, as every
other error does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import jsonschema

from evidence_tool.errors import CODES
from evidence_tool.unit.schemas import load_schema

ENVELOPE = load_schema("cli/envelope.schema.json")

_CRASHING_BODY = textwrap.dedent(
    """
    from evidence_tool.cli.output import Context, run

    def body():
        raise LookupError("an index the code took for granted")

    run(Context(as_json=True, command="workspace evidence status", workspace="/ws"), body)
    """
)


def _one_envelope(stdout: str) -> dict[str, object]:
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout
    value: dict[str, object] = json.loads(lines[0])
    jsonschema.Draft202012Validator(ENVELOPE).validate(value)
    return value


def test_crash_envelope_carries_the_hint_of_e999() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CRASHING_BODY], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 70, done.stderr
    envelope = _one_envelope(done.stdout)
    assert envelope["ok"] is False and envelope["workspace"] == "/ws"
    assert envelope["command"] == "workspace evidence status"
    errors = envelope["errors"]
    assert isinstance(errors, list) and len(errors) == 1
    assert errors[0]["code"] == "E999"
    assert "LookupError" in errors[0]["message"]
    assert errors[0]["hint"] == CODES["E999"].fix
    assert "Traceback" in done.stderr  # the bug report goes to stderr, not into the JSON


def test_usage_error_envelope_matches_a_diagnostic() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evidence_tool.cli.main",
            "workspace",
            "evidence",
            "no-such",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    envelope = _one_envelope(done.stdout)
    errors = envelope["errors"]
    assert isinstance(errors, list) and len(errors) == 1
    assert errors[0]["code"] == "E901" and errors[0]["hint"] == CODES["E901"].fix
