"""The import record: what ``replace`` keeps of an import source instead of its input.

An input may be 100 MB of which the units cite a few kilobytes, so the record
holds only the cited spans, each under its location header
``## <path>:<first line>-<last line> (bytes <start>-<end>)`` and verbatim in a
fence longer than any backtick run inside it.  Every excerpt of every
declaration is a span text, so it occurs verbatim in the record and
consolidate/verify check it like any document excerpt.  The byte range in
each header makes the record parse back exactly whatever the spans contain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence_tool.archive.records import Declaration, ManualDeclaration
from evidence_tool.workspace.layout import Layout

HEAD = b"# Import record\n"
# The header names the units that cite the span (since issue 28): two elements with one
# text (a shared description) are then told apart by ``show``.
_HEADER = re.compile(rb"## (.+):(\d+)-(\d+) \(bytes (\d+)-(\d+)\)(?: cited by (\S.*))?")


@dataclass(frozen=True)
class Located:
    """A verified span with its place: workspace-relative path and 1-based line range."""

    path: str
    start: int
    end: int
    first_line: int
    last_line: int
    text: str
    units: tuple[str, ...] = field(default=(), compare=False)  # who cites it (a record's)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.first_line}-{self.last_line}"


def render(
    fmt: str,
    path: str,
    input_hash: str,
    spans: list[Located],
    cited_by: dict[Located, list[str]] | None = None,
) -> str:
    """The record of one import: a short head, then each span once, in file order, its
    header naming the units that cite it (``cited_by``)."""
    # The importers' fence: imported here, since show reads records and never writes one.
    from evidence_tool.importers.unit_parts import fence as fence_for

    out = [
        HEAD.decode() + "\n",
        f"The source text that the units imported from `{path}` (format `{fmt}`) cite,\n"
        "each under the file, lines and bytes it came from. Written by `decide`;\n"
        "do not edit.\n\n",
        f"- format: {fmt}\n- path: {path}\n- input: {input_hash}\n- spans: {len(spans)}\n",
    ]
    for s in sorted(set(spans), key=lambda s: (s.path, s.start, s.end)):
        fence = fence_for(s.text)
        units = sorted(set((cited_by or {}).get(s, ())))
        by = f" cited by {', '.join(units)}" if units else ""
        out.append(
            f"\n## {s.where} (bytes {s.start}-{s.end}){by}\n\n{fence}text\n{s.text}\n{fence}\n"
        )
    return "".join(out)


def parse(data: bytes) -> list[Located]:
    """The spans of a record, exactly; [] for bytes that are not one (a document). A
    record cut short or edited by hand yields the spans before the damage: the scan only
    moves forward, so it always ends."""
    out: list[Located] = []
    pos = data.find(b"\n## ")
    while pos >= 0:
        eol = data.find(b"\n", pos + 1)
        match = _HEADER.fullmatch(data[pos + 1 : eol]) if eol > 0 else None
        fence_end = data.find(b"\n", eol + 2) if match else -1  # a blank line, the fence
        if match is None or fence_end < 0:
            return out
        path, first, last, start, end, units = match.groups()
        body = fence_end + 1
        stop = body + int(end) - int(start)
        fence = data[eol + 2 : fence_end].removesuffix(b"text")
        if data[stop : stop + len(fence) + 2] != b"\n" + fence + b"\n":
            return out  # the text is not followed by its closing fence: damaged
        text = data[body:stop].decode("utf-8", "replace")
        cited = tuple(u.strip() for u in units.decode().split(",")) if units else ()
        out.append(Located(path.decode(), int(start), int(end), int(first), int(last), text, cited))
        pos = data.find(b"\n## ", stop + len(fence) + 1)
    return out


def where_each(
    data: bytes, excerpts: list[str], unit_id: str | None = None
) -> dict[str, list[str]]:
    """excerpt -> the ``path:first-last`` of each span holding it (for ``show``); with
    ``unit_id``, a span whose header names its citing units counts only for those."""
    spans = parse(data)
    return {
        e: [
            s.where
            for s in spans
            if e in s.text and (unit_id is None or not s.units or unit_id in s.units)
        ]
        for e in excerpts
    }


def imported_from(
    layout: Layout, declaration: Declaration | None, unit_id: str | None = None
) -> list[str]:
    """For a unit adopted from an import, or edited since and keeping that lineage under
    ``original``: ``path:first-last`` of each excerpt's span, in excerpt order ([] for any
    other unit, or when the record cannot be read)."""
    doc = declaration.original if isinstance(declaration, ManualDeclaration) else declaration
    if doc is None:
        return []
    try:
        data = layout.resolve_inside(doc.source_path).read_bytes()
    except (OSError, ValueError):
        return []
    if not data.startswith(HEAD):
        return []
    found = where_each(data, list(doc.excerpts), unit_id)
    return list(dict.fromkeys(w for places in found.values() for w in places))
