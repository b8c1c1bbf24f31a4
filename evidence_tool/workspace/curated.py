"""One curated file: its identity, bytes and parse, read on first use (SPEC.md 3).

The scan (``scan.py``) walks the tree and applies the workspace rules; this module is
what it and the parallel parse (``_speed/parallel.py``) build each file with.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evidence_tool.errors import Diagnostic, EvidenceWarning
from evidence_tool.unit.hashing import file_hash
from evidence_tool.workspace._speed import statcache as sc
from evidence_tool.workspace._speed.statcache import StatEntry

if TYPE_CHECKING:
    from evidence_tool.unit.model import Unit
    from evidence_tool.unit.parse import FlatResult, ParseResult


def parse_unit(data: bytes, path: str | None = None) -> ParseResult:
    """The unit parser, loaded by the first file that needs parsing: a scan whose files
    are all in the stat cache never imports it (start-up, docs/performance.md)."""
    from evidence_tool.unit.parse import parse_unit as parse

    return parse(data, path=path)


def unread(rel: str, problem: Diagnostic) -> ParseResult:
    """The result of a file that could not be read: its one diagnostic, no unit."""
    from evidence_tool.unit.parse import ParseResult

    return ParseResult(None, [problem.with_path(rel)])


@dataclass(eq=False, slots=True)
class CuratedFile:
    """One curated file: its identity always, its bytes and parse only when needed.

    A file the stat cache recognizes is a valid unit known by id, kind and hashes
    without being read; ``data``, ``result`` and ``unit`` read and parse it on
    first use, so every caller sees the same object either way.  A file parsed by a
    worker arrives ``flat`` (unit.parse.flatten): id, kind, findings and hashes are
    read from it, and the typed result is built only when asked.
    """

    rel: str  # workspace-relative POSIX path (or the path as given, for validate_paths)
    location: str | Path  # a plain str while scanning: pathlib costs more than a no-op scan
    raw: bytes | None = None
    parsed: ParseResult | None = None
    cached: StatEntry | None = None
    _hash: str | None = field(default=None, repr=False)
    flat: FlatResult | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return Path(self.location)

    @property
    def data(self) -> bytes:
        if self.raw is None:
            read = read_file(self.location)
            self.raw = read if isinstance(read, bytes) else b""
        return self.raw

    @property
    def result(self) -> ParseResult:
        if self.parsed is None:
            if self.flat is not None:
                from evidence_tool.unit.parse import unflatten

                self.parsed, self.flat = unflatten(self.flat), None  # one form kept, not two
            else:
                self.parsed = parse_unit(self.data, path=self.rel)
        return self.parsed

    def _flat(self) -> FlatResult | None:
        """The worker's flat result while the typed one is not built (then: None)."""
        return self.flat if self.parsed is None else None

    @property
    def errors(self) -> Sequence[Diagnostic]:
        flat = self._flat()
        return flat[1] if flat is not None else self.result.errors

    @property
    def warnings(self) -> Sequence[EvidenceWarning]:
        flat = self._flat()
        return flat[2] if flat is not None else self.result.warnings

    @property
    def unit(self) -> Unit | None:
        return self.result.unit

    @property
    def file_hash(self) -> str:
        if self._hash is None:
            self._hash = self.cached[sc.FILE_HASH] if self.cached else file_hash(self.data)
        return self._hash

    @property
    def unit_id(self) -> str | None:
        if self.cached:
            return self.cached[sc.UNIT_ID]
        flat = self._flat()
        return flat[0] if flat is not None else self.result.unit_id

    @property
    def kind(self) -> str | None:
        if self.cached:
            return self.cached[sc.KIND]
        flat = self._flat()
        if flat is not None:
            return flat[4][1] if flat[4] is not None else None
        return self.unit.kind if self.unit else None

    @property
    def content_hash(self) -> str | None:
        if self.cached:
            return self.cached[sc.CONTENT_HASH]
        flat = self._flat()
        if flat is not None:
            unit_fields = flat[4]
            if unit_fields is None:
                return None
            if unit_fields[7] is not None:  # hashed by the worker (a recording scan)
                return unit_fields[7]
        return self.unit.content_hash if self.unit else None

    @property
    def valid(self) -> bool:
        """Parsed without errors (workspace rules such as E120 are checked separately)."""
        if self.cached is not None:
            return True
        flat = self._flat()
        if flat is not None:
            return flat[4] is not None and not flat[1]
        return self.unit is not None and not self.result.errors

    def identity(self) -> tuple[str, str, str, str] | None:
        """(unit id, content_hash, file_hash, path) of a valid unit, read from the stat
        cache when the file is unchanged; None for an invalid file."""
        uid, ch = self.unit_id, self.content_hash
        if not self.valid or uid is None or ch is None:
            return None
        return uid, ch, self.file_hash, self.rel

    def key_line(self, key: str) -> int | None:
        if self.cached:
            return self.cached[sc.ID_LINE] if key == "id" else self.cached[sc.KIND_LINE]
        flat = self._flat()
        if flat is not None:
            return next((line for k, line in flat[3] if k == key), None)
        return self.result.key_lines.get(key)


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """The bytes of the regular file at ``path``, read no further once past ``limit``
    (a 100 MB file, /dev/zero); None when it is not a regular file (a FIFO is never
    waited on).  OSError as opening or reading it raises."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_file(path: str | Path) -> bytes | Diagnostic:
    try:
        data = read_regular(path, 4 * 1024 * 1024)  # far over the 256 KiB limit: stop there
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return LINK_LOOP
        return Diagnostic("E109", f"cannot read file: {exc.strerror}")
    return Diagnostic("E109", "not a regular file") if data is None else data


LINK_LOOP = Diagnostic(
    "E118",
    "a symbolic link loop: the link leads back to itself (directly or through other "
    "links), so there is no file to read",
)


def is_link_loop(path: str | os.PathLike[str]) -> bool:
    """``path`` is a link that never reaches a file (``Path.exists`` says only False)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def parse_file(path: str | Path, rel: str) -> CuratedFile:
    data = read_file(path)
    if isinstance(data, Diagnostic):
        return CuratedFile(rel, path, b"", unread(rel, data))
    return CuratedFile(rel, path, data, parse_unit(data, path=rel))
