"""The shared helpers read error codes from every shape a test holds, in report order."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import CliResult, invoke
from helpers import codes, envelope

from evidence_tool.errors import Diagnostic, InvalidFilesError
from evidence_tool.unit import parse_unit


def test_codes_of_every_shape() -> None:
    envelope = {"ok": False, "errors": [{"code": "E301"}, {"code": "E108"}]}
    result = CliResult(3, '{"ok": false, "errors": [{"code": "E303"}]}', "")
    parsed = parse_unit(b"---\nschema_version: 4\n---\n")
    diagnostics = [Diagnostic("E120", "twice"), Diagnostic("E113", "where")]
    assert codes(envelope) == ["E301", "E108"]
    assert codes(result) == ["E303"]
    assert codes(parsed) and all(c.startswith("E1") for c in codes(parsed))
    assert codes(diagnostics) == ["E120", "E113"]
    assert sorted(codes(InvalidFilesError(diagnostics))) == ["E113", "E120"]
    assert codes({"errors": []}) == []


def test_envelope_holds_the_cli_to_one_schema_valid_line(tmp_path: Path) -> None:
    result = invoke(
        ["workspace", "evidence", "status", "--workspace-root", str(tmp_path / "no"), "--json"]
    )
    assert result.exit_code == 6
    assert codes(envelope(result)) == ["E603"]
    assert codes(envelope(result.stdout)) == ["E603"]
    with pytest.raises(AssertionError):
        envelope(CliResult(0, result.stdout, ""))  # "ok": false with exit 0
    with pytest.raises(AssertionError):
        envelope(result.stdout + result.stdout)  # two lines
    with pytest.raises(AssertionError):
        envelope(result.stdout.replace('"ok"', '"okay"'))  # off the schema


class _LoadEndsAfterTheLook:
    """A postings cache whose background load ends right after ``get`` looked: the
    window the CI run of stop 40 hit (the held revision was the one asked for)."""

    def __init__(self, path: Path) -> None:
        import threading

        from evidence_tool.activation._speed.postings import _stat_key

        self.path, self._lock = path, threading.Lock()
        self._loading, self._tried, self._held = True, _stat_key(path), None
        self.looks = 0

    def get(self, revision: str, load: bool = True) -> object:
        self.looks += 1
        held, self._held, self._loading = self._held, "postings", False
        return held


def test_loaded_postings_sees_a_load_that_ends_between_its_looks(tmp_path: Path) -> None:
    from helpers import loaded_postings

    index = tmp_path / "index.sqlite"
    index.write_bytes(b"x")
    cache = _LoadEndsAfterTheLook(index)
    assert loaded_postings(cache, "rev", timeout=5) == "postings"
    assert cache.looks == 2
