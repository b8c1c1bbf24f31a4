"""The SQL of example units against an SQLite warehouse: SQLite's own engine answers.

Each block is prepared as ``EXPLAIN <sql>`` on a read-only connection (the files
opened with ``mode=ro``, attached under their schema names) with an authorizer
that refuses anything but reading: nothing is ever executed, and SQLite's dialect
(backquoted and bracketed identifiers, its functions) is read by SQLite itself.
SQLite names the first thing it cannot resolve ("no such column: T1.amout"); the
name is found again in the SQL's tokens for its line and column, and the catalog
says the nearest existing name.

A block SQLite cannot parse that PostgreSQL's parser reads as one query is checked
for names in PostgreSQL's dialect (example_sql) with warning W184: the warehouse
could not run it as written.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evidence_tool.catalog.example_sql import REFUSED, Resolver, not_one_statement
from evidence_tool.catalog.fences import SqlBlock
from evidence_tool.catalog.model import Catalog, closest, did_you_mean, quote_ident
from evidence_tool.catalog.sqlite_reader import read_only_uri, split_mapping, time_limit
from evidence_tool.errors import AvailabilityError, Diagnostic, EvidenceWarning

if TYPE_CHECKING:
    from evidence_tool.catalog.results import Outcome

# The authorizer's answers (sqlite3.SQLITE_OK and SQLITE_DENY), and what a query may do.
_OK, _DENY = 0, 1
_READS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
_ACTIONS = {
    getattr(sqlite3, name): words
    for name, words in (
        ("SQLITE_INSERT", "an INSERT statement"),
        ("SQLITE_UPDATE", "an UPDATE statement"),
        ("SQLITE_DELETE", "a DELETE statement"),
        ("SQLITE_CREATE_TABLE", "a CREATE TABLE statement"),
        ("SQLITE_CREATE_VIEW", "a CREATE VIEW statement"),
        ("SQLITE_CREATE_INDEX", "a CREATE INDEX statement"),
        ("SQLITE_DROP_TABLE", "a DROP TABLE statement"),
        ("SQLITE_DROP_VIEW", "a DROP VIEW statement"),
        ("SQLITE_ALTER_TABLE", "an ALTER TABLE statement"),
        ("SQLITE_ATTACH", "an ATTACH statement"),
        ("SQLITE_DETACH", "a DETACH statement"),
        ("SQLITE_PRAGMA", "a PRAGMA"),
        ("SQLITE_TRANSACTION", "a transaction statement"),
        ("SQLITE_SAVEPOINT", "a SAVEPOINT statement"),
        ("SQLITE_ANALYZE", "an ANALYZE statement"),
        ("SQLITE_REINDEX", "a REINDEX statement"),
    )
    if hasattr(sqlite3, name)
}
_TOKEN = re.compile(
    r"""(?P<space>\s+)
      |(?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
      |(?P<string>'(?:[^']|'')*'?)
      |(?P<quoted>"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?)
      |(?P<word>[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_$\x80-\U0010ffff]*)
      |(?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
      |(?P<semi>;)
      |(?P<other>.)""",
    re.X | re.S,
)
_KEYWORDS = frozenset(
    [
        "select",
        "from",
        "where",
        "join",
        "on",
        "using",
        "as",
        "group",
        "by",
        "order",
        "having",
        "limit",
        "offset",
        "union",
        "all",
        "except",
        "intersect",
        "inner",
        "left",
        "right",
        "full",
        "outer",
        "cross",
        "natural",
        "with",
        "and",
        "or",
        "not",
        "in",
        "is",
        "null",
        "like",
        "between",
        "case",
        "when",
        "then",
        "else",
        "end",
        "distinct",
        "exists",
        "values",
        "window",
        "over",
        "partition",
        "asc",
        "desc",
        "collate",
        "cast",
        "glob",
        "regexp",
        "match",
        "escape",
    ]
)
# SQLite's words for SQL it cannot read at all (besides "... syntax error").
_UNPARSED = ("incomplete input", "unrecognized token")
_MESSAGES = (
    ("E180", re.compile(r"^no such table: (.+)$")),
    ("E181", re.compile(r"^no such column: (.+)$")),
    ("E182", re.compile(r"^ambiguous column name: (.+)$")),
    ("USING", re.compile(r"^cannot join using column (.+) - column not present in both tables$")),
)


# Reports one finding: (code, message after "the example's SQL", character offset).
_Finding = Callable[[str, str, int], None]


@dataclass(frozen=True)
class Token:
    kind: str  # word, quoted, string, number, semi, other
    text: str
    name: str  # a word or quoted identifier, unquoted and folded to lower case
    start: int


def tokens(sql: str) -> list[Token]:
    out: list[Token] = []
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup or "other"
        if kind in ("space", "comment"):
            continue
        text = m.group()
        name = _unquote(text).lower() if kind in ("word", "quoted") else ""
        out.append(Token(kind, text, name, m.start()))
    return out


def _unquote(text: str) -> str:
    if text[:1] == "[":
        return text[1:-1]
    if text[:1] in ('"', "`"):
        q = text[0]
        return text[1:-1].replace(q + q, q)
    return text


@dataclass
class SqliteExamples:
    """The SQLite side of the example check: findings, warnings, names resolved."""

    findings: list[Diagnostic] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)
    names: int = 0


class SqliteExampleChecker:
    """One read-only connection for every block of a check; close() at the end
    (``contextlib.closing``)."""

    def __init__(self, paths: list[str], catalog: Catalog) -> None:
        self.catalog = catalog
        self.con = _open(paths)
        self._denied: list[int] = []
        self._reads = 0
        self.con.set_authorizer(self._authorize)

    def close(self) -> None:
        self.con.close()

    def _authorize(self, action: int, *_names: str | None) -> int:
        """SQLite's authorizer (its four names, the objects and database, are not needed)."""
        if action in _READS:
            if action == sqlite3.SQLITE_READ:
                self._reads += 1
            return _OK
        self._denied.append(action)
        return _DENY

    def check(self, block: SqlBlock, path: str, uid: str, out: SqliteExamples) -> bool:
        """Check one block; True when SQLite prepared it as one read-only query."""
        sql = block.sql
        # Tokens are read only when needed: a semicolon that may end a first statement,
        # or a refusal to place.  Most examples have neither.
        toks = tokens(sql) if ";" in sql else []
        if toks:
            statements = _statements(toks)
        else:
            begin = _first(sql)
            statements = [[Token("word", "", "", begin)]] if begin < len(sql) else []

        def finding(code: str, message: str, offset: int) -> None:
            line, column = block.position(offset)
            text = f"the example's SQL {message}"
            out.findings.append(Diagnostic(code, text, path, line, column, uid))

        why = not_one_statement(len(statements))
        if why is not None:  # at the second statement, if there is one
            finding(REFUSED, why, statements[1][0].start if statements else 0)
            return False
        first = statements[0]
        self._denied.clear()
        self._reads = 0
        try:
            self.con.execute("EXPLAIN " + sql).close()
        except sqlite3.Error as exc:
            message = str(exc)
            toks = toks or tokens(sql)
            if self._denied:
                words = _ACTIONS.get(self._denied[0], "a statement that is not a query")
                finding(REFUSED, f"is {words}, not a read-only query", first[0].start)
                return False
            if "syntax error" in message or message.startswith(_UNPARSED):
                self._other_dialect(block, path, uid, out, message, toks, finding)
                return False
            self._named(message, toks, finding)
            return False
        finally:
            out.names += self._reads
        if self._denied:  # an authorizer refusal SQLite did not turn into an error
            finding(REFUSED, "is not a read-only query", first[0].start)
            return False
        return True

    def run(self, sql: str) -> Outcome:
        """``check --execute``: the query run on the read-only connection (the authorizer
        still allows reading only), stopped after 30 s; its bounded count and hash."""
        from evidence_tool.catalog import values
        from evidence_tool.catalog.results import ROW_LIMIT, Outcome, as_text, outcome

        with time_limit(self.con) as passed:
            try:
                cur = self.con.execute(sql)
                rows = [tuple(as_text(v) for v in row) for row in cur.fetchmany(ROW_LIMIT + 1)]
                cur.close()
            except sqlite3.Error as exc:
                if passed():
                    return Outcome(
                        None, None, f"it ran past its {values.SAMPLE_TIMEOUT_S:.0f} s limit"
                    )
                return Outcome(None, None, str(exc))
        return outcome(rows)

    def _other_dialect(
        self,
        block: SqlBlock,
        path: str,
        uid: str,
        out: SqliteExamples,
        message: str,
        toks: list[Token],
        finding: _Finding,
    ) -> None:
        """SQLite cannot parse it: PostgreSQL's dialect, or no SQL at all."""
        near = re.match(r'^(?:near|unrecognized token:) "(.*)"(?:: syntax error)?$', message, re.S)
        at = len(block.sql.rstrip())
        if near:
            word = near.group(1)
            at = next((t.start for t in toks if t.text == word), block.sql.find(word))
            at = at if at >= 0 else len(block.sql.rstrip())
        done = Resolver(self.catalog, path, uid, block).check()
        if any(d.code == REFUSED and "does not parse" in d.message for d in done.findings):
            finding(REFUSED, f"does not parse in SQLite's dialect: {message}", at)
            return
        line, column = block.position(at)
        why = (
            f"{uid}: SQLite cannot prepare the example's SQL ({message}); PostgreSQL's "
            "parser reads it, so its names were checked in PostgreSQL's dialect: write "
            "it in SQLite's for the warehouse to run it"
        )
        out.warnings.append(EvidenceWarning(why, path, line, code="W184", column=column))
        out.findings.extend(done.findings)
        out.names += done.names

    def _named(self, message: str, toks: list[Token], finding: _Finding) -> None:
        """SQLite's refusal of a name, at that name, with the catalog's nearest ones."""
        for code, pattern in _MESSAGES:
            m = pattern.match(message)
            if m is None:
                continue
            parts = [p.lower() for p in _split(m.group(1))]
            at = _find(toks, parts)
            if code == "E180":
                name = parts[-1]
                schema = parts[-2] if len(parts) > 1 else None
                near = self.catalog.near_relations(schema, name)
                finding(
                    code,
                    f"names {m.group(1)}, which is not a table or view of the catalog"
                    + did_you_mean(near),
                    at,
                )
            elif code == "USING":
                finding(
                    "E181",
                    f"joins USING ({m.group(1)}), but the two sides do not both have a column "
                    f"{m.group(1)}" + did_you_mean(self._near_column(parts[-1], toks)),
                    _find(toks, parts, after="using"),
                )
            elif code == "E182":
                finding(
                    code,
                    f"names the column {m.group(1)}, which is ambiguous: qualify it with its "
                    "table or alias",
                    at,
                )
            else:
                self._column(m.group(1), parts, toks, at, finding)
            return
        finding("E188", f"is refused by SQLite: {message}", toks[0].start if toks else 0)

    def _column(
        self, written: str, parts: list[str], toks: list[Token], at: int, finding: _Finding
    ) -> None:
        sources, hidden = _sources(toks, self.catalog)
        if len(parts) == 1:
            finding(
                "E181",
                f"names the column {written}, which none of its tables has"
                + did_you_mean(self._near_column(parts[0], toks)),
                at,
            )
            return
        qualifier = parts[-2]
        if qualifier not in sources:
            if qualifier in hidden:
                rel = self.catalog.relation(None, qualifier)
                table = rel.name.lower() if rel is not None else qualifier
                aliases = sorted(a for a, t in sources.items() if t == table)
                finding(
                    "E180",
                    f"qualifies a column with {qualifier}, but the query names that table by "
                    f"its alias" + did_you_mean(aliases),
                    at,
                )
            else:
                finding(
                    "E180",
                    f"qualifies a column with {qualifier}, which is no table or alias of its "
                    "FROM clause" + did_you_mean(closest(qualifier, sorted(sources))),
                    at,
                )
            return
        rel = self.catalog.relation(None, sources[qualifier] or "")
        near = rel.near_columns(parts[-1]) if rel is not None else []
        where = rel.qualified if rel is not None else qualifier
        finding(
            "E181",
            f"names {written}, but {where} has no column {quote_ident(parts[-1])}"
            + did_you_mean(near),
            at,
        )

    def _near_column(self, column: str, toks: list[Token]) -> list[str]:
        tables = {t for t in _sources(toks, self.catalog)[0].values() if t}
        names: set[str] = set()
        for table in tables:
            rel = self.catalog.relation(None, table)
            if rel is not None:
                names.update(rel.near_columns(column))
        return sorted(names)[:3]


def _first(sql: str) -> int:
    """Where the statement starts (past blanks and comments), without tokenizing.  As
    SQLite reads them: a block comment ends at the first ``*/`` (they do not nest) or at
    the end of the text."""
    m = re.match(r"(?:\s+|--[^\n]*|/\*.*?(?:\*/|\Z))*", sql, re.S)
    return m.end() if m else 0


def _statements(toks: list[Token]) -> list[list[Token]]:
    out: list[list[Token]] = [[]]
    for t in toks:
        if t.kind == "semi":
            out.append([])
        else:
            out[-1].append(t)
    return [s for s in out if s]


def _split(written: str) -> list[str]:
    """SQLite's ``T1.amout`` (or ``main.t``) -> its parts."""
    return [_unquote(p) for p in re.findall(r'"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|[^.]+', written)]


def _find(toks: list[Token], parts: list[str], after: str | None = None) -> int:
    """Offset of the first place ``a.b.c`` is written (after the keyword ``after``)."""
    start = 0
    if after is not None:
        start = next((i for i, t in enumerate(toks) if t.name == after and t.kind == "word"), 0)
    n = len(parts)
    for i in range(start, len(toks)):
        ok = all(
            i + 2 * k < len(toks)
            and toks[i + 2 * k].name == p
            and toks[i + 2 * k].kind in ("word", "quoted")
            and (k == 0 or toks[i + 2 * k - 1].text == ".")
            for k, p in enumerate(parts)
        )
        if ok and not (i > 0 and toks[i - 1].text == "."):
            return toks[i].start
    if n > 1:  # the qualifier may be implied: find the last part alone
        return _find(toks, parts[-1:], after)
    return toks[0].start if toks else 0


def _sources(toks: list[Token], catalog: Catalog) -> tuple[dict[str, str | None], set[str]]:
    """The names the query's FROM items go by (-> the catalog relation, or None for a CTE
    or a sub-select), and the relations it names only by an alias (SQLite then refuses
    the relation's own name as a qualifier)."""
    out: dict[str, str | None] = {}
    hidden: set[str] = set()
    in_from = [False]  # per parenthesis depth
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        word = t.name if t.kind == "word" else ""
        if t.text == "(":
            in_from.append(False)
        elif t.text == ")":
            if len(in_from) > 1:
                in_from.pop()
            if in_from[-1]:
                j = i + 1 + (i + 1 < n and toks[i + 1].name == "as")
                if j < n and _alias(toks[j]):
                    out[toks[j].name] = None  # a sub-select's alias
        elif word in ("from", "join") or (t.text == "," and in_from[-1]):
            in_from[-1] = True
            j = i + 1
            while j + 2 < n and toks[j + 1].text == "." and _alias(toks[j + 2]):
                j += 2  # schema.table: the table's name is its last part
            if j < n and _alias(toks[j]) and (j + 1 >= n or toks[j + 1].text != "("):
                name = toks[j].name
                rel = catalog.relation(None, name)
                table = rel.name.lower() if rel is not None else None
                k = j + 1 + (j + 1 < n and toks[j + 1].name == "as")
                if k < n and _alias(toks[k]):
                    out[toks[k].name] = table
                    hidden.add(name)
                    i = k
                else:
                    out[name] = table
                    i = j
        elif word in _CLAUSE_ENDS:
            in_from[-1] = False
        i += 1
    return out, hidden - set(out)


_CLAUSE_ENDS = frozenset(
    [
        "where",
        "group",
        "order",
        "having",
        "limit",
        "union",
        "except",
        "intersect",
        "on",
        "using",
        "select",
        "window",
    ]
)


def _alias(t: Token) -> bool:
    return t.kind == "quoted" or (t.kind == "word" and t.name not in _KEYWORDS)


def _open(paths: list[str]) -> sqlite3.Connection:
    """One connection: the ``main`` file (or an empty in-memory one) with every other file
    attached under its schema name, all read-only."""
    files = [split_mapping(p) for p in paths]
    main = next((p for s, p in files if s == "main"), None)
    try:
        con = sqlite3.connect(read_only_uri(main) if main else ":memory:", uri=True)
        for schema, p in files:
            if schema != "main":
                con.execute("ATTACH DATABASE ? AS " + quote_ident(schema), (read_only_uri(p),))
    except sqlite3.Error as exc:
        raise AvailabilityError(
            f"the SQLite databases cannot be opened to check the examples ({exc})", code="E186"
        ) from None
    return con
