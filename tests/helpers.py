"""Helpers every test folder shares, importable by name (``from helpers import codes``).

One copy each: the folders' own helper modules (archive_helpers, unit_helpers...)
hold only what their folder needs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def codes(found: Any) -> list[str]:
    """The error codes, in report order, of any of the shapes a test holds:

    a CLI result (its ``.json`` envelope), a JSON envelope (``{"errors": [...]}``), a
    ParseResult or ValidationReport (``.errors`` of Diagnostic), an EvidenceError
    (``.diagnostics``), or a list of Diagnostic or JSON error objects.
    """
    if not isinstance(found, Mapping | list) and hasattr(found, "json"):
        found = found.json
    if isinstance(found, Mapping):
        found = found["errors"]
    elif hasattr(found, "diagnostics"):
        found = found.diagnostics
    elif hasattr(found, "errors"):
        found = found.errors
    return [e["code"] if isinstance(e, Mapping) else e.code for e in found]


def envelope(result: Any) -> dict[str, Any]:
    """The one JSON line on stdout of a ``--json`` run, checked against
    schemas/cli/envelope.schema.json; its ``ok`` must agree with the exit code.

    ``result`` is a CLI result (``stdout``, ``exit_code``) or stdout itself.
    """
    import jsonschema

    from evidence_tool.unit.schemas import load_schema

    stdout = result if isinstance(result, str) else result.stdout
    assert stdout.endswith("\n") and stdout.count("\n") == 1, (
        f"stdout must hold exactly one JSON line: {stdout[:500]!r}"
    )
    value = json.loads(stdout)
    schema = load_schema("cli/envelope.schema.json")
    validator = jsonschema.validators.validator_for(schema)(schema)
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]
    assert not problems, f"envelope does not match its schema: {problems}"
    if not isinstance(result, str):
        assert value["ok"] is (result.exit_code == 0), value
    return value  # type: ignore[no-any-return]


def run_tht(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``tht`` in a real subprocess from ``cwd``, no installation from the
    environment."""
    env = {k: v for k, v in os.environ.items() if k != "THT_INSTALLATION"}
    tht = Path(sys.executable).with_name("tht")
    return subprocess.run(
        [str(tht), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


REPO = Path(__file__).resolve().parents[1]

_REPORT_MODULES = (
    "import sys\n"
    "from evidence_tool.cli.main import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as exc:\n"
    "    assert exc.code == 0, exc.code\n"
    "print('\\n' + __import__('json').dumps(sorted(sys.modules)))\n"
)


def tht_modules(cwd: Path, *args: str) -> tuple[set[str], str]:
    """The modules a ``tht ARGS`` process of this tree loaded, and what it printed first
    (the command must succeed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", _REPORT_MODULES, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**env, "PYTHONPATH": str(REPO)},
        timeout=300,
    )
    *text, modules = out.stdout.strip().splitlines()
    return set(json.loads(modules)), "\n".join(text)


def render_local_manifest_generic(manifest: dict[str, Any], revision: str) -> bytes:
    """local-manifest.yaml through the general emitter only: the reference the fast,
    spliced rendering (archive/manifest.py) must equal byte for byte."""
    from evidence_tool.archive.manifest import _FLOW_KEYS, FORMAT, _ordered, mirror_header
    from evidence_tool.unit.yaml_strict import dump

    doc: dict[str, Any] = {"format": FORMAT, "revision": revision}
    for key in ("units", "deletions", "suppressed_sources", "sources"):
        doc[key] = _ordered(manifest.get(key, []))
    if "catalog" in manifest:
        doc["catalog"] = _ordered(manifest["catalog"])
    return (mirror_header(revision) + dump(doc, flow_keys=_FLOW_KEYS)).encode("utf-8")


def loaded_postings(cache: Any, revision: str, timeout: float = 120.0) -> Any:
    """``PostingsCache.get``, waiting for its background load to end (None: the file's
    state was loaded, or failed to, without ``revision``)."""
    import time

    from evidence_tool.activation._speed.postings import _stat_key

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = cache.get(revision)
        if found is not None:
            return found
        with cache._lock:
            settled = not cache._loading and cache._tried == _stat_key(cache.path)
        if settled:  # no load runs: one that ended since the look above holds it now
            return cache.get(revision, load=False)
        time.sleep(0.01)
    return None
