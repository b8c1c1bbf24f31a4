"""The span toolkit every importer reads its files with: exact bytes, coded errors.

An importer cites the bytes each unit came from, so every reader here gives
byte offsets into the raw file.  One decode (``decode``: UTF-8 without NUL bytes),
one BOM rule (``after_bom``: no span starts inside it), one JSON scanner
(``Scanner``: the byte range of each value of a mapped file, nothing decoded in
between), and the shapes built on them: the items of a JSON array, the lines of
JSON Lines, the records of a CSV file, each yielded as ``(value, span, first
line)``, and the frontmatter and top-level sections of a Markdown file.  Malformed
input is E504 naming the file (workspace-relative, ``shown``) and the line;
docs/importers.md ("How the files are read") states the rules.  They stream: a JSON array is mapped and decoded an item at a time,
a CSV or JSON Lines file read a record at a time, so an input costs its items,
not its size.
"""

from __future__ import annotations

import codecs
import csv
import json
import mmap
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from evidence_tool.errors import SourceError
from evidence_tool.importers.base import SourceFile, Span, malformed
from evidence_tool.unit.parse import MAX_BYTES

# UTF-8's byte order mark: a reader steps over it (no span starts inside it).
BOM = codecs.BOM_UTF8
# The largest item of an array or line of JSON Lines: four times a unit's largest size.  A
# larger one could never become a unit, and refusing it bounds what one item costs.
MAX_ITEM = 4 * MAX_BYTES


def after_bom(raw: bytes) -> int:
    """The offset of a text's first byte: past a BOM when ``raw`` starts with one."""
    return len(BOM) if raw[: len(BOM)] == BOM else 0


def decode(raw: bytes, shown: str, line: int = 1) -> str:
    """``raw`` as UTF-8 text, the one decode every importer uses: E504 naming the line of a
    NUL byte or of the first byte that is not UTF-8 (``line``: the line ``raw`` starts on
    in its file)."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        at = line + raw.count(b"\n", 0, nul)
        raise malformed(shown, at, "a NUL byte; an import file is text, not binary data")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise malformed(
            shown,
            line + raw.count(b"\n", 0, exc.start),
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8 "
            "(a Windows export converts with iconv -f cp1252 -t utf-8)",
        ) from None


# -- JSON ------------------------------------------------------------------------------

_WS = re.compile(rb"[ \t\r\n]*")
_STR = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
# Everything up to the next bracket: other bytes and whole strings (a quote left open stops it).
_SKIP = re.compile(rb'(?:[^"\[\]{}]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.S)
_SCALAR = re.compile(rb"-?[0-9][0-9.eE+-]*|true|false|null")


class DuplicateKey(ValueError):
    """A JSON object names one member twice: ``json.loads`` would keep the last silently
    (a second ``SQL`` would win, a second ``db_id`` would change the id), so it is refused
    as the YAML formats refuse a duplicate key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the member {key!r} appears twice in one object")
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def duplicate_message(key: str) -> str:
    return (
        f"the member {key!r} appears twice in one object; JSON readers disagree on which "
        "one counts: keep one"
    )


def parse(decoded: str, shown: str, line: int) -> Any:
    """One JSON value (``line``: where its text starts), a duplicate member name refused;
    E504 naming the line of the problem."""
    try:
        return json.loads(decoded, object_pairs_hook=_unique_pairs)
    except DuplicateKey as exc:
        name = re.escape(json.dumps(exc.key, ensure_ascii=False)) + r"\s*:"
        found = [m.start() for m in re.finditer(name, decoded)]
        at = line + (decoded.count("\n", 0, found[1]) if len(found) > 1 else 0)
        raise malformed(shown, at, duplicate_message(exc.key)) from None
    except json.JSONDecodeError as exc:
        raise malformed(shown, line + exc.lineno - 1, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise malformed(shown, line, "the JSON is nested too deeply") from None


class Scanner:
    """Byte ranges of JSON values in ``buf`` (bytes or a mapped file) without parsing what
    lies between: strings are skipped by one regular expression, brackets counted."""

    def __init__(self, buf: Any, shown: str) -> None:
        self.buf, self.shown = buf, shown
        self._line = (0, 1)  # (offset, line) last counted
        self.end = 0  # just past the closing bracket of the last collection read whole

    def line(self, offset: int) -> int:
        at, line = self._line
        if offset < at:
            at, line = 0, 1
        for start in range(at, offset, 1 << 20):
            line += self.buf[start : min(offset, start + (1 << 20))].count(b"\n")
        self._line = (offset, line)
        return line

    def fail(self, offset: int, why: str) -> SourceError:
        return malformed(self.shown, self.line(offset), f"invalid JSON: {why}")

    def ws(self, i: int) -> int:
        match = _WS.match(self.buf, i)
        return match.end() if match else i

    def text(self, start: int, end: int) -> str:
        raw = self.buf[start:end]
        if b"\x00" not in raw and raw.isascii():
            return str(raw, "ascii")  # a member name: no line counted unless it is bad
        return decode(raw, self.shown, self.line(start))

    def load(self, start: int, end: int) -> Any:
        return parse(self.text(start, end), self.shown, self.line(start))

    def string_end(self, i: int) -> int:
        match = _STR.match(self.buf, i)
        if match is None:
            raise self.fail(i, "a string is not closed")
        return match.end()

    def value_end(self, i: int) -> int:
        first = self.buf[i : i + 1]
        if first == b'"':
            return self.string_end(i)
        if first in (b"{", b"["):
            depth, at = 0, i
            while True:
                at = _SKIP.match(self.buf, at).end()  # type: ignore[union-attr]  # matches ""
                char = self.buf[at : at + 1]
                if char == b'"':
                    raise self.fail(at, "a string is not closed")
                if not char:  # named where the value starts: that is what is open
                    raise self.fail(i, "an object or array is not closed before the end")
                depth += 1 if char in (b"{", b"[") else -1
                at += 1
                if depth == 0:
                    return at
        match = _SCALAR.match(self.buf, i)
        if match is None:
            raise self.fail(i, "expected a value")
        return match.end()

    def _first(self, i: int, opener: bytes, close: bytes) -> int | None:
        """The start of the first value of the collection at ``i``; None when it is empty
        (``end`` set past it)."""
        i = self.ws(i)
        if self.buf[i : i + 1] != opener:
            raise self.fail(i, f"expected '{opener.decode()}'")
        return self._next(i + 1, close, first=True)

    def _next(self, i: int, close: bytes, first: bool = False) -> int | None:
        """After a value: None at the closing ``close`` (``end`` set past it), else the
        start of the next value."""
        i = self.ws(i)
        if self.buf[i : i + 1] == close:
            self.end = i + 1
            return None
        if first:
            return i
        if self.buf[i : i + 1] != b",":
            raise self.fail(i, f"expected ',' or '{close.decode()}'")
        return self.ws(i + 1)

    def members(self, i: int) -> Iterator[tuple[str, int, int]]:
        """(key, value start, value end) of the object at ``i``."""
        at = self._first(i, b"{", b"}")
        seen: set[str] = set()
        while at is not None:
            end = self.string_end(at) if self.buf[at : at + 1] == b'"' else None
            if end is None:
                raise self.fail(at, "expected a member name")
            key = json.loads(self.text(at, end))
            if key in seen:
                raise malformed(self.shown, self.line(at), duplicate_message(key))
            seen.add(key)
            colon = self.ws(end)
            if self.buf[colon : colon + 1] != b":":
                raise self.fail(colon, "expected ':'")
            start = self.ws(colon + 1)
            stop = self.value_end(start)
            yield key, start, stop
            at = self._next(stop, b"}")

    def elements(self, i: int) -> Iterator[tuple[int, int]]:
        """(start, end) of each element of the array at ``i``."""
        at = self._first(i, b"[", b"]")
        while at is not None:
            stop = self.value_end(at)
            yield at, stop
            at = self._next(stop, b"]")


def json_array_items(
    f: SourceFile,
    shown: str,
    expected: str,
    *,
    objects: bool = True,
    max_item: int = MAX_ITEM,
) -> Iterator[tuple[Any, Span, int]]:
    """The items of a file holding one JSON array, each with the span of its exact text.
    ``expected`` names what the file should be, for the messages; ``objects``: an item that
    is not an object is E504; an item over ``max_item`` bytes is E504.  The file is mapped,
    not read: one item at a time is decoded."""
    with f.open() as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            raise malformed(shown, None, f"the file is empty; it should be {expected}")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            yield from _array_items(Scanner(data, shown), size, f.path, expected, objects, max_item)


def _array_items(
    scan: Scanner, size: int, path: str, expected: str, objects: bool, max_item: int
) -> Iterator[tuple[Any, Span, int]]:
    data, shown = scan.buf, scan.shown
    i = scan.ws(after_bom(data[: len(BOM)]))
    if i >= size:
        raise malformed(shown, None, f"the file is empty; it should be {expected}")
    if data[i : i + 1] != b"[":
        what = "a JSON object, not an array" if data[i : i + 1] == b"{" else "not a JSON array"
        raise malformed(shown, scan.line(i), f"the file is {what}; it should be {expected}")
    for start, end in scan.elements(i):
        line = scan.line(start)
        if objects and data[start : start + 1] != b"{":
            why = f"an item of the array is not a JSON object; the file should be {expected}"
            raise malformed(shown, line, why)
        if end - start > max_item:
            raise malformed(shown, line, f"an item of the array is larger than {max_item} bytes")
        decoded = scan.text(start, end)
        yield parse(decoded, shown, line), Span(path, start, end, decoded), line
    rest = scan.ws(scan.end)
    if rest < size:
        raise malformed(shown, scan.line(rest), "invalid JSON: text after the closing ']'")


def json_lines_items(
    f: SourceFile, shown: str, max_item: int = MAX_ITEM
) -> Iterator[tuple[Any, Span, int]]:
    """One JSON value per nonblank line; the span is the line without its line end (a line
    over ``max_item`` bytes is E504).  Streams: one line is in memory at a time."""
    with f.open() as handle:
        start = after_bom(handle.read(len(BOM)))
        handle.seek(start)
        for n, chunk in enumerate(handle, start=1):
            body = chunk[:-1] if chunk.endswith(b"\n") else chunk
            body = body[:-1] if body.endswith(b"\r") else body
            if len(body) > max_item:
                raise malformed(shown, n, f"the line is larger than {max_item} bytes")
            if body.strip():
                decoded = decode(body, shown, n)
                yield parse(decoded, shown, n), Span(f.path, start, start + len(body), decoded), n
            start += len(chunk)


_ESCAPES = {ord(k): v for k, v in zip('"\\/bfnrt', '"\\/\b\f\n\r\t', strict=True)}


def string_member(raw: bytes, key: str, expected: str) -> list[int] | None:
    """Byte offsets (within ``raw``) of each character of the string member ``key`` of the
    JSON object ``raw``, plus the offset of its closing quote; None when the member cannot
    be found as written (then the caller cites the whole record).  A span can so cover part
    of a string (one evidence fragment) with its escapes as written."""
    m = re.search(rb'"' + re.escape(key.encode()) + rb'"\s*:\s*"', raw)
    if m is None:
        return None
    decoded = _decode_string(raw, m.end())
    if decoded is None or decoded[0] != expected:
        return None  # a nested or repeated key: not the member json.loads kept
    return decoded[1]


def _decode_string(raw: bytes, i: int) -> tuple[str, list[int]] | None:
    chars: list[str] = []
    offsets: list[int] = []
    while i < len(raw):
        b = raw[i]
        offsets.append(i)
        if b == 0x22:
            return "".join(chars), offsets
        if b == 0x5C:
            ch, width = _escape(raw, i)
        else:
            width = 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            ch = raw[i : i + width].decode("utf-8", "replace")
        chars.append(ch)
        i += width
    return None


def _escape(raw: bytes, i: int) -> tuple[str, int]:
    kind = raw[i + 1]
    if kind != ord("u"):
        return _ESCAPES.get(kind, "?"), 2
    code = int(raw[i + 2 : i + 6], 16)
    if 0xD800 <= code < 0xDC00 and raw[i + 6 : i + 8] == b"\\u":
        low = int(raw[i + 8 : i + 12], 16)
        if 0xDC00 <= low < 0xE000:
            return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), 12
    return chr(code), 6


# -- CSV -------------------------------------------------------------------------------


class _Lines:
    """The decoded lines of a binary file for the csv module, with where each record
    began: its byte offset, its first line and its byte length so far."""

    def __init__(self, handle: IO[bytes], shown: str) -> None:
        self.handle, self.shown = handle, shown
        self.offset = 0  # byte offset just past the last line handed out
        self.number = 0  # its 1-based number
        self.first: tuple[int, int] | None = None  # (offset, line) of the record being read
        self.parts: list[str] = []
        self.eof = False

    def __iter__(self) -> Iterator[str]:
        for raw in self.handle:
            self.number += 1
            start = self.offset
            self.offset += len(raw)
            if self.number == 1:
                skip = after_bom(raw)
                raw, start = raw[skip:], start + skip
            if self.first is None:
                self.first = (start, self.number)
            self.parts.append(decode(raw, self.shown, self.number))
            yield self.parts[-1]
        self.eof = True

    def take(self) -> tuple[int, int, str]:
        """(start, first line, text without its line end) of the record just read."""
        assert self.first is not None
        (start, line), body = self.first, "".join(self.parts)
        self.first, self.parts = None, []
        return start, line, body.removesuffix("\n").removesuffix("\r")


def csv_rows(f: SourceFile, shown: str) -> Iterator[tuple[list[str], Span, int]]:
    """The cells of each CSV record (header included), its span (the record's exact text,
    its line end left out) and first line; blank lines are skipped.  RFC 4180 as Python's
    csv module reads it: a quote that opens a cell quotes it (the cell may span lines, ``""``
    is a quote inside it), a quote anywhere else is a literal character (``5'10"``).  An
    unclosed quote is E504 at the line where its record starts.  Streams: one record is in
    memory at a time."""
    with f.open() as handle:
        lines = _Lines(handle, shown)
        reader = csv.reader(lines, strict=True)
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                line = lines.first[1] if lines.first else lines.number
                # At the end of the file, the only record left open is a quoted cell's.
                why = "a quoted cell is not closed before the end of the file"
                raise malformed(shown, line, why if lines.eof else f"invalid CSV: {exc}") from None
            start, line, body = lines.take()
            if body.strip():
                end = start + len(body.encode("utf-8"))
                yield cells, Span(f.path, start, end, body), line


# -- Markdown: frontmatter, top-level sections (headings inside code fences are not) ----

# Only the opening run is a pattern: the closing run is stripped by hand, because a lazy
# text group before optional blanks and hashes backtracks cubically on a long blank run.
_HEADING_OPEN = re.compile(rb"#{1,6}[ \t]")
_FENCE = re.compile(rb"(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    title: str | None  # the heading's text; None for text before the first section
    start: int  # byte offsets of the whole section, heading line included
    end: int
    body_start: int  # first byte after the heading line


def _lines(raw: bytes, start: int = 0) -> list[tuple[int, bytes]]:
    out, pos = [], start
    for line in raw[start:].split(b"\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out


def opens_frontmatter(raw: bytes) -> bool:
    first = raw.removeprefix(BOM).split(b"\n", 1)[0]
    return first.rstrip(b"\r") == b"---"


def frontmatter(raw: bytes) -> tuple[int, int, int] | None:
    """(start, end, body_start) of the YAML between a first line '---' and the next line
    '---' at column 0; None when the file does not start with one."""
    bom = after_bom(raw)
    lines = _lines(raw, bom)
    if not lines or lines[0][1].rstrip(b"\r") != b"---":
        return None
    for pos, line in lines[1:]:
        if line.rstrip(b"\r") == b"---":
            body = min(pos + len(line) + 1, len(raw))
            return lines[1][0] if len(lines) > 1 else pos, pos, body
    return None


def _headings(raw: bytes, start: int) -> list[tuple[int, int, int, str]]:
    """(level, line start, line end, text) of each ATX heading outside code fences."""
    found = []
    fence: bytes | None = None
    for pos, line in _lines(raw, start):
        stripped = line.lstrip(b" ")
        if len(line) - len(stripped) > 3:
            continue  # indented code, not a heading or fence
        opener = _FENCE.match(stripped)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            continue
        heading = _heading(stripped)
        if heading is not None:
            found.append((heading[0], pos, pos + len(line), heading[1]))
    return found


def _heading(line: bytes) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line: ``#``s, a blank, the text, then optionally
    blanks, a closing run of ``#`` and blanks (a CR of a CRLF line end is dropped)."""
    opener = _HEADING_OPEN.match(line)
    if opener is None:
        return None
    level = opener.end() - 1
    text = line[level:].removesuffix(b"\r").rstrip(b" \t").rstrip(b"#").rstrip(b" \t")
    return level, text.decode("utf-8", "replace").strip()


def sections(raw: bytes, start: int = 0) -> tuple[str | None, list[Section]]:
    """The file's title (a lone top heading that opens the file) and its top-level sections.

    Sections split at the shallowest heading level; when one heading of that level opens
    the file and deeper headings follow, it is the file's title and the sections split at
    the next level.  Text before the first section is a section with no title.
    """
    if start == 0 and raw.startswith(BOM):
        start = len(BOM)  # a BOM would hide the opening heading
    heads = _headings(raw, start)
    title = None
    levels = sorted({h[0] for h in heads})
    if levels:
        top = [h for h in heads if h[0] == levels[0]]
        opens = raw[start : heads[0][1]].strip() == b""
        if len(top) == 1 and top[0] is heads[0] and opens and len(levels) > 1:
            title = heads[0][3]
            start = min(heads[0][2] + 1, len(raw))
            heads = [h for h in heads[1:]]
            levels = levels[1:]
    cuts = [h for h in heads if levels and h[0] == levels[0]]
    out: list[Section] = []
    first = cuts[0][1] if cuts else len(raw)
    if raw[start:first].strip():
        out.append(Section(None, start, first, start))
    for i, (_, pos, line_end, text) in enumerate(cuts):
        end = cuts[i + 1][1] if i + 1 < len(cuts) else len(raw)
        out.append(Section(text, pos, end, min(line_end + 1, end)))
    return title, out


def trimmed(raw: bytes, start: int, end: int) -> tuple[int, int]:
    """The range without its leading and trailing blank space."""
    while start < end and raw[start : start + 1] in (b" ", b"\t", b"\r", b"\n"):
        start += 1
    while end > start and raw[end - 1 : end] in (b" ", b"\t", b"\r", b"\n"):
        end -= 1
    return start, end
