"""The import record parses back exactly, whatever the spans hold, and never hangs on a
record cut short or edited by hand (``show`` reads it)."""

from __future__ import annotations

from evidence_tool.sources.import_record import HEAD, Located, parse, render

# Span texts that look like the record's own headers and fences, or hold non-ASCII and CR.
TRICKY = [
    ("imports/a.csv", 0, "x\n\n## imports/a.csv:9-9 (bytes 1-2)\n\n```text\ny"),
    ("imports/a.csv", 60, "````sql\nx\n``"),
    ("imports/b.json", 0, "héllo\r\nwörld"),
]


def test_spans_that_look_like_headers_and_fences_parse_back() -> None:
    spans = [
        Located(path, start, start + len(text.encode()), 1, 1 + text.count("\n"), text)
        for path, start, text in TRICKY
    ]
    text = render("vanna", "imports", "0" * 64, spans)
    assert text.encode().startswith(HEAD)
    assert parse(text.encode()) == sorted(spans, key=lambda s: (s.path, s.start, s.end))
    for s in spans:
        assert s.text in text


def test_a_record_cut_short_or_edited_parses_what_it_can_and_stops() -> None:
    spans = [
        Located("imports/a.txt", 0, 5, 1, 1, "alpha"),
        Located("imports/a.txt", 6, 10, 2, 2, "beta"),
    ]
    data = render("vanna", "imports", "0" * 64, spans).encode()
    cuts = 0
    for n in range(len(data)):
        parsed = parse(data[:n])  # must return, never loop
        assert len(parsed) <= 2
        cuts += 1
    assert cuts == len(data) > 100
    edited = data.replace(b"(bytes 0-5)", b"(bytes 0-500)")
    assert len(parse(edited)) <= 2
    assert parse(b"# A document\n\n## Not a record\n") == []
