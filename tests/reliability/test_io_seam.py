"""One IO seam (SPEC.md 5.4): nothing in the package writes except ``evidence_tool/fsio/``.

A static check over the package source with ``ast``: every call that can create,
change or remove a file or folder is a finding unless it is in ``fsio/`` or
on the allow-list below, each entry with the reason it may bypass the seam.
The allow-list is checked too: an entry that matches nothing is stale.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "evidence_tool"
SEAM = "evidence_tool/fsio/"  # the package: the hook, the writers, the undo log, the swap

# Module functions that write, by module alias as the package spells them.
OS_WRITERS = {
    "replace", "rename", "renames", "unlink", "remove", "removedirs", "mkdir", "makedirs",
    "rmdir", "write", "pwrite", "writev", "truncate", "ftruncate", "link", "symlink",
    "mkfifo", "mknod", "chmod", "fchmod", "chown", "utime",
}  # fmt: skip
SHUTIL_WRITERS = {
    "copy", "copy2", "copyfile", "copyfileobj", "copytree", "copymode", "copystat", "move",
    "rmtree", "make_archive", "unpack_archive",
}  # fmt: skip
TEMPFILE_WRITERS = {
    "mkstemp",
    "mkdtemp",
    "NamedTemporaryFile",
    "TemporaryDirectory",
    "TemporaryFile",
}
# Path methods that write; ``replace`` only with one argument (two is ``str.replace``).
PATH_WRITERS = {
    "write_text", "write_bytes", "mkdir", "unlink", "rename", "touch", "rmdir", "symlink_to",
    "hardlink_to", "chmod",
}  # fmt: skip
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
# Programs the package starts: they write what they write, outside this process.
SUBPROCESS = {"run", "Popen", "call", "check_call", "check_output"}

# (file, call) -> why this write may bypass fsio.
ALLOWED: dict[tuple[str, str], str] = {
    (
        "evidence_tool/activation/sqlite_index.py",
        "sqlite3.connect",
    ): "SQLite writes the index file itself, into a fresh temp file in .evidence-cache/ "
    "that fsio.publish fsyncs and renames into place; readers open it mode=ro",
    (
        "evidence_tool/activation/sqlite_write.py",
        "sqlite3.connect",
    ): "SQLite writes the index's rows itself: a full build into a fresh temp file that "
    "fsio.publish fsyncs and renames into place, or an update in one transaction",
    (
        "evidence_tool/activation/vec.py",
        "sqlite3.connect",
    ): "the index's connection (the driver that loads sqlite-vec when it serves): SQLite "
    "writes the index file itself, as in sqlite_index.py, into a temp file fsio publishes",
    (
        "evidence_tool/activation/evaluation.py",
        "tempfile.TemporaryDirectory",
    ): "eval --compare builds another revision's index in a private temp folder outside "
    "the workspace, removed on exit: nothing of the workspace is written",
    (
        "evidence_tool/activation/backends.py",
        "subprocess.Popen",
    ): "the operator's activation command: its writes are its own; it gets a corpus file "
    "that fsio wrote",
    (
        "evidence_tool/sources/refiner.py",
        "subprocess.Popen",
    ): "the refiner command: one JSON request on a stdin pipe, one response on a stdout pipe",
    (
        "evidence_tool/serve/run.py",
        "os.write",
    ): "a serve worker's one byte on its supervisor's ready pipe (an os.pipe, no file): "
    "the server writes nothing under a workspace",
    (
        "evidence_tool/cli/output.py",
        "os.open",
    ): "/dev/null, put in place of a stdout whose reader has left (tht ... | head): no "
    "file is written",
    (
        "evidence_tool/catalog/example_sqlite.py",
        "sqlite3.connect",
    ): "the warehouse's SQLite files opened mode=ro (URI) to EXPLAIN the examples, with an "
    "authorizer that allows reading only; or an empty in-memory database",
    (
        "evidence_tool/importers/base.py",
        "os.open",
    ): "import files opened O_RDONLY | O_NOFOLLOW one path component at a time (issue 27 "
    "G3): a read that follows no link, never a write",
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    call: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.call}"


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node) if isinstance(n, ast.Attribute | ast.Name)}  # fmt: skip


def _mode(call: ast.Call, position: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == "mode":
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _writes_mode(mode: ast.AST | None) -> bool:
    if mode is None:
        return False  # the default mode 'r'
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return True  # computed: cannot prove it is a read


def _read_only_uri(call: ast.Call) -> bool:
    """``sqlite3.connect(f"file:{path}?mode=ro", uri=True)`` opens for reading only."""
    uri = any(kw.arg == "uri" and getattr(kw.value, "value", None) is True for kw in call.keywords)
    text = ast.unparse(call.args[0]) if call.args else ""
    # catalog.sqlite_reader.read_only_uri builds that URI for the catalog's readers
    # (test_read_only_uri_opens_for_reading_only below holds it to mode=ro)
    first = call.args[0] if call.args else None
    helper = isinstance(first, ast.Call) and getattr(first.func, "id", "") == "read_only_uri"
    return uri and ("mode=ro" in text or helper)


class _Visitor(ast.NodeVisitor):
    def __init__(self, rel: str) -> None:
        self.rel = rel
        self.found: list[Finding] = []
        self.aliases: dict[str, str] = {}  # local name -> module.function imported by name

    def add(self, node: ast.AST, call: str) -> None:
        self.found.append(Finding(self.rel, getattr(node, "lineno", 0), call))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func) or ""
        name = self.aliases.get(name, name)
        label = _writer(node, name)
        if label:
            self.add(node, label)
        self.generic_visit(node)


def _writer(node: ast.Call, name: str) -> str | None:
    """The name of the write ``node`` performs, or None when it provably writes nothing."""
    head, _, tail = name.rpartition(".")
    if name in ("open", "io.open", "builtins.open", "os.fdopen"):
        return name if _writes_mode(_mode(node, 1)) else None
    if name == "os.open":
        # Only flags spelled out as read-only pass: a flags variable could hold anything.
        flags = node.args[1] if len(node.args) > 1 else None
        names = _names(flags) if flags is not None else set()
        return name if "O_RDONLY" not in names or names & WRITE_FLAGS else None
    writers = {"os": OS_WRITERS, "shutil": SHUTIL_WRITERS, "tempfile": TEMPFILE_WRITERS}
    if tail in writers.get(head, ()) or (head == "subprocess" and tail in SUBPROCESS):
        return name
    if name == "sqlite3.connect":
        return None if _read_only_uri(node) else name
    if isinstance(node.func, ast.Attribute) and head not in ("os", "shutil", "fsio"):
        attr = node.func.attr
        one_arg = len(node.args) == 1 and not node.keywords
        if attr in PATH_WRITERS or (attr == "replace" and one_arg):
            return f".{attr}()"
    return None


def findings() -> list[Finding]:
    out: list[Finding] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith(SEAM):
            continue
        visitor = _Visitor(rel)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=rel))
        out += visitor.found
    return out


def test_nothing_but_fsio_writes() -> None:
    unexplained = [f for f in findings() if (f.path, f.call) not in ALLOWED]
    assert not unexplained, (
        "these calls write outside the IO seam; route them through evidence_tool.fsio "
        "(or allow-list them with a reason):\n" + "\n".join(map(str, unexplained))
    )


def test_every_allow_list_entry_still_matches_a_call() -> None:
    used = {(f.path, f.call) for f in findings()}
    stale = [key for key in ALLOWED if key not in used]
    assert not stale, f"allow-list entries that match no call any more: {stale}"


def test_the_checker_sees_the_writes_it_claims_to() -> None:
    """The checker itself, on a sample of every shape it must catch and must let pass."""
    sample = """
import os, shutil, tempfile, sqlite3
from os import replace as mv
from pathlib import Path

import pytest
open(p, "w"); open(p, mode="ab"); open(p, m)
open(p); open(p, "rb")
os.open(p, os.O_WRONLY | os.O_CREAT); os.open(p, os.O_RDONLY)
os.replace(a, b); mv(a, b); os.unlink(p); os.makedirs(p); shutil.rmtree(p)
tempfile.mkstemp(); sqlite3.connect(p); sqlite3.connect(f"file:{p}?mode=ro", uri=True)
os.open(p, flags); d.replace(microsecond=0)
Path(p).write_text("x"); p.mkdir(); p.replace(q); s.replace("a", "b")
"""
    visitor = _Visitor("sample.py")
    visitor.visit(ast.parse(sample))
    calls = [f.call for f in visitor.found]
    assert calls == [
        "open", "open", "open", "os.open", "os.replace", "os.replace", "os.unlink",
        "os.makedirs", "shutil.rmtree", "tempfile.mkstemp", "sqlite3.connect", "os.open",
        ".write_text()", ".mkdir()", ".replace()",
    ], calls  # fmt: skip
    assert (REPO / SEAM / "__init__.py").is_file()


def test_read_only_uri_opens_for_reading_only(tmp_path: Path) -> None:
    """The helper the seam trusts for ``sqlite3.connect`` opens a file that cannot be
    written through it, and never creates one."""
    import sqlite3

    from evidence_tool.catalog.sqlite_reader import read_only_uri

    path = tmp_path / "w.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as con:
        con.execute("CREATE TABLE t (a)")
        con.commit()
    with (
        contextlib.closing(sqlite3.connect(read_only_uri(path), uri=True)) as con,
        pytest.raises(sqlite3.OperationalError, match="readonly"),
    ):
        con.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sqlite3.OperationalError):
        sqlite3.connect(read_only_uri(tmp_path / "absent.sqlite"), uri=True)
    assert not (tmp_path / "absent.sqlite").exists()
