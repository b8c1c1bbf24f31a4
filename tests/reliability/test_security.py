"""Hostile input (SPEC 11): nothing written outside the workspace, nothing read through an
escaping symlink, no credential on disk or in output, every refusal coded.

The audit hook of ``tests/write_guard.py`` is active here: a write outside the
test's temporary folder fails the test by itself.  Cases already covered
elsewhere are not repeated: a symlink in ``incoming/``, an https -> http
redirect, redirects to other hosts, slow, endless and gzip-bomb bodies, secrets
in userinfo and query strings, S3 credentials (tests/sources); the lock path
(tests/archive/test_lock.py); cache and export folders (tests/report, activation).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import codes

from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceError
from evidence_tool.workspace.layout import Layout

REPO = Path(__file__).resolve().parents[2]
UNIT = "evidence/curated/glossary/drg.md"
SECRET = "marker-secret-4b1d"
HOSTILE_PATHS = ["../outside.md", "/etc/passwd", "evidence/../../outside.md", "a\x00b.md", "..\\x"]


@pytest.fixture(autouse=True)
def _actor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_ACTOR", "mallory")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


def tht(cli: Callable[[list[str]], Any], ws: Path, *args: str, inst: Path | None = None) -> Any:
    pre = ["--installation", str(inst)] if inst else []
    return cli([*pre, "workspace", "evidence", *args, "--workspace-root", str(ws), "--json"])


def outside_file(tmp_path: Path, text: str = "# outside\n") -> Path:
    path = tmp_path / "outside" / "secret.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


# -- paths from ids, names, locators and refiner output ---------------------------------


@pytest.mark.parametrize("rel", HOSTILE_PATHS)
def test_a_path_leaving_the_workspace_is_refused(workspace: Path, rel: str) -> None:
    with pytest.raises(ValueError) as refused:
        Layout.at(workspace).resolve_inside(rel)
    assert isinstance(refused.value, EvidenceError) and refused.value.code == "E108"


@pytest.mark.parametrize("rel", HOSTILE_PATHS)
def test_a_comparison_naming_a_path_outside_is_refused_by_decide(
    workspace: Path, cli: Any, rel: str, tmp_path: Path
) -> None:
    """sources.json is in Git: a hostile commit can put any path in a comparison."""
    assert tht(cli, workspace, "refresh").exit_code == 0
    registry_path = workspace / "evidence/.local/sources.json"
    registry = json.loads(registry_path.read_text())
    record = next(r for r in registry["sources"].values() if r.get("comparison"))
    comparison = record["comparison"]
    comparison["proposed"][0]["path"] = rel
    comparison["affected_files"][rel] = None
    registry_path.write_text(json.dumps(registry))
    result = tht(
        cli, workspace, "decide", "--source-id", record["source_id"], "--revision",
        comparison["revision"], "--decision", "replace",
    )  # fmt: skip
    assert result.exit_code not in (0, 70), result.stdout
    assert codes(result)[0] in ("E108", "E304", "E701"), result.stdout
    assert not (tmp_path / "outside.md").exists()


def test_a_refiner_proposing_paths_and_ids_outside_is_contained(
    workspace: Path, cli: Any, tmp_path: Path
) -> None:
    script = tmp_path / "refiner.py"
    bad = (
        "---\\nschema_version: 4\\nid: evidence:../../etc\\nkind: ../../../tmp\\nlanguage: en\\n"
        "purposes: [rewriting]\\n---\\n\\n# X\\n\\n## Rule\\n\\nx\\n"
    )
    script.write_text(
        "import json, sys\nsys.stdin.read()\n"
        f"print(json.dumps({{'units': [{{'markdown': {bad!r}, 'excerpts': [], "
        "'path': '../../outside.md'}]}))\n"
    )
    inst = tmp_path / "inst.yaml"
    inst.write_text(
        json.dumps(
            {
                "installation_version": 1,
                "evidence": {
                    "refiner": {"kind": "command", "command": [sys.executable, str(script)]}
                },
            }
        )
    )
    result = tht(cli, workspace, "refresh", inst=inst)
    assert result.exit_code in (0, 5), result.stdout
    if result.exit_code == 0:  # the unit is a review item, never a file
        sources = json.loads((workspace / "evidence/.local/sources.json").read_text())
        for rec in sources["sources"].values():
            for proposed in (rec.get("comparison") or {}).get("proposed", []):
                Layout.at(workspace).resolve_inside(proposed["path"])
    assert not (tmp_path / "outside.md").exists()


# -- symlinks leaving the workspace -----------------------------------------------------


def test_a_curated_symlink_is_refused_and_never_read(
    workspace: Path, cli: Any, tmp_path: Path
) -> None:
    secret = outside_file(tmp_path, f"# {SECRET}\n")
    (workspace / "evidence/curated/glossary/leak.md").symlink_to(secret)
    (workspace / "evidence/curated/domain/linked").symlink_to(secret.parent)
    result = tht(cli, workspace, "validate")
    assert result.exit_code == 1
    assert codes(result).count("E108") == 2
    assert SECRET not in result.stdout


def test_a_source_folder_linking_outside_is_refused(
    workspace: Path, cli: Any, tmp_path: Path
) -> None:
    outside_file(tmp_path)
    (workspace / "evidence/source/elsewhere").symlink_to(tmp_path / "outside")
    result = tht(cli, workspace, "refresh")
    assert result.exit_code == 5 and codes(result) == ["E501"]


@pytest.mark.parametrize(
    "managed", ["evidence/.local", "evidence/.local/objects", ".evidence-cache"]
)
def test_a_managed_folder_linking_outside_is_never_written(
    workspace: Path, cli: Any, tmp_path: Path, managed: str
) -> None:
    """A checkout can carry a symlink where a managed folder belongs (Git stores links)."""
    target = tmp_path / "victim"
    target.mkdir()
    folder = workspace / managed
    if folder.exists():
        os.rename(folder, tmp_path / "moved-away")
    folder.symlink_to(target, target_is_directory=True)
    (workspace / UNIT).write_text((workspace / UNIT).read_text().replace("\n# ", "\n# Changed ", 1))
    result = tht(cli, workspace, "consolidate")
    assert result.exit_code not in (0, 70), result.stdout
    assert [p.name for p in target.iterdir()] in ([], [".gitignore"]), "written through the link"


def test_save_never_reads_through_a_symlinked_unit(workspace: Path, tmp_path: Path) -> None:
    """The revision check hashed, and _find read, the file behind a symlink."""
    import dataclasses

    import write_guard

    secret = outside_file(tmp_path, "---\nnot a unit\n")
    editor = ArchiveEditor(LocalEvidenceArchive(workspace))
    working = editor.get("evidence:clinical:drg")
    assert working.unit is not None
    (workspace / UNIT).unlink()
    (workspace / UNIT).symlink_to(secret)
    unit = dataclasses.replace(working.unit, title="Changed")
    with write_guard.watching(secret) as opened, pytest.raises(EvidenceError) as refused:
        editor.save(unit, working.file_hash, "mallory")
    assert refused.value.code in ("E301", "E108")
    assert secret.read_text() == "---\nnot a unit\n"
    assert list(opened.values()) == [[]], f"read through the link: {opened}"


# -- YAML aliases and anchors -----------------------------------------------------------

# 3**40 leaves once expanded: no parser that expands it returns within pytest's
# timeout, so returning at all proves the refusal came first (no clock asserted).
BOMB = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    + [f"a{i + 1}: &a{i + 1} [*a{i}, *a{i}, *a{i}]" for i in range(40)]
)


def test_an_alias_bomb_in_a_unit_is_refused_at_once(workspace: Path) -> None:
    from evidence_tool.unit import parse_unit

    text = f"---\n{BOMB}\n---\n\n# T\n"
    result = parse_unit(text)
    assert "E102" in [d.code for d in result.errors]


@pytest.mark.parametrize("which", ["workspace", "installation"])
def test_an_alias_bomb_in_a_descriptor_is_refused_at_once(
    workspace: Path, cli: Any, tmp_path: Path, which: str
) -> None:
    path = workspace / "workspace.yaml" if which == "workspace" else tmp_path / "inst.yaml"
    path.write_text(f"# {which}\n{BOMB}\n")
    result = tht(cli, workspace, "status", inst=path if which == "installation" else None)
    assert result.exit_code == 2 and codes(result) == ["E902"], result.stdout
    assert "alias" in result.json["errors"][0]["message"] or "anchor" in result.stdout


# -- 100 MB inputs ------------------------------------------------------------------------

HUNDRED_MB = 100 * 1024 * 1024


def big_file(path: Path, head: bytes = b"") -> Path:
    """100 MB without writing 100 MB: a sparse file (reads return its bytes all the same)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(HUNDRED_MB)
    return path


def bounded(call: Callable[[], Any]) -> tuple[Any, float, int]:
    """(result, CPU seconds, peak bytes allocated by Python) of ``call``."""
    tracemalloc.start()
    started = time.process_time()
    try:
        result = call()
    finally:
        seconds = time.process_time() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return result, seconds, peak


@pytest.mark.parametrize(
    "case", ["unit file", "source draft", "workspace descriptor", "installation descriptor"]
)
def test_a_100_mb_input_is_refused_quickly_without_reading_it_all(
    workspace: Path, cli: Any, tmp_path: Path, case: str
) -> None:
    head = b"---\nschema_version: 4\n"
    inst = None
    if case == "unit file":
        big_file(workspace / "evidence/curated/glossary/huge.md", head)
        args, want = ("validate",), ("E109",)
    elif case == "source draft":
        big_file(workspace / "evidence/incoming/huge.md", b"# huge\n")
        args, want = ("refresh",), ("E503",)
    elif case == "workspace descriptor":
        big_file(workspace / "workspace.yaml", b"descriptor_version: 4\n")
        args, want = ("status",), ("E902",)
    else:
        inst = big_file(tmp_path / "inst.yaml", b"installation_version: 1\n")
        args, want = ("status",), ("E902",)
    result, seconds, peak = bounded(lambda: tht(cli, workspace, *args, inst=inst))
    print(f"\n100 MB {case}: {codes(result)} in {seconds:.2f} s CPU, peak {peak / 2**20:.1f} MiB")
    assert set(codes(result)) & set(want), result.stdout
    assert peak < 40 * 2**20  # CPU seconds are printed above, never asserted


def test_the_revision_check_hashes_a_huge_file_without_loading_it(workspace: Path) -> None:
    from evidence_tool.archive.journal import current_hash

    path = big_file(workspace / "evidence/curated/glossary/huge.md")
    digest, _seconds, peak = bounded(lambda: current_hash(path))
    assert digest == hashlib.sha256(b"\0" * HUNDRED_MB).hexdigest()
    assert peak < 16 * 2**20


# -- credentials: a presigned URL --------------------------------------------------------


def test_a_presigned_url_leaves_no_signature_on_disk_or_in_output(
    workspace: Path, cli: Any, tmp_path: Path
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = (REPO / "fixtures/workspace/evidence/source/lab-handbook.md").read_bytes()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = (
            f"http://127.0.0.1:{server.server_address[1]}/doc.md?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            f"&X-Amz-Credential=AKIDMARKER0002%2F20261129%2Fus-east-1%2Fs3%2Faws4_request"
            f"&X-Amz-Signature={SECRET}&X-Amz-Security-Token=tok{SECRET}"
        )
        desc = json.loads(json.dumps({"descriptor_version": 4, "id": "psd-clinical",
                                      "name": "PSD", "default_language": "it"}))  # fmt: skip
        desc["evidence"] = {"descriptor_version": 2, "sources": [{"kind": "http", "url": url}]}
        (workspace / "workspace.yaml").write_text(json.dumps(desc))
        inst = tmp_path / "inst.yaml"
        inst.write_text(json.dumps({"installation_version": 1,
                                    "evidence": {"network": {"allowed_hosts": ["127.0.0.1"]}}}))  # fmt: skip
        outputs = [tht(cli, workspace, "refresh", inst=inst)]
        assert outputs[0].exit_code == 0, outputs[0].stdout
        outputs += [tht(cli, workspace, "sources", "list", inst=inst)]
        outputs += [tht(cli, workspace, "log", inst=inst)]
    finally:
        server.shutdown()
        server.server_close()
    for out in outputs:
        for marker in (SECRET, "AKIDMARKER0002"):
            assert marker not in out.stdout + out.stderr
    for path in workspace.rglob("*"):
        if path.is_file() and path.name != "workspace.yaml":
            data = path.read_bytes()
            assert SECRET.encode() not in data and b"AKIDMARKER0002" not in data, path


# -- the whole suite's child processes --------------------------------------------------


def test_a_child_cli_writes_nothing_outside_its_workspace(workspace: Path, tmp_path: Path) -> None:
    """The audit hook sees this process only: run a consolidation in a child whose HOME,
    TMPDIR and cwd are fresh folders, and check nothing appeared anywhere but the workspace."""
    home, tmp, cwd = (tmp_path / n for n in ("home", "tmp", "cwd"))
    for folder in (home, tmp, cwd):
        folder.mkdir()
    (workspace / UNIT).write_text((workspace / UNIT).read_text().replace("\n# ", "\n# New ", 1))
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "evidence_tool.cli.main", "workspace", "evidence", "consolidate",
         "--workspace-root", str(workspace), "--json"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [list(f.iterdir()) for f in (home, tmp, cwd)] == [[], [], []]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert usage.ru_maxrss > 0
