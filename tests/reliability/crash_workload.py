"""The operations the crash harness interrupts, and the small workspaces they run on.

Each operation has a *template*: a run folder (``ws/`` inside, plus
``params.json`` with what the operation needs) built once in the test process.
Every crash run copies the template and runs the operation there in a forked
child (``zygote.py``), exactly as an operator's command would: the CLI entry
point for commands, the library for ``save``/``remove`` (they have no command).

Workspace ``small``: three curated units and one source document (three
proposed units), consolidated and activated, one ``decide replace`` adopted,
then the document edited (one unit changed, one dropped) and refreshed, so a
comparison that changes and retires units is pending.  ``THT_SOAK=1`` adds
``wide``: twelve units and a second source.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "workspace"
LEGACY_V3 = REPO / "fixtures" / "legacy" / "v3"
NOW = "2026-11-30T08:00:00Z"
ENV = {"THT_NOW": NOW, "THT_ACTOR": "crasher", "THT_INSTALLATION": ""}

SMALL_UNITS = (
    "glossary/drg.md",
    "domain/admission-date.md",
    "enum/triage-code.md",
)
WIDE_UNITS = (
    *SMALL_UNITS,
    "glossary/sdo.md",
    "glossary/ward.md",
    "domain/patient-merge.md",
    "enum/diagnosis-role.md",
    "formula/age-at-admission.md",
    "mapping/tax-code.md",
    "normalization/hba1c-unit.md",
    "reference/ed-triage.md",
    "example/admissions-per-month.md",
)
LAB = "evidence/source/lab-handbook.md"
WARD = "evidence/incoming/ward-codes.md"
NEW_UNIT = """---
schema_version: 4
id: evidence:clinical:bed-day
kind: glossary
language: en
purposes: [disambiguation]
---

# Bed day

## Definition

One patient occupying one bed at midnight.
"""


# -- running a command the way the CLI does ------------------------------------------


def cli(argv: list[str]) -> int:
    """``tht ARGV``: the real entry point; its exit status."""
    from evidence_tool.cli.main import main

    try:
        main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


def library(call: Callable[[], object]) -> int:
    """A library call with the CLI's error funnel: a coded error's exit status, else 70."""
    from evidence_tool.errors import EvidenceError

    try:
        call()
    except EvidenceError as exc:
        print(json.dumps({"code": exc.code, "message": exc.message}), file=sys.stderr)
        return exc.exit_code
    except Exception:
        traceback.print_exc()
        return 70
    return 0


def _ws_args(ws: Path) -> list[str]:
    return ["--workspace-root", str(ws), "--json"]


def run_operation(name: str, run_dir: Path) -> int:
    """Run operation ``name`` on ``run_dir/ws`` with ``run_dir/params.json``."""
    from evidence_tool.archive.edits import ArchiveEditor
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.unit import parse

    ws = run_dir / "ws"
    params = json.loads((run_dir / "params.json").read_text())
    if name == "consolidate":
        return cli(["workspace", "evidence", "consolidate", *_ws_args(ws)])
    if name.startswith("decide-"):
        argv = ["workspace", "evidence", "decide", "--source-id", params["source_id"]]
        argv += ["--revision", params["revision"], "--decision", name.split("-")[1]]
        return cli([*argv, *_ws_args(ws)])
    if name == "restore":
        return cli(["workspace", "evidence", "restore", params["id"], *_ws_args(ws)])
    if name == "migrate":
        return cli(["evidence", "migrate", str(ws), "--json"])
    if name in ("refresh", "init", "status"):
        return cli(["workspace", "evidence", name, *_ws_args(ws)])
    editor = ArchiveEditor(LocalEvidenceArchive(ws))
    if name == "save":
        unit = parse(params["markdown"])
        return library(lambda: editor.save(unit, params["expected"], "crasher"))
    if name == "remove":
        return library(lambda: editor.remove(params["id"], params["expected"], "crasher"))
    raise ValueError(name)


OPERATIONS = (
    "consolidate",
    "decide-keep",
    "decide-replace",
    "save",
    "remove",
    "restore",
    "migrate",
)
# The exception sweep's (test_exception_points.py): issue 27's list, the index update
# being consolidate's activation.
RAISING = ("consolidate", "decide-keep", "decide-replace", "restore", "refresh", "init")


# -- building the templates (in the test process) -------------------------------------


@contextlib.contextmanager
def pinned_env() -> Any:
    saved = {k: os.environ.get(k) for k in ENV}
    os.environ.update(ENV)
    os.environ.pop("THT_INSTALLATION")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def quiet_cli(argv: list[str]) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(argv)
    assert code == 0, f"tht {' '.join(argv)} -> {code}: {out.getvalue()} {err.getvalue()}"
    return json.loads(out.getvalue()) if out.getvalue().strip() else {}


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def _comparison(ws: Path, locator: str) -> tuple[str, str]:
    registry = json.loads((ws / "evidence/.local/sources.json").read_text())
    record = next(r for r in registry["sources"].values() if r["locator"] == f"fs:{locator}")
    return record["source_id"], record["comparison"]["revision"]


def _edit_lab(ws: Path) -> None:
    """Change one proposed unit's text and drop another, as a new version of the document."""
    path = ws / LAB
    text = path.read_text()
    head, sep, rest = text.partition("---\nschema_version: 4\nid: evidence:lab:turnaround-minutes")
    assert sep, "the lab handbook no longer holds turnaround-minutes"
    tail = rest.split("\n---\nschema_version", 1)
    text = head + ("---\nschema_version" + tail[1] if len(tail) > 1 else "")
    text = text.replace("The time between", "The elapsed time between", 1)
    path.write_text(text)


def build_base(dest: Path, units: tuple[str, ...], *, with_ward: bool = False) -> Path:
    """The base workspace (module docstring) at ``dest/ws``; returns ``dest``."""
    ws = dest / "ws"
    for rel in ("workspace.yaml", ".gitignore", LAB, *([WARD] if with_ward else [])):
        _write(ws / rel, (FIXTURE / rel).read_bytes())
    for rel in units:
        _write(ws / "evidence/curated" / rel, (FIXTURE / "evidence/curated" / rel).read_bytes())
    with pinned_env():
        quiet_cli(["workspace", "evidence", "init", *_ws_args(ws)])
        quiet_cli(["workspace", "evidence", "consolidate", *_ws_args(ws)])
        quiet_cli(["workspace", "evidence", "refresh", *_ws_args(ws)])
        sid, rev = _comparison(ws, LAB)
        decide = ["workspace", "evidence", "decide", "--source-id", sid, "--revision", rev]
        quiet_cli([*decide, "--decision", "replace", *_ws_args(ws)])
        _edit_lab(ws)
        quiet_cli(["workspace", "evidence", "refresh", *_ws_args(ws)])
    return dest


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_template(name: str, base: Path, dest: Path) -> Path:
    """A copy of ``base`` prepared for operation ``name``; returns the run folder."""
    from evidence_tool.unit import parse, render

    shutil.copytree(base, dest, symlinks=True)
    ws = dest / "ws"
    params: dict[str, Any] = {}
    drg = ws / "evidence/curated/glossary/drg.md"
    if name == "consolidate":
        text = drg.read_text().replace("\n# ", "\n# Revised: ", 1)
        drg.write_text(text)
        (ws / "evidence/curated/enum/triage-code.md").unlink()
        _write(ws / "evidence/curated/glossary/bed-day.md", NEW_UNIT)
    elif name.startswith("decide-"):
        params["source_id"], params["revision"] = _comparison(ws, LAB)
    elif name == "save":
        unit = parse(drg.read_bytes())
        import dataclasses

        saved = dataclasses.replace(unit, title=unit.title + " (saved)")
        params.update(markdown=render(saved), expected=_file_hash(drg))
    elif name == "remove":
        params.update(id="evidence:clinical:drg", expected=_file_hash(drg))
    elif name == "refresh":  # a new version of the document: a new comparison to write
        lab = ws / LAB
        lab.write_text(lab.read_text().replace("falsely high", "falsely raised", 1))
    elif name == "init":  # the same files, never initialized
        shutil.rmtree(dest)
        for rel in ("workspace.yaml", ".gitignore", LAB):
            _write(ws / rel, (base / "ws" / rel).read_bytes())
        for path in sorted((base / "ws/evidence/curated").rglob("*.md")):
            _write(ws / path.relative_to(base / "ws"), path.read_bytes())
    elif name == "restore":
        (ws / "evidence/curated/enum/triage-code.md").unlink()
        with pinned_env():
            quiet_cli(["workspace", "evidence", "consolidate", *_ws_args(ws)])
        params["id"] = "evidence:ed:triage-code"
    (dest / "params.json").write_text(json.dumps(params))
    return dest


def build_migrate_template(dest: Path) -> Path:
    """A v3 legacy workspace cut to three units, inside a fresh Git repository."""
    ws = dest / "ws"
    shutil.copytree(LEGACY_V3, ws)
    keep = ("admission-date", "triage-code", "length-of-stay")
    manifest = ws / "evidence" / "manifest.yaml"
    lines = manifest.read_text().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("  - id: ") and not any(k in lines[i] for k in keep):
            (ws / lines[i + 1].split("path: ")[1]).unlink()
            i += 3
            continue
        out.append(lines[i])
        i += 1
    manifest.write_text("\n".join(out))
    subprocess.run(["git", "init", "-q", "--template=", str(dest)], check=True, capture_output=True)
    (dest / "params.json").write_text("{}")
    return dest
