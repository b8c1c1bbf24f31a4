"""The hook every managed filesystem call goes through, and what the seam's parts share."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

Hook = Callable[[str, str, str], None]
_hook: Hook | None = None

ANY: Any = object()  # write_atomic/unlink without ``expected``: whatever is there
# The names write_atomic gives its temp files: ".<target name>.<12 hex>.tmp" (group 1: target).
TEMP_NAME = re.compile(r"\.(.+)\.[0-9a-f]{12}\.tmp")
# Bytes a swap took out of an operator file, until checked: ".<target name>.<12 hex>.parked".
# A temp file only ever holds bytes the tool wrote; a parked one may hold an editor's save.
PARKED_NAME = re.compile(r"\.(.+)\.[0-9a-f]{12}\.parked")
OPS = ("mkdir", "open", "write", "fsync", "syncfs", "replace", "unlink", "rmdir", "truncate")


class Outside(Exception):
    """A write whose folder resolves outside the contained root (a planted symlink)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(os.fspath(path))
        self.path = os.fspath(path)


# Calls that create, replace or remove a name: their folder must stay inside ``_root``.
WRITES = frozenset({"mkdir", "open", "replace", "unlink", "rmdir", "truncate"})
_root: str | None = None


@contextlib.contextmanager
def contained(root: str | os.PathLike[str] | None) -> Iterator[None]:
    """Refuse (``Outside``) every write whose folder, symlinks resolved, leaves ``root``."""
    global _root, _inside
    outer = _root, _inside
    _root, _inside = (os.path.realpath(root) if root is not None else None), set()
    try:
        yield
    finally:
        _root, _inside = outer


# Folders already resolved inside ``_root`` by this operation: 10,000 objects share 256
# folders, and resolving symlinks costs one lstat per path component.  The tool never
# turns a folder into a symlink, so a folder found inside stays inside.
_inside: set[str] = set()


def _check_contained(path: str | os.PathLike[str]) -> None:
    assert _root is not None
    given = os.path.dirname(os.path.abspath(path))
    if given in _inside:
        return
    folder = os.path.realpath(given)
    if folder != _root and not folder.startswith(_root + os.sep):
        raise Outside(path)
    _inside.add(given)


class Changed(Exception):
    """The file no longer holds the bytes the caller checked: someone else saved it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(os.fspath(path))
        self.path = os.fspath(path)


def set_hook(hook: Hook | None) -> None:
    """Install (or clear) the fault-injection hook: ``hook(op, path, phase)``, phase
    "before" or "after" a managed call, or "step" between two steps inside one."""
    global _hook
    _hook = hook


def call(op: str, path: str | os.PathLike[str], fn: Callable[[], object]) -> object:
    """Run one managed call between the hook's "before" and "after"."""
    if _root is not None and op in WRITES:
        _check_contained(path)
    try:
        if _hook is not None:
            _hook(op, os.fspath(path), "before")
        out = fn()
    except OSError as exc:
        if exc.filename is None:  # os.fsync(fd) names no file: say which one failed
            exc.filename = os.fspath(path)
        raise
    if _hook is not None:
        _hook(op, os.fspath(path), "after")
    return out


def step(name: str, path: str | os.PathLike[str]) -> None:
    """Tell the hook a call is between two of its steps (``phase="step"``): a crash there
    leaves a state no boundary between calls shows (bytes parked aside by a swap)."""
    if _hook is not None:
        _hook(name, os.fspath(path), "step")


def fsync_fd(fd: int, path: str | os.PathLike[str]) -> None:
    call("fsync", path, lambda: os.fsync(fd))


def fsync_dir(path: str | os.PathLike[str]) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fsync_fd(fd, path)
    finally:
        os.close(fd)


def sha256_of(path: Path) -> str | None:
    """sha256 of a file's bytes; None when there is no file."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
