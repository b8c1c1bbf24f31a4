"""Hypothesis strategies: valid typed units, their non-canonical spellings, metadata dicts.

Named ``unit_strategies`` (not ``strategies``) because test folders have no
``__init__.py``: module basenames must be unique across ``tests/``.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from evidence_tool.unit import (
    FIELDS,
    KINDS,
    PURPOSES,
    AppliesTo,
    DomainPayload,
    EnumPayload,
    EnumValue,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
    Metadata,
    NormalizationPayload,
    ReferencePayload,
    Unit,
    render,
)
from evidence_tool.unit.render import _field_text

# Every field heading of either language: prose headings must avoid them all.
FIELD_HEADINGS = {
    "Rule", "Regola", "Definition", "Definizione", "Synonyms", "Sinonimi", "Variants",
    "Varianti", "Column", "Colonna", "Values", "Valori", "Question", "Domanda",
    "Interpretation", "Interpretazione", "Concept", "Concetto", "Tables", "Tabelle",
    "Columns", "Colonne", "Input", "Output", "SQL", "URL", "Label", "Etichetta",
    "Description", "Descrizione",
}  # fmt: skip

# -- text pieces -----------------------------------------------------------------------

# Characters a file may hold: no surrogates (not UTF-8), no NUL, no CR (normalized away).
_FILE_CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\x00\r")
any_string = st.text(_FILE_CHARS, max_size=30)

_letters = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzàèéìòùßøå"), min_size=1, max_size=8)
word = st.one_of(
    _letters,
    _letters.map(str.capitalize),
    st.sampled_from(["`code`", "**bold**", "a_b", "x\\y", 'say "hi"', "50%", "<b>", "€5"]),
)
sentence = st.lists(word, min_size=1, max_size=8).map(" ".join)
one_line = st.lists(word, min_size=1, max_size=5).map(" ".join)


@st.composite
def prose_heading(draw: st.DrawFn, levels: tuple[int, ...] = (2, 3, 4, 5, 6)) -> str:
    text = draw(one_line.filter(lambda t: t not in FIELD_HEADINGS and t[0] not in "#="))
    return "#" * draw(st.sampled_from(levels)) + " " + text


@st.composite
def fence_block(draw: st.DrawFn) -> str:
    """A fenced example, possibly holding things that would be structural outside it."""
    inner = draw(
        st.lists(
            st.one_of(
                sentence,
                st.sampled_from(["# Title", "## Rule", "## Regola", "---", '### "x"', "~~~"]),
            ),
            max_size=4,
        )
    )
    marker = draw(st.sampled_from(["```", "~~~", "````"]))
    info = draw(st.sampled_from(["", "sql", "text", "markdown"]))
    # The closing fence must be longer than any run of the same character opening a line.
    runs = [len(line) - len(line.lstrip(marker[0])) for line in inner]
    marker = marker[0] * max([len(marker)] + [n + 1 for n in runs if n >= 3])
    return "\n".join([marker + info, *inner, marker])


@st.composite
def list_block(draw: st.DrawFn) -> str:
    bullet = draw(st.sampled_from(["-", "*", "+", "1."]))
    items = draw(st.lists(sentence, min_size=1, max_size=3))
    lines = [f"{bullet} {item}" for item in items]
    if draw(st.booleans()):
        lines.append("   - nested " + draw(sentence))
    if draw(st.booleans()):
        lines.append(f"{bullet} # heading in a list item")
    return "\n".join(lines)


quote_block = sentence.map(lambda s: f"> ## Rule inside a quote\n> {s}")
indented_code = sentence.map(lambda s: f"    # Title in indented code\n    {s}")
table_block = st.tuples(word, word).map(lambda t: f"| a | b |\n|---|---|\n| {t[0]} | {t[1]} |")


def markdown_text(*, allow_h2: bool = True, allow_h3: bool = True) -> st.SearchStrategy[str]:
    """Markdown for a text field (or, without H2/H3, an enum meaning)."""
    levels = tuple(n for n in (2, 3, 4, 5, 6) if (n != 2 or allow_h2) and (n != 3 or allow_h3))
    block = st.one_of(
        sentence,
        prose_heading(levels),
        fence_block(),
        list_block(),
        quote_block,
        table_block,
    )
    # A heading last would make the text end in a heading: fine, but keep a paragraph first
    # so an indented block never starts right after a heading (it would stay code anyway).
    return st.tuples(sentence, st.lists(st.one_of(block, indented_code), max_size=4)).map(
        lambda t: "\n\n".join([t[0], *t[1]])
    )


# -- identifiers -----------------------------------------------------------------------

_segment = st.one_of(
    st.from_regex(r"[a-z0-9._-]{1,12}", fullmatch=True),
    st.sampled_from(["no", "on", "off", "yes", "1e3", "2024-01-01", "null", "true", "0x1f", "007"]),
)


@st.composite
def unit_id(draw: st.DrawFn) -> str:
    segments = draw(st.lists(_segment, min_size=1, max_size=4))
    return "evidence:" + ":".join(segments)[:200].rstrip(":")


_plain_ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_$]{0,10}", fullmatch=True)
_quoted_ident = st.text(_FILE_CHARS, min_size=1, max_size=8).map(
    lambda s: '"' + s.replace('"', '""') + '"'
)
sql_ident = st.one_of(_plain_ident, _plain_ident, _quoted_ident)
table_ref = st.tuples(sql_ident, sql_ident).map(".".join)
column_ref = st.tuples(sql_ident, sql_ident, sql_ident).map(".".join)

language = st.one_of(
    st.sampled_from(["en", "it", "it-CH", "en-GB", "de", "fr-CA", "ita", "it-IT-x1"]),
    st.from_regex(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}", fullmatch=True),
)
concept = st.text(_FILE_CHARS, min_size=1, max_size=20).filter(
    lambda s: re.fullmatch(r"\S(.*\S)?", s) is not None
)


@st.composite
def applies_to(draw: st.DrawFn) -> AppliesTo:
    return AppliesTo(
        tuple(draw(st.lists(concept, max_size=3, unique=True))),
        tuple(draw(st.lists(table_ref, max_size=3, unique=True))),
        tuple(draw(st.lists(column_ref, max_size=3, unique=True))),
    )


@st.composite
def metadata(draw: st.DrawFn, kind: str) -> Metadata:
    return Metadata(
        id=draw(unit_id()),
        kind=kind,
        language=draw(language),
        purposes=tuple(draw(st.lists(st.sampled_from(PURPOSES), min_size=1, unique=True))),
        applies_to=draw(applies_to()),
    )


# -- titles and one-line values --------------------------------------------------------

# A title is one line; Markdown strips surrounding blanks and a closing '#' sequence.
title = st.text(
    st.characters(categories=["L", "N", "P", "S", "Zs"]),
    min_size=1,
    max_size=40,
).filter(lambda t: t == t.strip() and not re.search(r"(^|\s)#+$", t) and t.strip("#"))
# One-line values: any string at all, written plain or as a JSON string as needed.
# Values a plain line would misread: these must be written as JSON strings.
_needs_json = st.sampled_from(
    ["", " padded ", '"quoted"', "## heading", "# title", "```", "~~~", "<pre>", "two\nlines",
     "tab\t", "back\\slash", "\\", '"', "- dash", "\u2028", "\x7f", "    indented"]
)  # fmt: skip
line_value = st.one_of(_needs_json.filter(bool), st.text(_FILE_CHARS, min_size=1, max_size=30))
list_values = st.lists(
    st.one_of(_needs_json, st.text(_FILE_CHARS, max_size=20)), max_size=4, unique=True
)

_host = st.from_regex(r"[a-z0-9]{1,10}(\.[a-z0-9]{1,10}){0,2}", fullmatch=True)
url = st.builds(
    lambda scheme, host, port, path, query: f"{scheme}://{host}{port}{path}{query}",
    st.sampled_from(["http", "https", "HTTPS"]),
    _host,
    st.sampled_from(["", ":8080", ":443"]),
    st.from_regex(r"(/[A-Za-z0-9._~%-]{0,8}){0,3}", fullmatch=True),
    st.sampled_from(["", "?q=1", "?a=b&c=d#frag", "#top"]),
)

# -- formula SQL: a small grammar of PostgreSQL scalar expressions -----------------------

_sql_column = st.sampled_from(
    ["amount", "t.amount", "s.t.c", '"Quoted ""Col"""', "clinical.admissions.admission_date"]
)
_sql_literal = st.one_of(
    st.integers(0, 10_000).map(str),
    st.sampled_from(["1.5", "NULL", "TRUE", "'it''s'", "'a;b ``` c'", "$$x$$", "E'\\n'"]),
)


def _sql_expr() -> st.SearchStrategy[str]:
    atom = st.one_of(_sql_column, _sql_literal)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "||", "=", "<>"]), inner).map(
                " ".join
            ),
            inner.map(lambda e: f"({e})"),
            inner.map(lambda e: f"coalesce({e}, 0)"),
            inner.map(lambda e: f"sum({e})"),
            inner.map(lambda e: f"{e}::numeric"),
            inner.map(lambda e: f"{e} IS NULL"),
            st.tuples(inner, inner).map(lambda t: f"CASE WHEN {t[0]} THEN {t[1]} ELSE NULL END"),
            st.tuples(inner, inner).map(lambda t: f"nullif({t[0]},\n  {t[1]})"),
            inner.map(lambda e: f"count(*) FILTER (WHERE {e})"),
            inner.map(lambda e: f"{e} IN (1, 2, 3)"),
        )

    return st.recursive(atom, extend, max_leaves=6)


sql_expression = _sql_expr()

# -- units -----------------------------------------------------------------------------

text = markdown_text()
enum_meaning = st.one_of(st.just(""), markdown_text(allow_h2=False, allow_h3=False))


def _with_meanings(values: list[str]) -> st.SearchStrategy[tuple[EnumValue, ...]]:
    meanings = st.tuples(*(enum_meaning for _ in values))
    return meanings.map(lambda ms: tuple(map(EnumValue, values, ms)))


def payload(kind: str) -> st.SearchStrategy[Any]:
    if kind == "domain":
        return st.builds(DomainPayload, rule=text)
    if kind == "glossary":
        return st.builds(
            GlossaryPayload,
            definition=text,
            synonyms=list_values.map(tuple),
            variants=list_values.map(tuple),
        )
    if kind == "enum":
        values = st.lists(
            st.one_of(st.just(""), _needs_json, st.text(_FILE_CHARS, max_size=12)),
            min_size=1,
            max_size=4,
            unique=True,
        ).flatmap(_with_meanings)
        return st.builds(EnumPayload, column=column_ref, values=values)
    if kind == "example":
        return st.builds(ExamplePayload, question=text, interpretation=text)
    if kind == "mapping":
        tables = st.lists(table_ref, max_size=3, unique=True).map(tuple)
        columns = st.lists(column_ref, max_size=3, unique=True).map(tuple)
        return st.builds(MappingPayload, concept=line_value, tables=tables, columns=columns).filter(
            lambda p: bool(p.tables or p.columns)
        )
    if kind == "normalization":
        return st.builds(NormalizationPayload, input=text, output=text, rule=text)
    if kind == "formula":
        columns = st.lists(column_ref, max_size=3, unique=True).map(tuple)
        return st.builds(FormulaPayload, concept=line_value, sql=sql_expression, columns=columns)
    if kind == "reference":
        return st.builds(ReferencePayload, url=url, label=line_value, description=text)
    raise AssertionError(kind)


@st.composite
def units(draw: st.DrawFn, kinds: tuple[str, ...] = KINDS) -> Unit:
    kind = draw(st.sampled_from(kinds))
    return Unit(draw(metadata(kind)), draw(title), draw(payload(kind)))


# -- non-canonical spellings of the same unit --------------------------------------------


@st.composite
def reformatted(draw: st.DrawFn, unit: Unit) -> str:
    """``unit`` written non-canonically: metadata key order, block-style purposes, reordered
    ``applies_to`` keys, fields in any order, extra blank lines, CRLF line ends."""
    canonical = render(unit)
    head = canonical.split("\n---\n", 1)[0]
    entries: list[list[str]] = []
    for line in head.split("\n")[1:]:
        if line.startswith("  "):
            entries[-1].append(line)
        else:
            entries.append([line])
    out_entries = []
    for entry in entries:
        if entry[0].startswith("purposes:") and draw(st.booleans()):
            entry = ["purposes:", *(f"  - {p}" for p in unit.metadata.purposes)]
        elif entry[0] == "applies_to:":
            entry = ["applies_to:", *draw(st.permutations(entry[1:]))]
        out_entries.append(entry)
    meta_lines = [line for entry in draw(st.permutations(out_entries)) for line in entry]

    fields = []
    for spec in FIELDS[unit.kind]:
        body = _field_text(spec, getattr(unit.payload, spec.name))
        if body is not None:
            gap = draw(st.sampled_from(["\n\n", "\n\n\n"]))
            fields.append(f"## {spec.heading(unit.language)}{gap}{body}")
    fields = draw(st.permutations(fields))
    gap = draw(st.sampled_from(["\n\n", "\n\n\n", "\n\n\n\n"]))
    text = "---\n" + "\n".join(meta_lines) + "\n---\n" + draw(st.sampled_from(["", "\n", "\n\n"]))
    text += gap.join(["# " + unit.title, *fields]) + draw(st.sampled_from(["\n", "\n\n\n"]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


# -- metadata dicts for the schema agreement property ------------------------------------

_json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([4.0, 3.0]),
    st.text(_FILE_CHARS, max_size=10),
)


def _json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # A named function: hypothesis inspects a multi-line lambda's source unreliably and
    # then warns that it "doesn't use its argument".
    return st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    )


_json_value = st.recursive(_json_scalar, _json_containers, max_leaves=6)


def _string_near(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A valid string with one character added at either end: often, but not always, invalid."""
    edits = st.sampled_from(["", " ", "X", ":", "::", "\n", "\t", "é", '"', "_", "-"])
    return st.tuples(valid, edits, st.booleans()).map(
        lambda t: (t[1] + t[0]) if t[2] else (t[0] + t[1])
    )


_valid_values: dict[str, st.SearchStrategy[Any]] = {
    "schema_version": st.sampled_from([4, 4.0]),
    "id": unit_id(),
    "kind": st.sampled_from(KINDS),
    "language": language,
    "purposes": st.lists(st.sampled_from(PURPOSES), min_size=1, unique=True),
}
_valid_applies = st.fixed_dictionaries(
    {},
    optional={
        "concepts": st.lists(concept, max_size=3, unique=True),
        "tables": st.lists(table_ref, max_size=3, unique=True),
        "columns": st.lists(column_ref, max_size=3, unique=True),
    },
)
# Values that are wrong, or nearly right, for each key.
_near_values: dict[str, st.SearchStrategy[Any]] = {
    "schema_version": st.sampled_from([3, 5, 0, "4", True, 4.5, None]),
    "id": _string_near(unit_id()),
    "kind": st.sampled_from(["Domain", "domains", "", "rule"]),
    "language": _string_near(language),
    "purposes": st.lists(st.sampled_from([*PURPOSES, "rewrite", ""]), max_size=4),
    "applies_to": st.one_of(
        _json_value,
        st.fixed_dictionaries(
            {},
            optional={
                "concepts": st.lists(st.one_of(concept, _string_near(concept)), max_size=3),
                "tables": st.lists(st.one_of(table_ref, column_ref, _plain_ident), max_size=3),
                "columns": st.lists(st.one_of(column_ref, table_ref), max_size=3),
                "table": st.just([]),
            },
        ),
    ),
}


@st.composite
def metadata_dicts(draw: st.DrawFn) -> dict[Any, Any]:
    """Valid metadata with zero to two perturbations: about half of them stay valid."""
    meta: dict[Any, Any] = {key: draw(values) for key, values in _valid_values.items()}
    if draw(st.booleans()):
        meta["applies_to"] = draw(_valid_applies)
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):
        action = draw(st.sampled_from(["drop", "add", "near", "near", "any"]))
        key = draw(st.sampled_from(sorted(_near_values)))
        if action == "drop":
            meta.pop(key, None)
        elif action == "add":
            meta[draw(st.sampled_from(["purpose", "title", "Kind", "", 1]))] = draw(_json_value)
        elif action == "near":
            meta[key] = draw(_near_values[key])
        else:
            meta[key] = draw(_json_value)
    return dict(draw(st.permutations(list(meta.items()))))


def has_trailing_newline(value: Any) -> bool:
    """True if any string in ``value`` ends with a newline: Python's ``re.search`` '$' matches
    before it, ECMA's (and the compiled checker's fullmatch) does not."""
    if isinstance(value, str):
        return value.endswith("\n")
    if isinstance(value, dict):
        return any(has_trailing_newline(k) or has_trailing_newline(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_trailing_newline(v) for v in value)
    return False


# -- JSON-like data for yaml_strict.dump/load --------------------------------------------

_yaml_words = st.sampled_from(
    ["no", "on", "off", "yes", "y", "N", "1e3", "2024-01-01", "~", "null", "true", "False",
     "0x1f", "0o17", ".inf", "-.inf", ".nan", "1_000", "12:30", "- a", "a: b", "#c", "[x]",
     "{y}", "&a", "*b", "!t", "|", ">", "%p", "@q", "`r", "'s'", '"t"', "", " ", "a #b", "é"]
)  # fmt: skip
yaml_string = st.one_of(_yaml_words, st.text(_FILE_CHARS, max_size=20))
yaml_scalar = st.one_of(st.none(), st.booleans(), st.integers(), yaml_string, yaml_string)


def _yaml_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(yaml_string, inner, max_size=4))


yaml_data = st.recursive(yaml_scalar, _yaml_containers, max_leaves=12)
