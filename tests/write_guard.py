"""A PEP 578 audit hook that proves tests write only inside their temporary folders.

Installed once for the whole run by ``tests/conftest.py``.  While a test runs
(setup, call and teardown, fixtures of every scope included), every
filesystem write the interpreter announces -- ``open`` with write flags,
rename/replace, remove, mkdir, rmdir, truncate, chmod/utime, link/symlink,
``shutil`` copies, moves and trees, ``tempfile`` creations and SQLite
databases opened for writing -- must resolve inside the pytest basetemp (every
``tmp_path`` lives there), the Hypothesis example database (and the temp file
Hypothesis renames into it), a ``__pycache__`` folder or ``/dev/null``.  The system temp dir is allowed only for a test
marked ``allow_system_temp``.

A refused write raises ``WriteOutsideWorkspace`` (a ``BaseException``, so a
broad ``except Exception`` in the code under test cannot swallow it) and is
recorded, so the test fails even if something did catch it.  Writes made by
child processes are not seen here (they are another interpreter).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# event -> indexes of the path arguments it writes, and of their dir_fd (or None).
_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.rename": ((0, 2), (1, 3)),
    "os.remove": ((0, 1),),
    "os.mkdir": ((0, 2),),
    "os.rmdir": ((0, 1),),
    "os.truncate": ((0, None),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.utime": ((0, 3),),
    "os.symlink": ((1, 2),),
    "os.link": ((1, 3),),
    "shutil.copyfile": ((1, None),),
    "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),),
    "shutil.copytree": ((1, None),),
    "shutil.move": ((0, None), (1, None)),
    "shutil.rmtree": ((0, 1),),
    "shutil.make_archive": ((0, None),),
    "shutil.unpack_archive": ((1, None),),
    "tempfile.mkstemp": ((0, None),),
    "tempfile.mkdtemp": ((0, None),),
}


class WriteOutsideWorkspace(BaseException):
    """A test (or the code it runs) wrote outside its temporary folder."""


@dataclass
class Guard:
    roots: list[str]
    system_temp: bool = False
    violations: list[str] = field(default_factory=list)

    def allows(self, path: str) -> bool:
        if path == os.devnull or "__pycache__" in path.split(os.sep):
            return True
        roots = [*self.roots, _TEMP] if self.system_temp else self.roots
        return any(path == r or path.startswith(r + os.sep) for r in roots)


_TEMP = os.path.realpath(tempfile.gettempdir())
_active: Guard | None = None
_busy = threading.local()  # the hook's own calls (realpath, readlink) must not recurse


def _resolve(path: object, dir_fd: object, *, follow: bool) -> str | None:
    """Absolute real path of an audited path argument; None for descriptors and odd values."""
    if isinstance(path, int) or path is None:
        return None  # an operation on an open descriptor: its open was audited
    try:
        text = os.fsdecode(path)  # type: ignore[arg-type]
    except TypeError:
        return None
    if not os.path.isabs(text):
        base = os.getcwd()
        if isinstance(dir_fd, int) and dir_fd >= 0:
            base = os.readlink(f"/proc/self/fd/{dir_fd}")
        text = os.path.join(base, text)
    if follow:
        return os.path.realpath(text)
    # remove/rename/rmdir act on the last component itself, never on a link's target.
    head, tail = os.path.split(os.path.normpath(text))
    return os.path.join(os.path.realpath(head), tail)


def _targets(event: str, args: tuple[object, ...]) -> list[str]:
    if event == "open":
        path, _mode, flags = args
        if not isinstance(flags, int) or not flags & _WRITE_FLAGS:
            return []
        resolved = _resolve(path, None, follow=True)
        # Opening a folder for writing is O_TMPFILE (an anonymous file) or fails.
        return [] if resolved is None or os.path.isdir(resolved) else [resolved]
    if event == "sqlite3.connect":
        db = os.fsdecode(args[0]) if isinstance(args[0], str | bytes | os.PathLike) else ""
        if db in ("", ":memory:") or (db.startswith("file:") and "mode=ro" in db):
            return []
        resolved = _resolve(db.removeprefix("file:").split("?")[0], None, follow=True)
        return [resolved] if resolved else []
    out = []
    for index, fd_index in _EVENTS.get(event, ()):
        if index >= len(args):
            continue
        dir_fd = args[fd_index] if fd_index is not None and fd_index < len(args) else None
        resolved = _resolve(args[index], dir_fd, follow=False)
        if resolved is not None:
            out.append(resolved)
    return out


_watched: dict[str, list[str]] = {}  # real path -> events that opened it (``watching``)


def _watch(event: str, args: tuple[object, ...]) -> None:
    path = args[0] if args else None
    resolved = _resolve(path, None, follow=True)
    if resolved in _watched:
        _watched[resolved].append(event)


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _watched and event == "open" and not getattr(_busy, "on", False):
        _busy.on = True
        try:
            _watch(event, args)
        finally:
            _busy.on = False
    guard = _active
    if guard is None or getattr(_busy, "on", False):
        return
    if event != "open" and event != "sqlite3.connect" and event not in _EVENTS:
        return
    _busy.on = True
    try:
        refused = [p for p in _targets(event, args) if not guard.allows(p)]
        if refused and _hypothesis_database():
            refused = []
    finally:
        _busy.on = False
    if refused:
        message = f"{event} writes outside the test's temporary folder: {', '.join(refused)}"
        guard.violations.append(message)
        raise WriteOutsideWorkspace(message)


def _hypothesis_database() -> bool:
    """Hypothesis saves an example through a temp file in the system temp dir, renamed
    into its example database: its own bookkeeping, like pytest's cache."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith(os.path.join("hypothesis", "database.py")):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


_installed = False


def install() -> None:
    """Add the audit hook (once per interpreter: audit hooks cannot be removed)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


@contextlib.contextmanager
def guarding(roots: list[str], *, system_temp: bool = False) -> Iterator[Guard]:
    """Refuse writes outside ``roots`` until the block ends; yields the guard (its violations)."""
    global _active
    guard = Guard([os.path.realpath(r) for r in roots], system_temp)
    previous, _active = _active, guard
    try:
        yield guard
    finally:
        _active = previous


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Let the enclosed (test-infrastructure) code write anywhere."""
    global _active
    previous, _active = _active, None
    try:
        yield
    finally:
        _active = previous


@contextlib.contextmanager
def watching(*paths: str | os.PathLike[str]) -> Iterator[dict[str, list[str]]]:
    """Record every open (reads too) of ``paths``, symlinks resolved: proves a file is
    never read through a link."""
    keys = [os.path.realpath(p) for p in paths]
    for key in keys:
        _watched[key] = []
    try:
        yield {k: _watched[k] for k in keys}
    finally:
        for key in keys:
            _watched.pop(key, None)
