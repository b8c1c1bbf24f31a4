"""Compare and swap, for operator files an editor may save at any moment.

The journal replaces a curated file only while it still holds the bytes the
operation compared (its pre-image); a save landing in between must win.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path
from typing import Any

from evidence_tool.fsio._seam import Changed, sha256_of, step

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: Any = None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    global _renameat2
    import ctypes  # loaded by the first swap, not by every command

    if _renameat2 is None:
        fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
        if fn is not None:
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
            fn.argtypes += [ctypes.c_uint]
        _renameat2 = fn if fn is not None else False
    if not _renameat2:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False  # this file system cannot exchange: the checked window stays
    raise OSError(code, os.strerror(code), os.fspath(b))


def _parked(path: Path) -> Path:
    return path.parent / f".{path.name}.{secrets.token_hex(6)}.parked"


def swap(tmp: Path, path: Path, expected: str | None, ours: str) -> None:
    """Rename ``tmp`` over ``path`` only if ``path`` holds ``expected``, else ``Changed``.

    Absent expected: a hard link creates the name only if nothing holds it.  Otherwise
    the check is repeated right before an atomic exchange, and the bytes taken out are
    checked again: an editor that saved in between gets its bytes put back (and any
    newer save of theirs that landed meanwhile stays).  An editor writing in place into
    the old file between the two is the one race no rename can see.
    """
    if expected is None:
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise Changed(path) from None
        step("link", path)
        os.unlink(tmp)
        return
    if sha256_of(path) != expected:
        raise Changed(path)
    # The bytes the exchange takes out land under the name it swaps with: a parked name,
    # not a temp one, so a crash leaves them to recovery, which deletes only bytes the
    # journal knows (archive.journal), never a save of the operator's.
    parked = _parked(path)
    os.rename(tmp, parked)
    try:
        exchanged = _exchange(parked, path)
    except BaseException:
        os.unlink(parked)  # still ours: the exchange did not happen
        raise
    if not exchanged:
        os.replace(parked, path)
        return
    try:
        step("exchange", path)
        seen = {sha256_of(parked)}
    except BaseException:
        _undo_exchange(parked, path)
        raise
    if expected in seen:
        os.unlink(parked)  # the bytes we replaced are the ones we checked
        return
    while True:  # give their save back; keep whichever of theirs is newest
        _exchange(parked, path)
        step("exchange", path)
        out = sha256_of(parked)
        if out == ours or out in seen:
            os.unlink(parked)
            raise Changed(path)
        seen.add(out)


def _undo_exchange(parked: Path, path: Path) -> None:
    """Struck right after the exchange (an exception, Ctrl-C): as the caller promises when
    it raises, ``path`` keeps its old bytes -- exchanged back, ours dropped.  Nothing else
    knows the parked name once the operation has unwound, so nothing would remove it; if
    the exchange back fails, the parked bytes stay for recovery, as after a kill."""
    with contextlib.suppress(OSError):
        _exchange(parked, path)
        os.unlink(parked)


def unlink_if(path: Path, expected: str | None) -> None:
    """Remove ``path`` only if it holds ``expected``: move it aside, check, or give it back."""
    aside = _parked(path)
    os.rename(path, aside)
    try:
        step("park", path)  # parked: a crash leaves the bytes to recovery, as in swap
        if sha256_of(aside) == expected:
            os.unlink(aside)
            return
        with contextlib.suppress(FileExistsError):  # a newer save of theirs stays
            os.link(aside, path)
            step("link", path)
    except BaseException:
        _unpark(aside, path)
        raise
    os.unlink(aside)
    raise Changed(path)


def _unpark(aside: Path, path: Path) -> None:
    """Struck while the file was parked (an exception, Ctrl-C): as after ``Changed``, the
    file is given back (a newer save of theirs stays) and the parked name removed, since
    nothing else knows it once the operation has unwound."""
    try:
        os.link(aside, path)
    except FileExistsError:
        pass
    except OSError:
        return  # the bytes stay parked for recovery, as after a kill
    with contextlib.suppress(OSError):
        os.unlink(aside)
