"""The refiner of import sources: run the format's importer, verify its spans, propose.

Each imported unit is rendered and parsed again (an invalid one is a review
item, as for a draft); each span is checked against the file's bytes at its
offsets, so an importer can never make a unit claim a text the source does
not hold (a mismatch is a review item and the span is not cited).  The
proposal carries the import record built from the verified spans, plus what
the format holds that no unit field does (``not_imported``) and what it
skipped by design (``skipped``), for the comparison.
"""

from __future__ import annotations

import mmap
import os
from collections import defaultdict
from typing import Any

from evidence_tool.errors import EvidenceError, SourceError
from evidence_tool.importers.base import Imported, ImportInput, ImportResult, Span
from evidence_tool.importers.formats import importer_for
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources import import_record
from evidence_tool.sources.document import Acquired
from evidence_tool.sources.import_record import Located
from evidence_tool.sources.import_source import ImportAcquired
from evidence_tool.sources.records import NotImportedItem, ReviewCode
from evidence_tool.sources.refiner import Proposal, ProposedUnit, RefinerRequest, _add_markdown
from evidence_tool.unit import render
from evidence_tool.unit._speed.roundtrip import renders_back

MISMATCH = "span-mismatch"


class ImportRefiner:
    """Proposals of one import source; its identity names the format and options (the
    tool's version is in every cache key), so a changed importer refines again."""

    name = "import"

    def __init__(self, fmt: str, options: JsonObject) -> None:
        self.format = fmt
        self.options = options  # the descriptor's, as written there (a JSON boundary)

    def identity(self) -> JsonObject:
        return {"kind": "import", "format": self.format, "options": self.options}

    def refine(self, doc: Acquired, request: RefinerRequest) -> Proposal:
        assert isinstance(doc, ImportAcquired)
        source = doc.input(request.language)
        result = importer_for(self.format).read(source)
        proposal = build_proposal(doc, source, result)
        _check_unchanged(doc)  # after the spans were verified too: all of one content
        return proposal


def for_source(doc: ImportAcquired) -> ImportRefiner:
    return ImportRefiner(doc.format, dict(doc.options))


def _check_unchanged(doc: ImportAcquired) -> None:
    """E501 when a file changed while it was hashed and imported: the proposal would not
    be the one of the hashed content.  The file is opened as every read opens it (no link
    followed, the identity hashed checked), never stat'ed through a link."""
    for (name, size, mtime), f in zip(doc.stamps, doc.files, strict=True):
        shown = f"{doc.root}/{name}" if doc.root else name
        try:
            info: os.stat_result | None = f.stat_now()
        except SourceError:
            info = None
        if info is None or (info.st_size, info.st_mtime_ns) != (size, mtime):
            raise SourceError(
                f"{shown} changed while it was being imported; refresh again", path=shown
            )


def _locate(source: ImportInput, spans: list[Span]) -> tuple[dict[Span, Located], list[Span]]:
    """Verified spans with their lines, and the spans that do not hold their text. Each
    file is mapped, not read: a 100 MB input costs the pages the spans touch."""
    found: dict[Span, Located] = {}
    bad: list[Span] = []
    by_file: dict[str, list[Span]] = defaultdict(list)
    for span in set(spans):
        by_file[span.path].append(span)
    for path, group in sorted(by_file.items()):
        f = source.file(path)
        if f is None:
            bad.extend(group)
            continue
        with f.open() as handle:  # the file hashed, no link followed
            size = os.fstat(handle.fileno()).st_size
            data: Any = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            try:
                _locate_in(data, size, source.shown(path), group, found, bad)
            finally:
                if size:
                    data.close()
    return found, bad


def _locate_in(
    data: Any,
    size: int,
    shown: str,
    group: list[Span],
    found: dict[Span, Located],
    bad: list[Span],
) -> None:
    pos, line = 0, 1  # line of byte ``pos``: counted forward, spans in offset order
    for span in sorted(group, key=lambda s: (s.start, s.end)):
        if not (0 <= span.start < span.end <= size):
            bad.append(span)
            continue
        line += data[pos : span.start].count(b"\n")
        pos = span.start
        raw = data[span.start : span.end]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text != span.text:
            bad.append(span)
            continue
        last = line + raw.rstrip(b"\n").count(b"\n")
        found[span] = Located(shown, span.start, span.end, line, last, span.text)


def _where(located: dict[Span, Located], span: Span | None) -> str | None:
    return located[span].where if span is not None and span in located else None


# Items that say an element is incomplete rather than wrong: the element is left out of the
# proposal and listed as not imported with what to write where (docs/importers.md, "Adopt
# what is complete"), so the rest stays adoptable without editing the source project.
INCOMPLETE = {
    "meaning-missing": "values without meanings",
    "not-representable": "a text only the source tool can render",
}


def build_proposal(doc: ImportAcquired, source: ImportInput, result: ImportResult) -> Proposal:
    """The proposal of an import: units with verified span texts as excerpts, the
    importer's review items, the import record, not-imported elements and skip counts."""
    proposal = Proposal()
    incomplete: dict[str, tuple[str, str]] = {}  # unit id -> (code, message), first wins
    for code, message, unit_id in result.review_items:
        if code in INCOMPLETE and unit_id is not None:
            incomplete.setdefault(unit_id, (code, message))
        else:
            proposal.raise_item(code, message, unit_id)
    spans = [s for item in result.units for s in item.spans]
    spans += [n.span for n in result.not_imported if n.span is not None]
    spans += result.item_spans.values()
    located, bad = _locate(source, spans)
    bad_set = set(bad)
    cited: list[Located] = []
    cited_by: dict[Located, list[str]] = defaultdict(list)  # for show: whose place it is
    held: dict[str, NotImportedItem] = {}
    for item in result.units:
        uid = item.unit.id
        if uid in incomplete:
            code, message = incomplete[uid]
            at = _where(located, item.spans[0] if item.spans else None)
            held.setdefault(uid, _incomplete(item.unit.title, code, message, uid, at))
            continue
        good = _propose(proposal, item, source, located, bad_set)
        cited += good
        for g in good:
            cited_by[g].append(uid)
    proposal.record = import_record.render(
        doc.format, str(doc.provenance["path"]), doc.content_hash, cited, cited_by
    )
    for uid, (code, message) in incomplete.items():  # items without a unit built
        if uid not in held:
            at = _where(located, result.item_spans.get(uid))
            held[uid] = _incomplete(uid, code, message, uid, at)
    proposal.not_imported = [
        NotImportedItem(n.element, n.what, _where(located, n.span)) for n in result.not_imported
    ] + [held[uid] for uid in sorted(held)]
    proposal.skipped = dict(sorted(result.skipped.items()))
    return proposal


def _propose(
    proposal: Proposal,
    item: Imported,
    source: ImportInput,
    located: dict[Span, Located],
    bad: set[Span],
) -> list[Located]:
    """One built unit into ``proposal`` (a span that does not hold its text raised as an
    item); the places it cites, none when it cannot be rendered."""
    uid = item.unit.id
    good = [located[s] for s in item.spans if s in located]
    for span in item.spans:
        if span in bad:
            proposal.raise_item(
                MISMATCH,
                f"the importer cites {source.shown(span.path)} bytes {span.start}-"
                f"{span.end}, which do not hold the text it gives; the span is not cited",
                uid,
            )
    first = good[0].where if good else "the source"
    try:
        markdown = render(item.unit)
    except (EvidenceError, ValueError, TypeError) as exc:
        proposal.raise_item(ReviewCode.INVALID_UNIT, f"unit from {first}: {exc}", uid)
        return []
    excerpts = list(dict.fromkeys(g.text for g in good))
    if renders_back(item.unit, markdown):
        # Known to parse back equal with no error: the typed unit is the parse's result.
        proposal.units.append(ProposedUnit(item.unit, excerpts, markdown))
    else:
        _add_markdown(proposal, markdown, excerpts, f"unit from {first}", uid, item.unit)
    return good


def _incomplete(element: str, code: str, message: str, uid: str, at: str | None) -> NotImportedItem:
    return NotImportedItem(element, INCOMPLETE[code], at, code, uid, message)
