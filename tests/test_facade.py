"""One face (issue 32): a host calling ``Session`` gets what ``tht`` gets.

Each operation runs twice on the same starting workspace, at the same path, with the
clock pinned: once through the CLI (``--json``), once through the library façade that
docs/api.md documents.  The results, the findings and every byte written must agree.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_runner import invoke

from evidence_tool.errors import EvidenceError
from evidence_tool.session import Session

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "workspace"
LEGACY = REPO / "fixtures" / "legacy"
WAREHOUSE = REPO / "fixtures" / "warehouse"
DELETED = "evidence:lab:hba1c-unit"


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_NOW", "2026-05-04T08:00:00Z")
    monkeypatch.setenv("THT_ACTOR", "host")


# Caches of file-system facts (inode, mtime, ctime, wall time) that two copies of one
# workspace cannot share: compared by presence, and the index stamp by what it vouches for.
STAT_CACHE = "stat-cache.bin"
STAMP = "index.sqlite.stamp"


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256), links as their target."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif name == STAT_CACHE:
                out[rel] = "present"
            elif name == STAMP:
                stamp = json.loads(path.read_bytes())
                out[rel] = json.dumps(
                    {k: v for k, v in stamp.items() if k not in ("file", "taken_ns")}
                )
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def cli(ws: Path, inst: Path | None, *args: str) -> dict[str, Any]:
    pre = ["--installation", str(inst)] if inst else []
    done = invoke([*pre, "workspace", "evidence", *args, "--workspace-root", str(ws), "--json"])
    envelope: dict[str, Any] = json.loads(done.stdout)
    envelope["exit"] = done.exit_code
    return envelope


def dicts(found: Any) -> list[dict[str, Any]]:
    return [f.to_dict() for f in found]


@dataclass
class Case:
    name: str
    cli_args: tuple[str, ...]
    # The façade's call: (result, errors, warnings) as JSON, the envelope's parts.
    facade: Callable[[Session], tuple[Any, list[Any], list[Any]]]
    prepare: Callable[[Path], None] = lambda ws: None
    legacy: str | None = None  # fixtures/legacy/<this>, in a Git worktree
    catalog: bool = False
    exit: int = 0  # the CLI's exit code
    raises: bool = False  # the façade raises the error the CLI reports (else returns it)


def consolidated(ws: Path) -> None:
    assert cli(ws, None, "consolidate")["exit"] == 0


def deleted(ws: Path) -> None:
    """The unit DELETED consolidated away, so restore has something to bring back."""
    consolidated(ws)
    next((ws / "evidence/curated").rglob("hba1c-unit.md")).unlink()
    assert cli(ws, None, "consolidate")["result"]["changes"]["deleted"] == [DELETED]


def refreshed(ws: Path) -> None:
    consolidated(ws)
    assert cli(ws, None, "refresh")["exit"] == 0


def pending(ws: Path) -> tuple[str, str]:
    """(source id, revision) of the first comparison refresh recorded."""
    data = json.loads((ws / "evidence/.local/sources.json").read_text(encoding="utf-8"))
    rec = next(r for r in data["sources"].values() if r.get("comparison"))
    return rec["source_id"], rec["comparison"]["revision"]


def decide_args(ws: Path) -> tuple[str, ...]:
    sid, rev = pending(ws)
    return ("decide", "--source-id", sid, "--revision", rev, "--decision", "replace")


def consolidate_call(s: Session) -> tuple[Any, list[Any], list[Any]]:
    r = s.consolidate(s.actor(), s.activation())
    return r.to_json(), [], dicts(r.warnings)


def decide_call(s: Session) -> tuple[Any, list[Any], list[Any]]:
    sid, rev = pending(s.root)
    return s.decide(sid, rev, "replace", s.actor(), False).to_json(), [], []


def validate_call(s: Session) -> tuple[Any, list[Any], list[Any]]:
    v = s.validate()
    return v.to_json(), dicts(v.errors), dicts(v.warnings)


def status_call(s: Session) -> tuple[Any, list[Any], list[Any]]:
    rep = s.status_report()
    found = [*rep.warnings, *rep.archive.id_changes, *rep.git.warnings]
    return rep.to_json(), [], dicts(found)


def verify_call(**options: bool) -> Callable[[Session], tuple[Any, list[Any], list[Any]]]:
    def call(s: Session) -> tuple[Any, list[Any], list[Any]]:
        v = s.verify_report(**options)
        return v.to_json(), dicts(v.errors), dicts(v.warnings)

    return call


def edited(ws: Path) -> None:
    """Consolidated, then one unit edited and not consolidated (a --strict finding)."""
    consolidated(ws)
    unit = next((ws / "evidence/curated").rglob("hba1c-unit.md"))
    unit.write_text(unit.read_text(encoding="utf-8") + "\n", encoding="utf-8")


def search_call(s: Session) -> tuple[Any, list[Any], list[Any]]:
    found = s.search("hba1c unit of measure").to_json()
    warnings = found.pop("warnings", [])
    for hit in found["hits"]:
        del hit["record"]  # the CLI prints the record's lines, not the record
    return found, [], warnings


CASES = [
    Case("init", ("init",), lambda s: (s.initialize(s.actor()).to_json(), [], [])),
    Case("consolidate", ("consolidate",), consolidate_call),
    Case("consolidate-catalog", ("consolidate",), consolidate_call, catalog=True),
    Case("consolidate-legacy", ("consolidate",), consolidate_call, legacy="v2"),
    # v3 holds open review items: migrated, then refused (E140) by both faces alike.
    Case(
        "consolidate-legacy-refused",
        ("consolidate",),
        consolidate_call,
        legacy="v3",
        exit=1,
        raises=True,
    ),
    Case(
        "consolidate-dry-run",
        ("consolidate", "--dry-run"),
        lambda s: (s.consolidate(s.actor(), s.activation(), True).to_json(), [], []),
        catalog=True,
    ),
    Case(
        "refresh",
        ("refresh",),
        lambda s: (s.refresh(s.actor(), None, False).to_json(), [], []),
        prepare=consolidated,
    ),
    Case("decide", (), decide_call, prepare=refreshed),
    Case(
        "restore",
        ("restore", DELETED),
        lambda s: (s.restore(DELETED, s.actor()).to_json(), [], []),
        prepare=deleted,
    ),
    Case("validate", ("validate",), validate_call),
    Case("validate-catalog", ("validate",), validate_call, catalog=True),
    Case("status", ("status",), status_call, prepare=consolidated),
    Case("verify", ("verify",), verify_call(), prepare=consolidated),
    Case(
        "verify-strict-catalog",
        ("verify", "--strict", "--index"),
        verify_call(strict=True, index=True),
        prepare=consolidated,
        catalog=True,
    ),
    Case(
        "verify-strict-refused",  # an unconsolidated edit under --strict: exit 7 (integrity)
        ("verify", "--strict", "--warnings-as-errors"),
        verify_call(strict=True, warnings_as_errors=True),
        prepare=edited,
        exit=7,
    ),
    Case("search", ("search", "hba1c unit of measure"), search_call, prepare=consolidated),
    Case(
        "export",
        ("export",),
        lambda s: (s.export().to_json(), [], []),
        prepare=consolidated,
    ),
    Case(
        "export-output",
        ("export", "--output", "WS/out/corpus.jsonl"),
        lambda s: (s.export(str(s.root / "out/corpus.jsonl")).to_json(), [], []),
        prepare=consolidated,
    ),
]


def fresh(tmp: Path, case: Case) -> Path:
    """The case's starting workspace at ``tmp/repo/ws`` (a Git worktree for the legacy one)."""
    ws = tmp / "repo" / "ws"
    if case.legacy:
        shutil.copytree(LEGACY / case.legacy, ws)
        subprocess.run(["git", "init", "-q", str(ws.parent)], check=True, capture_output=True)
    else:
        shutil.copytree(FIXTURE, ws, symlinks=True)
    case.prepare(ws)
    return ws


def installation(tmp: Path, case: Case) -> Path | None:
    if not case.catalog:
        return None
    path = tmp / "installation.yaml"
    catalog = {"kind": "ddl", "paths": [str(WAREHOUSE)]}
    path.write_text(
        json.dumps({"installation_version": 1, "evidence": {"catalog": catalog}}), "utf-8"
    )
    return path


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_cli_and_the_facade_give_the_same_result_and_write_the_same_bytes(
    tmp_path: Path, case: Case
) -> None:
    inst = installation(tmp_path, case)
    ws = fresh(tmp_path, case)
    args = [a.replace("WS/", f"{ws}/") for a in case.cli_args or decide_args(ws)]
    by_cli = cli(ws, inst, *args)
    assert by_cli["exit"] == case.exit, by_cli
    if case.catalog:  # the step ran, so the comparison covers it
        assert by_cli["result"]["catalog"]["checked"] is True, by_cli["result"]
    cli_tree = tree(tmp_path / "repo")
    shutil.rmtree(tmp_path / "repo")

    ws = fresh(tmp_path, case)
    before = tree(tmp_path / "repo")
    session = Session.open(ws, str(inst) if inst else None)
    if case.raises:
        with pytest.raises(EvidenceError) as refused:
            case.facade(session)
        assert refused.value.exit_code == case.exit
        assert refused.value.result == by_cli["result"]
        assert dicts(refused.value.diagnostics) == by_cli["errors"]
    else:
        result, errors, warnings = case.facade(session)
        assert result == by_cli["result"]
        assert errors == by_cli["errors"]
        assert warnings == by_cli["warnings"]
    after = tree(tmp_path / "repo")
    assert after == cli_tree
    if case.name in WRITERS:
        assert after != before, "an operation that writes wrote nothing: the case proves little"


READERS = (("validate",), ("status",), ("search",), ("verify",))
WRITERS = {c.name for c in CASES if c.cli_args[:1] not in READERS}
WRITERS -= {"consolidate-dry-run", "export"}


def test_the_cases_cover_every_operation_of_the_issue() -> None:
    named = {c.cli_args[0] if c.cli_args else "decide" for c in CASES}
    assert named >= {"init", "consolidate", "refresh", "decide", "restore", "validate", "status"}
    assert named >= {"search", "export"}
    assert {c.name for c in CASES if c.catalog and c.cli_args[0] == "consolidate"}
    assert {c.name for c in CASES if c.legacy and not c.exit}


@pytest.mark.parametrize("dry_run", [False, True])
def test_migrate_through_the_cli_and_the_facade_writes_the_same_bytes(
    tmp_path: Path, dry_run: bool
) -> None:
    case = Case("migrate", (), consolidate_call, legacy="v1")
    ws = fresh(tmp_path, case)
    extra = ["--dry-run"] if dry_run else []
    done = invoke(["evidence", "migrate", str(ws), "--json", *extra])
    assert done.exit_code == 0, done.stdout
    by_cli, cli_tree = json.loads(done.stdout), tree(tmp_path / "repo")
    shutil.rmtree(tmp_path / "repo")

    ws = fresh(tmp_path, case)
    before = tree(tmp_path / "repo")
    result = Session.migrate(ws, dry_run=dry_run)
    assert result.to_json() == by_cli["result"]
    assert dicts(result.warnings) == by_cli["warnings"]
    assert tree(tmp_path / "repo") == cli_tree
    assert (cli_tree == before) is dry_run


# The commands on unit files and folders, before (or without) a workspace: `tht workspace
# new`, `tht evidence validate PATHS` and `tht evidence fmt` are one static call each.


def damaged(ws: Path) -> None:
    """One unit not canonical (fmt changes it), one with an unknown key (an E104 error)."""
    units = sorted((ws / "evidence/curated").rglob("*.md"))
    units[0].write_text(units[0].read_text(encoding="utf-8").replace("\n\n", "\n\n\n", 1), "utf-8")
    text = units[1].read_text(encoding="utf-8")
    units[1].write_text(text.replace("---\n", "---\nsurplus: 1\n", 1), encoding="utf-8")


def fmt_json(rep: Any, check: bool, diff: bool) -> dict[str, Any]:
    """The CLI's result for a FormatReport (the reporter's part, not behaviour)."""
    result: dict[str, Any] = {"checked": rep.checked, "changed": [*rep.changed], "check": check}
    return {**result, "diffs": dict(rep.diffs)} if diff else result


FILE_CASES: list[tuple[str, tuple[str, ...], Callable[[Path], tuple[Any, list[Any], list[Any]]]]]
FILE_CASES = [
    (
        "new",
        ("workspace", "new", "WS/made", "--id", "ward-7", "--language", "it", "--example"),
        lambda ws: (
            Session.create(ws / "made", "ward-7", "it", example=True).to_json(),
            [],
            [],
        ),
    ),
    (
        "new-refused",  # a workspace already there: E903 from both faces
        ("workspace", "new", "WS", "--id", "again", "--language", "en"),
        lambda ws: (Session.create(ws, "again", "en").to_json(), [], []),
    ),
    (
        "validate-paths",
        ("evidence", "validate", "WS/evidence/curated", "WS/workspace.yaml"),
        lambda ws: validation(
            Session.validate_files([ws / "evidence/curated", ws / "workspace.yaml"])
        ),
    ),
    (
        "validate-paths-warnings-as-errors",
        ("evidence", "validate", "WS", "--warnings-as-errors"),
        lambda ws: validation(Session.validate_files([ws], warnings_as_errors=True)),
    ),
    (
        "fmt",
        ("evidence", "fmt", "WS/evidence/curated"),
        lambda ws: fmt_call(ws, check=False, diff=False),
    ),
    (
        "fmt-check",
        ("evidence", "fmt", "WS/evidence/curated", "--check"),
        lambda ws: fmt_call(ws, check=True, diff=False),
    ),
    (
        "fmt-diff",
        ("evidence", "fmt", "WS/evidence/curated", "--diff"),
        lambda ws: fmt_call(ws, check=False, diff=True),
    ),
]


def validation(v: Any) -> tuple[Any, list[Any], list[Any]]:
    return v.to_json(), dicts(v.errors), dicts(v.warnings)


def fmt_call(ws: Path, *, check: bool, diff: bool) -> tuple[Any, list[Any], list[Any]]:
    rep = Session.format_files([str(ws / "evidence/curated")], check=check, diff=diff)
    return fmt_json(rep, check, diff), dicts(rep.errors), dicts(rep.warnings)


@pytest.mark.parametrize("name,args,call", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_the_file_commands_give_the_same_result_through_the_cli_and_the_facade(
    tmp_path: Path,
    name: str,
    args: tuple[str, ...],
    call: Callable[[Path], tuple[Any, list[Any], list[Any]]],
) -> None:
    ws = tmp_path / "ws"

    def start() -> None:
        shutil.copytree(FIXTURE, ws, symlinks=True)
        damaged(ws)

    start()
    done = invoke([a.replace("WS", str(ws)) for a in args] + ["--json"])
    by_cli = json.loads(done.stdout)
    cli_tree = tree(ws)
    shutil.rmtree(ws)

    start()
    before = tree(ws)
    if by_cli["ok"]:
        result, errors, warnings = call(ws)
        assert (result, errors, warnings) == (
            by_cli["result"],
            by_cli["errors"],
            by_cli["warnings"],
        )
    else:
        if done.exit_code != 1 or name.startswith("new"):  # a refusal, not findings
            with pytest.raises(EvidenceError) as refused:
                call(ws)
            assert refused.value.exit_code == done.exit_code
            assert dicts(refused.value.diagnostics) == by_cli["errors"]
        else:
            result, errors, warnings = call(ws)
            assert (result, errors, warnings) == (
                by_cli["result"],
                by_cli["errors"],
                by_cli["warnings"],
            )
    assert tree(ws) == cli_tree
    writes = name in ("new", "fmt")
    assert (tree(ws) != before) is writes, "a writer wrote nothing, or a reader wrote"
    if name.startswith("validate") or name == "fmt-check":
        assert by_cli["errors"], "the damaged unit was not found: the case proves little"
