"""The records of a top-level JSON array, read in blocks with each record's exact bytes.

A BIRD ``dev.json`` (or any export that is one array of objects) can be far
larger than one record: a small scanner finds where each element starts and
ends (strings and nesting followed, nothing decoded), so ``json.loads`` sees
one record at a time and the record's byte range is known exactly, for the
span its unit cites.  A second helper maps a string member of a record back
to its raw bytes, so a span can cover part of a string (one evidence fragment)
with its escapes as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from evidence_tool.importers.base import BOM, after_bom, malformed

BLOCK = 1 << 20
_OUTSIDE = re.compile(rb'["{}\[\]]')  # what changes the scanner's state outside a string
_INSIDE = re.compile(rb'["\\]')
_SPACE = b" \t\r\n"


@dataclass(frozen=True)
class RawRecord:
    start: int  # byte offset of the record's first byte in the file
    raw: bytes  # the record's exact bytes, '{' to '}'
    line: int  # 1-based line of its first byte


class _Reader:
    """A window over the file: ``buf`` holds bytes from file offset ``base``."""

    def __init__(self, handle: IO[bytes], shown: str) -> None:
        self.handle, self.shown = handle, shown
        self.buf, self.base, self.eof = b"", 0, False
        self.line = 1  # line of buf[0]

    def more(self) -> bool:
        if self.eof:
            return False
        block = self.handle.read(BLOCK)
        if not block:
            self.eof = True
            return False
        self.buf += block
        return True

    def drop(self, upto: int) -> None:
        """Forget buf[:upto] (consumed), keeping the line count."""
        self.line += self.buf.count(b"\n", 0, upto)
        self.buf, self.base = self.buf[upto:], self.base + upto

    def line_at(self, i: int) -> int:
        return self.line + self.buf.count(b"\n", 0, i)

    def skip_space(self, i: int) -> int:
        """Index of the next non-space byte at or after ``i`` (len(buf) at the end)."""
        while True:
            while i < len(self.buf) and self.buf[i] in _SPACE:
                i += 1
            if i < len(self.buf) or not self.more():
                return i

    def fail(self, i: int, why: str) -> Exception:
        return malformed(self.shown, self.line_at(i), why)


def array_records(
    handle: IO[bytes], shown: str, *, what: str, max_record: int
) -> Iterator[RawRecord]:
    """Each element of the file's top-level array, which must be an object of at most
    ``max_record`` bytes (E504 naming ``shown`` and the line otherwise). ``what`` names the
    file's expected content in messages ("a BIRD questions file")."""
    r = _Reader(handle, shown)
    while len(r.buf) < len(BOM) and r.more():
        pass  # a block shorter than the BOM must not hide it
    i = after_bom(r.buf)
    i = r.skip_space(i)
    if i >= len(r.buf) or r.buf[i : i + 1] != b"[":
        raise r.fail(i, f"the file is not a JSON array; {what} is one array of objects")
    i = r.skip_space(i + 1)
    if r.buf[i : i + 1] == b"]":
        _check_end(r, i + 1)
        return
    while True:
        if r.buf[i : i + 1] != b"{":
            raise r.fail(i, f"an element of the array is not a JSON object; {what} holds objects")
        r.drop(i)
        end = _object_end(r, max_record)
        yield RawRecord(r.base, r.buf[:end], r.line)
        i = r.skip_space(end)
        sep = r.buf[i : i + 1]
        if sep == b"]":
            _check_end(r, i + 1)
            return
        if sep != b",":
            raise r.fail(i, "invalid JSON: expected ',' or ']' after a record")
        i = r.skip_space(i + 1)


def _object_end(r: _Reader, max_record: int) -> int:
    """Index just past the object that starts at buf[0]."""
    depth, i, inside = 0, 0, False
    while True:
        if i > max_record:
            raise r.fail(0, f"a record is larger than {max_record} bytes")
        m = (_INSIDE if inside else _OUTSIDE).search(r.buf, i)
        if m is None:
            i = len(r.buf)
            if not r.more():
                raise r.fail(0, "invalid JSON: the record is not closed before the end")
            continue
        i, ch = m.start(), r.buf[m.start()]
        if inside:
            if ch == 0x5C:  # backslash: the next byte is escaped
                if i + 1 >= len(r.buf) and not r.more():
                    raise r.fail(0, "invalid JSON: the record is not closed before the end")
                i += 2
                continue
            inside = False
        elif ch == 0x22:
            inside = True
        elif ch in b"{[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def _check_end(r: _Reader, i: int) -> None:
    j = r.skip_space(i)
    if j < len(r.buf):
        raise r.fail(j, "invalid JSON: text after the closing ']'")


# -- string members ---------------------------------------------------------------------

_ESCAPES = {ord(k): v for k, v in zip('"\\/bfnrt', '"\\/\b\f\n\r\t', strict=True)}


def string_member(raw: bytes, key: str, expected: str) -> list[int] | None:
    """Byte offsets (within ``raw``) of each character of the string member ``key`` of the
    JSON object ``raw``, plus the offset of its closing quote; None when the member cannot
    be found as written (then the caller cites the whole record)."""
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
        if b == 0x22:
            offsets.append(i)
            return "".join(chars), offsets
        offsets.append(i)
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


# -- duplicate member names ----------------------------------------------------------------


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


def loads_unique(text: str | bytes) -> Any:
    """``json.loads`` refusing a duplicate member name (``DuplicateKey``)."""
    return json.loads(text, object_pairs_hook=_unique_pairs)


def duplicate_line(raw: bytes, key: str) -> int:
    """Lines before the second ``"key":`` in ``raw`` (0 when it is not written plainly)."""
    name = json.dumps(key, ensure_ascii=False).encode("utf-8")
    found = [m.start() for m in re.finditer(re.escape(name) + rb"\s*:", raw)]
    return raw.count(b"\n", 0, found[1]) if len(found) > 1 else 0


def duplicate_message(key: str) -> str:
    return (
        f"the member {key!r} appears twice in one object; JSON readers disagree on which "
        "one counts: keep one"
    )
