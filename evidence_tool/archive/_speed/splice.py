"""Splicing a new manifest out of the previous one: a change costs what it changes.

A consolidation that changes k of N units keeps N - k entry objects of the
previous manifest as they are (``derive`` reuses them by identity).  Their
encodings already sit, in order, in the previous snapshot's ``manifest.json``
and in ``local-manifest.yaml``: the new documents copy those bytes in runs and
encode only the k new entries, instead of encoding N entries twice.

A run is located by searching its first entry's key in the previous bytes,
moving forward only.  In a manifest it is trusted only if counting element
boundaries puts that entry exactly at its index, so a manifest in any other
layout (an older one-line one) lends nothing and is encoded afresh; the
mirror is trusted by its seal instead (the sha256 of what was written for the
previous snapshot), so a hand-edited mirror lends nothing either.  Cost: one
forward pass over the previous bytes in C, plus Python work per run and per
new entry, not per unchanged entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from evidence_tool.jsonvalue import JsonValue

Run = tuple[int, int]  # previous indices [start, end), taken over unchanged
# A run, or a new entry (a manifest object, JSON) to encode afresh.
Piece: TypeAlias = "Run | JsonValue"
Buffer = bytes | memoryview


def plan(prev: Sequence[JsonValue], new: Sequence[JsonValue], key: str) -> list[Piece]:
    """``new`` as runs of ``prev`` entries taken over (the very objects) and new entries.

    Both lists are sorted by ``key``: one merge walk, no per-entry lookups.  Were they
    not, the plan would only hold more new entries (encoded afresh), never a wrong run.
    """
    out: list[Piece] = []
    i, n = 0, len(prev)
    start = end = 0  # the open run, prev[start:end]
    for e in new:
        if i < n and prev[i] is not e:
            while i < n and prev[i] is not e and _before(prev[i], e, key):
                i += 1  # a previous entry the new list no longer holds
        if i < n and prev[i] is e:
            if i != end:
                if end > start:
                    out.append((start, end))
                start = i
            end = i = i + 1
            continue
        if end > start:
            out.append((start, end))
        start = end = i
        out.append(e)
    if end > start:
        out.append((start, end))
    return out


def _before(p: JsonValue, e: JsonValue, key: str) -> bool:
    """Whether entry ``p`` sorts before ``e`` by their string ``key`` (anything else: no)."""
    a = p.get(key) if isinstance(p, dict) else None
    b = e.get(key) if isinstance(e, dict) else None
    return isinstance(a, str) and isinstance(b, str) and a < b


@dataclass(frozen=True)
class Section:
    """``count`` elements joined by ``joiner`` in ``data[start:end]``.

    ``boundary`` is found at offset ``at`` of every joiner and never inside an
    element: for the JSON manifest the joiner is ",\\n" and the boundary its
    newline (the fastest thing to count); for the YAML mirror the joiner is
    "\\n" and the boundary "\\n- id: ", which reaches into the next block.
    ``needle(k)`` is searched forward to find element k: it either starts with
    the boundary before element k (``hit_is_boundary``) or lies inside
    element k, held by no element in between.
    """

    data: bytes
    start: int
    end: int
    count: int
    joiner: bytes
    boundary: bytes
    at: int
    needle: Callable[[int], bytes]
    hit_is_boundary: bool
    # Count boundaries to prove each run sits at its index.  A caller that already holds
    # proof that ``data`` is its own rendering of exactly these elements (the YAML
    # mirror's seal: a sha256 of what was written) may skip the count.
    verify: bool = True

    def splice(
        self, pieces: list[Piece], encode: Callable[[JsonValue], bytes]
    ) -> list[Buffer] | None:
        """The new section as buffers to join (runs are views into ``data``: the bytes
        are copied once, into the new document), or None when ``data`` cannot be trusted."""
        out: list[Buffer] = []
        view = memoryview(self.data)
        cursor, seen = self.start, 0  # seen: boundaries starting before cursor
        for piece in pieces:
            if out:
                out.append(self.joiner)
            if not isinstance(piece, tuple):
                out.append(encode(piece))
                continue
            first, last = piece
            begin = self.start
            if first:
                edge = self._boundary_before(first, cursor)
                if edge is None:
                    return None
                seen += self._boundaries(cursor, edge + 1)  # up to and with this boundary
                begin = edge - self.at + len(self.joiner)
            if seen != first and self.verify:
                return None  # the hit is not the element at this index
            stop = self.end
            if last < self.count:
                edge = self._boundary_before(last, begin)
                if edge is None:
                    return None
                stop = edge - self.at  # the joiner after the run is not part of it
            seen += self._boundaries(begin, stop)
            if seen != last - 1 and self.verify:
                return None
            out.append(view[begin:stop])
            cursor = stop
        return out

    def _boundaries(self, a: int, b: int) -> int:
        """Boundaries starting in [a, b) (not counted, 0, when unverified)."""
        if not self.verify:
            return 0
        return self.data.count(self.boundary, a, b + len(self.boundary) - 1)

    def _boundary_before(self, k: int, cursor: int) -> int | None:
        """Where the boundary before element k (k > 0) starts."""
        pos = self.data.find(self.needle(k), cursor, self.end)
        if pos < 0:
            return None
        if self.hit_is_boundary:
            return pos
        edge = self.data.rfind(self.boundary, cursor, pos)
        return edge if edge >= 0 else None
