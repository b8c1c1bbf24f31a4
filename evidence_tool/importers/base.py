"""What a source-format importer receives and returns (issue 16).

An importer turns the files of one import source (a dbt project, a BIRD
``dev.json``, ...) into v4 units, each with the exact source spans it came
from.  It is pure and deterministic: the same bytes and options give the same
result, so a second refresh of an unchanged source is ``unchanged`` and ids
never move.  It writes nothing; the refresh pipeline turns its result into a
proposal (excerpts verified against the bytes at each span, invalid units and
review items raised, everything all-or-nothing like any refined document).

Spans are byte offsets into the raw file, so a streaming reader can give them
without holding the file as one string, and verification reads only the
spans' bytes.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any, Protocol

from evidence_tool.errors import DescriptorError, SourceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.unit import AppliesTo, Metadata, Payload, Unit

# What pins one file's content between its hash and every later read: (device, inode,
# size, mtime_ns, ctime_ns).  A write, a rename over it or a swap to another file changes
# one of them (ctime cannot be set by a user).
Identity = tuple[int, int, int, int, int]


def identity_of(info: os.stat_result) -> Identity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def open_no_links(path: Path, shown: str) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file at the real path ``path`` and its fstat,
    opened one component at a time with O_NOFOLLOW: a link put anywhere on the path since
    it was resolved (the file itself, or a folder above it) is refused, never followed.
    E501 when the file cannot be opened so, or is no longer a regular file."""
    path = Path(os.path.abspath(path))
    parts = list(path.parts[1:])
    fd = -1
    try:
        fd = os.open(path.anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            flags |= os.O_NONBLOCK if last else os.O_DIRECTORY  # a FIFO must not block
            nxt = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
        info = os.fstat(fd)
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        why = "it became a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise SourceError(
            f"{shown} cannot be read ({why}); if the import is being rewritten, refresh "
            "again once it is complete",
            path=shown,
        ) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise SourceError(f"{shown} is not a regular file", path=shown)
    return fd, info


@dataclass(frozen=True)
class SourceFile:
    """One regular file of an import source, already checked to lie inside the workspace.

    Every read opens the real path with no link followed and, when the file was hashed
    (``identity`` set by acquisition), checks that it is the very file hashed, unchanged:
    otherwise E501, so no text the hash did not cover (another file swapped in, even one
    outside the workspace) reaches a proposal, a record or a cache."""

    # relative to the source's root, '/'-separated (the file's own name for a file source)
    path: str
    abs_path: Path
    size: int
    shown: str = ""  # workspace-relative, for messages (the pipeline sets it)
    identity: Identity | None = None  # of the descriptor the hash was read from

    def _open(self) -> tuple[int, os.stat_result]:
        where = self.shown or self.path
        fd, info = open_no_links(self.abs_path, where)
        if self.identity is not None and identity_of(info) != self.identity:
            os.close(fd)
            raise SourceError(
                f"{where} changed while it was being imported (it is no longer the file "
                "hashed); refresh again once the export is complete",
                path=where,
            )
        return fd, info

    def open(self) -> IO[bytes]:
        fd, _ = self._open()
        return os.fdopen(fd, "rb")

    def stat_now(self) -> os.stat_result:
        """The file's fstat through a descriptor opened as every read opens it (E501 when
        it is gone, a link, or no longer the file hashed)."""
        fd, info = self._open()
        os.close(fd)
        return info

    def read_bytes(self, max_bytes: int) -> bytes:
        """The whole file; E503 past ``max_bytes`` (the refresh bound), so a huge file is refused
        rather than read: formats that can stream use ``open`` instead."""
        where = self.shown or self.path
        if self.size > max_bytes:
            raise _too_large(where, max_bytes)
        with self.open() as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise _too_large(where, max_bytes)
        return data


def _too_large(where: str, max_bytes: int) -> SourceError:
    return SourceError(
        f"{where} is larger than {max_bytes} bytes; one import file is read whole "
        "only up to that size (network.max_bytes of the installation)",
        code="E503",
        path=where,
    )


@dataclass(frozen=True)
class ImportInput:
    files: tuple[SourceFile, ...]  # sorted by path; one entry for a file source
    # the descriptor entry's ``options`` (format specific, validated by the importer)
    options: dict[str, Any]
    language: str  # the source's language (descriptor entry, else the workspace default)
    max_bytes: int  # per-file read bound of the refresh policy
    # Where the entry is, for messages: "evidence.sources[2]" (the options are its "options").
    key: str = "evidence.sources[?]"
    # The workspace-relative folder the files' paths are relative to (the source's folder,
    # or a file source's parent folder; "" at the workspace root).
    root: str = ""

    def file(self, path: str) -> SourceFile | None:
        return self._by_path.get(path)

    @cached_property
    def _by_path(self) -> dict[str, SourceFile]:
        # Built once: an importer may look a file up per element of 10,000 files.
        return {f.path: f for f in self.files}

    def shown(self, path: str) -> str:
        """A file's workspace-relative path, as messages and the import record show it."""
        return f"{self.root}/{path}" if self.root else path


@dataclass(frozen=True)
class Span:
    """Exact bytes of a source file: ``text`` must equal ``raw[start:end].decode('utf-8')``."""

    path: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class NotImported:
    """Something the format carries that no unit field holds (listed in the comparison)."""

    element: str  # e.g. "dbt model orders column status"
    what: str  # e.g. "tags", "difficulty", "time grain"
    span: Span | None = None


@dataclass
class Imported:
    unit: Unit
    spans: list[Span]


@dataclass
class ImportResult:
    units: list[Imported] = field(default_factory=list)
    # Review items: (code, message, unit_id).  Codes used so far: "meaning-missing",
    # "not-representable", "invalid-element"; a new code is named in docs/importers.md.
    review_items: list[tuple[str, str, str | None]] = field(default_factory=list)
    not_imported: list[NotImported] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # e.g. {"ddl": 3}: counted, not evidence
    # Where an item's element is, for an item whose unit was not built (its 'at').
    item_spans: dict[str, Span] = field(default_factory=dict)

    def review(
        self, code: str, message: str, unit_id: str | None = None, span: Span | None = None
    ) -> None:
        self.review_items.append((code, message, unit_id))
        if span is not None and unit_id is not None:
            self.item_spans.setdefault(unit_id, span)

    def omit(self, element: str, what: str, span: Span | None = None) -> None:
        """List what the format carries that no unit field holds (``NotImported``)."""
        self.not_imported.append(NotImported(element, what, span))

    def skip(self, what: str) -> None:
        """Count one thing skipped by design (``skipped``)."""
        self.skipped[what] = self.skipped.get(what, 0) + 1


class Importer(Protocol):
    """``read`` is the contract.  An importer may also declare a class attribute
    ``options: dict[str, type | tuple[type, ...]]`` (option name -> allowed type(s):
    ``str``, ``bool``, ``int``, ``list``, ``dict``): the pipeline then refuses any other
    name or type (E902 naming ``evidence.sources[N].options.KEY``) at ``sources add`` and
    at every refresh, before ``read`` runs.  Without it, the importer checks its options
    itself (``check_options`` below)."""

    format: str  # "dbt", "dbt-manifest", "bird", "wrenai", "vanna", "cortex"

    def read(self, source: ImportInput) -> ImportResult: ...


def malformed(path: str, line: int | None, why: str) -> SourceError:
    """E504 for input the format cannot read: ``path`` (workspace-relative) and ``line``
    (1-based, None when the problem is the whole file) are named in the message."""
    where = f"{path}:{line}" if line else path
    return SourceError(
        f"{where}: {why}; correct the file (or export it again) and refresh",
        code="E504",
        path=path,
        line=line,
    )


def option_error(where: str, why: str) -> DescriptorError:
    """E902 naming the descriptor key ``where`` (``evidence.sources[N].options.NAME``)."""
    return DescriptorError(f"{where}: {why}", details={"result": {"key_path": where}})


def check_options(options: JsonObject, known: dict[str, type | tuple[type, ...]], key: str) -> None:
    """E902 naming ``<key>.options.<name>`` for an unknown option or a value of the wrong type."""
    for name, value in options.items():
        where = f"{key}.options.{name}"
        if name not in known:
            allowed = ", ".join(sorted(known)) or "none"
            raise option_error(where, f"unknown option {name!r}; this format's options: {allowed}")
        wanted = known[name]
        types = wanted if isinstance(wanted, tuple) else (wanted,)
        # bool is an int in Python: an option that wants a number never takes true/false.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join(t.__name__ for t in types)
            raise option_error(where, f"{value!r} is not a {names}")


def make_unit(
    *,
    id: str,
    language: str,
    title: str,
    payload: Payload,
    purposes: tuple[str, ...],
    tables: tuple[str, ...] = (),
    columns: tuple[str, ...] = (),
    concepts: tuple[str, ...] = (),
) -> Unit:
    """A unit from its parts; the pipeline renders and re-parses it, so an invalid one (a formula
    that is not one expression, an empty field) becomes a review item, never a curated file."""
    meta = Metadata(
        id=id,
        kind=payload.kind,
        language=language,
        purposes=purposes,
        applies_to=AppliesTo(concepts=concepts, tables=tables, columns=columns),
    )
    return Unit(meta, title, payload)


def slug(text: str) -> str:
    """An id segment from a name: NFC first (a name typed composed or decomposed is one
    name), lowercase; runs outside [a-z0-9_-] become one '-'.  A name with no ASCII letter
    or digit at all (written wholly in another script) becomes ``x-`` and 10 hex of the
    sha256 of its NFC form, so two such names never share an id (docs/importers.md)."""
    text = unicodedata.normalize("NFC", text)
    out: list[str] = []
    for ch in text.lower():
        if (ch.isascii() and ch.isalnum()) or ch in "_-":
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    found = "".join(out).strip("-")
    if found:
        return found
    if not text.strip():
        return "x"
    return "x-" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:10]


def element_id(prefix: str, *parts: str) -> str:
    """``evidence:<prefix>:<part>.<part>...`` from slugs, deterministic and within the id's
    200 characters: a longer one keeps its start and ends in 12 hex of the full name's sha256,
    so two long names never collide into one id."""
    body = ".".join(slug(p) for p in parts)
    full = f"evidence:{prefix}:{body}"
    if len(full) <= 200:
        return full
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:12]
    return full[: 200 - 13].rstrip(".-") + "-" + digest
