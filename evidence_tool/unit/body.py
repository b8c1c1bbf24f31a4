"""The Markdown body: title and typed fields, read from markdown-it-py tokens.

Only top-level tokens (level 0) are structural, so a heading inside a fence,
a block quote or a list item never changes the structure.  Line numbers come
from ``Token.map`` and are reported 1-based in file coordinates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from evidence_tool.errors import Diagnostic, EvidenceWarning
from evidence_tool.unit import fields as F
from evidence_tool.unit.blockrules import may_stay_open, parser_for
from evidence_tool.unit.formula import check_expression
from evidence_tool.unit.identifiers import COLUMN_RE, REFERENCE_RE, TABLE_RE
from evidence_tool.unit.suggest import heading_suggestion


@dataclass
class _Heading:
    level: int
    text: str
    start: int  # 0-based body line of the heading
    end: int  # 0-based body line after the heading


@dataclass
class _Field:
    spec: F.FieldSpec
    heading: _Heading
    end: int = -1


@dataclass
class BodyResult:
    title: str | None = None
    # JSON boundary: field name -> the section's JSON-shaped value, checked against the
    # kind's schema before parse._build types it (no second pass per unit).
    values: dict[str, Any] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)


# An ATX heading drops a closing run of '#' (after a blank, or the whole text).
_CLOSING_HASHES = re.compile(r"(^|[ \t])#+$")


def _is_blank(line: str) -> bool:
    return not line.strip()


def _trim(lines: list[str]) -> str:
    start, end = 0, len(lines)
    while start < end and _is_blank(lines[start]):
        start += 1
    while end > start and _is_blank(lines[end - 1]):
        end -= 1
    return "\n".join(lines[start:end])


class _BodyParser:
    def __init__(self, body: str, offset: int, kind: str | None, language: str) -> None:
        self.lines = body.split("\n")
        self.offset = offset  # file line number of body line 0, minus 1
        self.kind = kind if isinstance(kind, str) and kind in F.FIELDS else None
        self.language = language
        self.out = BodyResult()
        self.bullets: dict[str, int] = {}  # list field -> non-blank lines, valid or not
        tokens = parser_for(body).parse(body)
        self.top = [t for t in tokens if t.level == 0]
        # Where each item of a top-level list starts (check_closed reparses only the last).
        self.items = [
            t.map[0] for t in tokens if t.type == "list_item_open" and t.level == 1 and t.map
        ]
        self.headings: list[_Heading] = []
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and tok.level == 0 and tok.map:
                text = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
                self.headings.append(_Heading(int(tok.tag[1]), text, tok.map[0], tok.map[1]))

    # -- diagnostics -------------------------------------------------------
    def error(self, code: str, message: str, line: int | None, column: int | None = 1) -> None:
        file_line = None if line is None else self.offset + line + 1
        self.out.errors.append(Diagnostic(code, message, line=file_line, column=column))

    def warn(self, message: str, line: int) -> None:
        self.out.warnings.append(EvidenceWarning(message, line=self.file_line(line), code="W111"))

    def file_line(self, line: int) -> int:
        return self.offset + line + 1

    def first_content(self, start: int, end: int) -> int | None:
        for i in range(start, min(end, len(self.lines))):
            if not _is_blank(self.lines[i]):
                return i
        return None

    # -- structure ---------------------------------------------------------
    def run(self) -> BodyResult:
        h1s = [h for h in self.headings if h.level == 1]
        if not h1s:
            self.error(
                "E110",
                "the unit has no title: add a '# Title' line after the frontmatter",
                self.first_content(0, len(self.lines)) or 0,
            )
            return self.out
        title = h1s[0]
        stray = self.first_content(0, title.start)
        if stray is not None:
            self.error("E111", "content before the '# Title' line; move it into a field", stray)
        if "\n" in title.text or not title.text:
            self.error("E110", "the title must be one nonempty line: '# Title'", title.start)
        elif _CLOSING_HASHES.search(title.text):
            # Only a setext title ('Title' over '===') can end so; '# Title #' would lose it.
            self.error(
                "E110",
                f"the title {title.text!r} ends with ' #', which a '# Title' line cannot hold; "
                "reword the end of the title",
                title.start,
            )
        else:
            self.out.title = title.text
        for extra in h1s[1:]:
            self.error(
                "E110",
                f"second title '# {extra.text}': a unit has exactly one H1; "
                "use '###' for a heading inside a field",
                extra.start,
            )
        if self.kind is None:
            return self.out
        self.fields(title)
        return self.out

    def fields(self, title: _Heading) -> None:
        """Cut the body into its field sections (E111/E112 for headings out of place),
        then read each field's value and check what the kind requires."""
        wanted = F.headings_for(self.kind or "", self.language)
        found: dict[str, _Field] = {}
        current: _Field | None = None
        outside_reported = False
        reported: set[int] = set()  # body lines of headings already reported as E111
        near_miss: dict[str, _Heading] = {}  # field heading meant -> the first near miss
        order: list[_Field] = []

        def close(at: int) -> None:
            if current is not None:
                current.end = at

        for h in self.headings:
            if h.start <= title.start:
                continue
            if h.level == 1:
                close(h.start)
                current = None
                outside_reported = True
                continue
            if h.level == 2 and h.text in wanted:
                close(h.start)
                current = self._field_heading(h, wanted[h.text], found, order)
                outside_reported = outside_reported or current is None
                continue
            if h.level != 2:
                continue
            if self._stray_heading(h, current, order, wanted, near_miss):
                reported.add(h.start)
                close(h.start)
                current = None
                outside_reported = True
        close(len(self.lines))
        self._stray_content(title, order, reported, outside_reported, wanted)
        for fld in order:
            self.field_value(fld)
        self._required(found, near_miss, title)

    def _field_heading(
        self, h: _Heading, spec: F.FieldSpec, found: dict[str, _Field], order: list[_Field]
    ) -> _Field | None:
        """A field's heading opens its section; a second copy is E112 and is not read."""
        if spec.name in found:
            self.error(
                "E112",
                f"duplicate field '## {h.text}' (first at line "
                f"{self.offset + found[spec.name].heading.start + 1}); "
                "merge the two sections",
                h.start,
            )
            return None
        found[spec.name] = field_ = _Field(spec, h)
        order.append(field_)
        return field_

    def _stray_heading(
        self,
        h: _Heading,
        current: _Field | None,
        order: list[_Field],
        wanted: dict[str, F.FieldSpec],
        near_miss: dict[str, _Heading],
    ) -> bool:
        """A level-2 heading that names no field: E111 outside a text field (True: the
        section ends there), a warning inside one (it is read as prose)."""
        suggestion = heading_suggestion(h.text, self.kind, self.language)
        hint = suggestion[1] if suggestion else None
        if suggestion and suggestion[0]:
            near_miss.setdefault(suggestion[0], h)
        if current is None or current.spec.type != F.TEXT:
            if current is not None:
                where = f"inside the non-text field '## {current.heading.text}'"
            else:
                where = "outside a field" if order else "before the first field"
            hint = hint or "field headings for this unit are " + _listed(wanted)
            self.error("E111", f"unexpected heading '## {h.text}' {where}; {hint}", h.start)
            return True
        if hint:
            # The line is in the text too: a warning is easy to lose among prose.
            self.warn(
                f"'## {h.text}' (line {self.file_line(h.start)}) is read as prose inside "
                f"'## {current.heading.text}' (line {self.file_line(current.heading.start)}); "
                f"{hint}",
                h.start,
            )
        return False

    def _stray_content(
        self,
        title: _Heading,
        order: list[_Field],
        reported: set[int],
        outside_reported: bool,
        wanted: dict[str, F.FieldSpec],
    ) -> None:
        """Text between the title and the first field belongs to no field: E111, unless a
        heading there was already reported."""
        first_field = order[0].heading.start if order else len(self.lines)
        stray = self.first_content(title.end, first_field)
        if stray is not None and stray not in reported and not (outside_reported and not order):
            self.error(
                "E111",
                "content between the title and the first field heading; "
                "put it under a field such as " + _listed(wanted),
                stray,
            )

    def _required(
        self, found: dict[str, _Field], near_miss: dict[str, _Heading], title: _Heading
    ) -> None:
        """Every required field present (E113), and a mapping names a table or a column."""
        for spec in F.FIELDS[self.kind or ""]:
            if spec.required and spec.name not in found:
                self.missing_field(spec.heading(self.language), near_miss, title)
        # Counted from the bullets written, so a malformed entry is one E114, not also an E113.
        if self.kind == "mapping" and not (
            self.bullets.get("tables") or self.bullets.get("columns")
        ):
            names = F.headings_for("mapping", self.language)
            t, c = (k for k, s in names.items() if s.name in ("tables", "columns"))
            self.error(
                "E113",
                f"a mapping needs at least one table or column: add '## {t}' "
                f"or '## {c}' with '- schema.table' bullets",
                title.start,
            )

    def missing_field(self, heading: str, near_miss: dict[str, _Heading], title: _Heading) -> None:
        """E113 for a required field; a near-miss heading of it is where the fix goes, so the
        error points there and replaces that heading's own E111 or W111 (one problem, one
        diagnostic)."""
        miss = near_miss.get(heading)
        if miss is None:
            self.error("E113", f"missing required field '## {heading}'", title.start)
            return
        suggestion = heading_suggestion(miss.text, self.kind, self.language)
        hint = suggestion[1] if suggestion else ""
        at = self.file_line(miss.start)
        self.out.errors = [d for d in self.out.errors if not (d.code == "E111" and d.line == at)]
        self.out.warnings = [w for w in self.out.warnings if w.line != at]
        named = hint.startswith(f"'## {miss.text}'")  # the hint already says what it is
        what = "" if named else f"'## {miss.text}' is not a field heading; "
        self.error("E113", f"missing required field '## {heading}': {what}{hint}", miss.start)

    # -- payload types -----------------------------------------------------
    def field_value(self, fld: _Field) -> None:
        type_ = fld.spec.type
        read = {F.TEXT: self.text_value, F.VALUES: self.enum_values, F.SQL: self.sql_value}.get(
            type_, self.list_values if type_ in F.LIST_TYPES else self.line_value
        )
        name = f"'## {fld.heading.text}'"
        self.out.values[fld.spec.name] = read(fld, name, fld.heading.end, fld.end)

    def text_value(self, fld: _Field, name: str, start: int, end: int) -> str:
        text = _trim(self.lines[start:end])
        if not text:
            self.error(
                "E113",
                f"field {name} is empty; write its text below the heading",
                fld.heading.start,
            )
        self.check_closed(name, start, end)
        return text

    def check_closed(self, name: str, start: int, end: int) -> None:
        """Refuse a fence or HTML block left open at the end of the file: it would swallow any
        field written after it, so the unit could not be reordered or written canonically."""
        if end < len(self.lines):
            return  # a later heading was reached, so every block before it closed
        # Only the last top-level block can be open; parse it alone, then a sentinel heading.
        blocks = [t.map[0] for t in self.top if t.map and start <= t.map[0] < end]
        if not blocks:
            return
        first = max(blocks)
        opener = next((t.type for t in self.top if t.map and t.map[0] == first), "")
        if opener in ("bullet_list_open", "ordered_list_open"):
            # Each new item closes the one before, so only the last item can be left open:
            # parsing a 50,000-item list a second time would double the cost of the file.
            first = max([line for line in self.items if first <= line < end] or [first])
        if not may_stay_open(self.lines[first:end]):
            return  # no fence or HTML block begins here: a blank line closes the rest
        n = end - first
        text = "\n".join(self.lines[first:end]) + "\n\n# end\n"
        tokens = parser_for(text).parse(text)
        top = [t for t in tokens if t.level == 0 and t.map and t.nesting >= 0]
        if any(t.type == "heading_open" and t.map == [n + 1, n + 2] for t in top):
            return  # the sentinel heading after the text is structural: nothing is left open
        for tok in top:
            if tok.map and tok.map[0] <= n + 1 < tok.map[1]:
                what = {"fence": "code fence", "html_block": "HTML block"}.get(tok.type, "block")
                self.error(
                    "E114",
                    f"{name}: the {what} opened here is never closed; close it "
                    "(it would swallow any field written after it)",
                    first + tok.map[0],
                )
                return

    def decode(self, raw: str, line: int, name: str, kind: str = F.TEXT) -> str | None:
        ref = REFERENCE_RE.get(kind)
        if ref is not None and ref.fullmatch(raw):
            # '"My Schema"."t"' is a reference as written: it is never a valid JSON string,
            # since the '"' after each '.' would need a backslash.
            return raw
        if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
            try:
                value: str = json.loads(raw)
                # '\\ud800' decodes to a lone surrogate, which no UTF-8 file or hash can hold.
                value.encode("utf-8")
                return value
            except json.JSONDecodeError as exc:
                why = (
                    f"is not a valid JSON string ({exc.msg}); "
                    'escape quotes as \\" and backslashes as \\\\'
                )
            except UnicodeEncodeError:
                why = (
                    "escapes a lone surrogate (\\ud800-\\udfff); "
                    "write the character itself or a complete surrogate pair"
                )
            self.error("E114", f"{name}: {raw[:40]!r} {why}", line)
            return None
        return raw

    def list_values(self, fld: _Field, name: str, start: int, end: int) -> tuple[str, ...]:
        values: list[str] = []
        seen: set[str] = set()  # beside the list: a 20,000-item list stays linear
        for i in range(start, end):
            line = self.lines[i]
            if _is_blank(line):
                continue
            self.bullets[fld.spec.name] = self.bullets.get(fld.spec.name, 0) + 1
            if not line.startswith("- ") or not line[2:].strip():
                self.error(
                    "E114",
                    f"{name} takes only '- value' bullets, one per line "
                    f"(no nesting, no other text); got {line.strip()[:60]!r}",
                    i,
                )
                continue
            value = self.decode(line[2:].strip(), i, name, fld.spec.type)
            if value is None:
                continue
            if fld.spec.type == F.TABLES and not TABLE_RE.fullmatch(value):
                self.error("E114", f"{name}: {value!r} is not a table reference 'schema.table'", i)
            elif fld.spec.type == F.COLUMNS and not COLUMN_RE.fullmatch(value):
                self.error(
                    "E114", f"{name}: {value!r} is not a column reference 'schema.table.column'", i
                )
            elif value in seen:
                self.error("E114", f"{name} lists {value!r} twice", i)
            else:
                seen.add(value)
                values.append(value)
        return tuple(values)

    def line_value(self, fld: _Field, name: str, start: int, end: int) -> str:
        content = [i for i in range(start, end) if not _is_blank(self.lines[i])]
        if not content:
            self.error(
                "E113",
                f"field {name} is empty; write its value below the heading",
                fld.heading.start,
            )
            return ""
        if len(content) > 1:
            self.error(
                "E114",
                f"field {name} takes one line; found {len(content)} lines "
                "(write a multi-line value as a JSON string)",
                content[1],
            )
        i = content[0]
        decoded = self.decode(self.lines[i].strip(), i, name, fld.spec.type)
        if decoded is None:
            return ""
        value = decoded
        if fld.spec.type == F.URL:
            if not _is_http_url(value):
                self.error("E116", f"{name}: {value[:80]!r} is not an absolute http(s) URL", i)
        elif fld.spec.type == F.COLUMN and not COLUMN_RE.fullmatch(value):
            self.error(
                "E114", f"{name}: {value!r} is not a column reference 'schema.table.column'", i
            )
        return value

    def enum_values(
        self, fld: _Field, name: str, start: int, end: int
    ) -> tuple[tuple[str, str], ...]:
        heads = [h for h in self.headings if h.level == 3 and start <= h.start < end]
        first = heads[0].start if heads else end
        stray = self.first_content(start, first)
        if stray is not None:
            self.error(
                "E114",
                f"{name}: text before the first '### \"value\"' heading; "
                "each stored value starts with '### \"value\"'",
                stray,
            )
        if not heads:
            if stray is None:
                self.error(
                    "E114",
                    f"{name} needs at least one '### \"stored value\"' heading",
                    fld.heading.start,
                )
            return ()
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for n, h in enumerate(heads):
            stop = heads[n + 1].start if n + 1 < len(heads) else end
            raw = h.text
            if not (len(raw) >= 2 and raw.startswith('"') and raw.endswith('"')):
                self.error("E114", f"{name}: {_json_value_hint(raw)}", h.start)
                continue
            value = self.decode(raw, h.start, name)
            if value is None:
                continue
            if value in seen:
                self.error("E114", f"{name}: stored value {raw} appears twice", h.start)
                continue
            seen.add(value)
            self.check_closed(f"{name} {raw}", h.end, stop)
            out.append((value, _trim(self.lines[h.end : stop])))
        return tuple(out)

    def sql_value(self, fld: _Field, name: str, start: int, end: int) -> str:
        blocks = [t for t in self.top if t.map and start <= t.map[0] < end]
        fences = [t for t in blocks if t.type in ("fence", "code_block")]
        sql_fences = [t for t in fences if t.type == "fence" and t.info.strip() == "sql"]
        if len(fences) != 1 or len(sql_fences) != 1:
            what = (
                "a block without info 'sql'" if len(fences) == 1 else f"{len(fences)} code blocks"
            )
            what = what if fences else "no fenced block"
            self.error(
                "E114",
                f"{name} takes exactly one fenced block opened with '```sql'; found {what}",
                fences[0].map[0] if fences and fences[0].map else fld.heading.start,
            )
            return ""
        fence = sql_fences[0]
        assert fence.map is not None
        stray = self.first_content(start, fence.map[0]) or self.first_content(fence.map[1], end)
        if stray is not None:
            self.error(
                "E114",
                f"{name}: text outside the ```sql fence; the field holds only "
                "the fenced expression",
                stray,
            )
        last = self.lines[fence.map[1] - 1].strip() if fence.map[1] - 1 > fence.map[0] else ""
        if not (last.startswith(fence.markup) and not last.strip(fence.markup[0])):
            self.error("E114", f"{name}: the ```sql fence is not closed", fence.map[0])
        content = fence.content.split("\n")
        lead = next((i for i, line in enumerate(content) if not _is_blank(line)), 0)
        sql = _trim(content)
        if not sql:
            self.error(
                "E115", f"{name}: the ```sql fence is empty; write one expression", fence.map[0]
            )
            return sql
        problem = check_expression(sql)
        if problem:
            reason, line, column = problem
            # An indented fence strips indentation from its content: columns would be off.
            indented = self.lines[fence.map[0]].startswith(" ")
            self.error(
                "E115",
                f"{name}: the SQL {reason}",
                fence.map[0] + 1 + lead + line,
                column if column is not None and not indented else 1,
            )
        return sql


def _listed(headings: Iterable[str]) -> str:
    return ", ".join(f"'## {h}'" for h in headings)


def _json_value_hint(raw: str) -> str:
    """How to write an enum heading as a JSON string; SQL quotes ('01') are taken for
    quoting, not for part of the value, since the column holds 01."""
    if len(raw) >= 2 and raw.startswith("'") and raw.endswith("'"):
        value = raw[1:-1].replace("''", "'")
        return (
            f"write the stored value as a JSON string: '### {json.dumps(value, ensure_ascii=False)}' "
            "(double quotes, not SQL single quotes, which would be stored with the value)"
        )
    return f"write the stored value as a JSON string: '### {json.dumps(raw, ensure_ascii=False)}'"


def _is_http_url(value: str) -> bool:
    if any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def parse_body(body: str, line_offset: int, kind: str | None, language: str) -> BodyResult:
    """Read title and field values; ``line_offset`` is the file line of body line 1, minus 1."""
    return _BodyParser(body, line_offset, kind, language).run()
