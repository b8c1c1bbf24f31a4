"""The SQL of example units in PostgreSQL's dialect (DDL and live PostgreSQL catalogs).

Each fenced ``sql`` block is parsed with pglast and must be one read-only query
(else E184).  Every relation it names is resolved through its CTEs and the
catalog (E180), and every column reference through the query's scopes: FROM items
by alias or name, joins, ``USING`` lists, sub-selects (their output columns),
correlated sub-queries (the outer scopes), and the output names that ORDER BY and
GROUP BY may use (E181 unknown, E182 ambiguous, E180 a qualifier no FROM item
has).  A FROM item whose columns cannot be known (a set-returning function, a
relation that did not resolve) accepts any column, so one mistake is one finding.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evidence_tool.catalog.fences import SqlBlock
from evidence_tool.catalog.model import Catalog, Relation, closest, did_you_mean, quote_ident
from evidence_tool.catalog.pgtree import Node, under
from evidence_tool.catalog.statements import output_name
from evidence_tool.errors import Diagnostic
from evidence_tool.jsonvalue import JsonValue

REFUSED = "E184"
# Called with each relation (and column) a name resolved to, and where it is written.
Used = Callable[[Relation, str | None, tuple[int | None, int | None]], None]
# Built-in functions that change something even inside a query: known without asking
# the server.  Against a live PostgreSQL, every volatile function outside pg_catalog
# is refused too (workspace_check asks pg_proc once for all of them).
SIDE_EFFECTS = frozenset(
    {
        "nextval",
        "setval",
        "pg_notify",
        "pg_advisory_lock",
        "pg_advisory_lock_shared",
        "pg_advisory_xact_lock",
        "pg_advisory_xact_lock_shared",
        "pg_try_advisory_lock",
        "pg_try_advisory_lock_shared",
        "pg_try_advisory_xact_lock",
        "pg_try_advisory_xact_lock_shared",
        "pg_advisory_unlock",
        "pg_advisory_unlock_all",
        "pg_advisory_unlock_shared",
        "set_config",
        "pg_cancel_backend",
        "pg_terminate_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "lo_import",
        "lo_export",
        "lo_unlink",
        "lo_create",
        "lo_creat",
        "lo_put",
        "lo_from_bytea",
        "dblink_exec",
        "pg_create_restore_point",
        "pg_switch_wal",
    }
)
_WRITES = ("InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt")
# Blanks and line comments; block comments nest in PostgreSQL (skip_blanks counts them).
_BLANKS = re.compile(r"(?:\s+|--[^\n]*(?:\n|\Z))*")
_COMMENT_EDGE = re.compile(r"/\*|\*/")


@dataclass
class Source:
    """One FROM item as the query sees it."""

    name: str  # the alias, else the relation's name
    columns: list[str] | None  # None: not knowable, any column is accepted
    relation: Relation | None = None  # the catalog relation it reads, if one
    aliased: bool = False
    schema: str | None = None  # for an unaliased catalog relation: schema.table.col works


@dataclass
class Scope:
    outer: Scope | None
    ctes: dict[str, list[str] | None]
    sources: list[Source] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  # ORDER BY / GROUP BY may name them


@dataclass
class ExampleSql:
    """What the check of one block found: findings, names resolved, the functions called."""

    findings: list[Diagnostic] = field(default_factory=list)
    names: int = 0
    functions: list[tuple[str, int]] = field(default_factory=list)  # (name, offset) for pg_proc
    statement: str | None = None  # the query, when it is one read-only query


class Resolver:
    """Resolves one block's names against the catalog; ``used`` reports each hit."""

    def __init__(
        self, catalog: Catalog, path: str, uid: str, block: SqlBlock, used: Used | None = None
    ) -> None:
        self.catalog = catalog
        self.path = path
        self.uid = uid
        self.used = used
        self.block = block
        self.sql = block.sql
        self._encoded: bytes | None = None
        self.out = ExampleSql()
        # Per column name, the FROM items a USING join merged on it: ``k`` is then one
        # column of the join, not an ambiguous one.
        self.merged: dict[str, set[int]] = {}
        # Why the query is not read-only, found on the way (FOR UPDATE, a writing WITH).
        self.refusal: tuple[str, int] | None = None

    # -- names: PostgreSQL compares them exactly, SQLite ignoring case ----------------
    def has(self, names: list[str] | None, name: str) -> bool:
        if names is None:
            return False
        if not self.catalog.fold_case:
            return name in names
        low = name.lower()
        return any(n.lower() == low for n in names)

    def find(self, name: str, ctes: dict[str, list[str] | None]) -> str | None:
        if name in ctes:
            return name
        return next((k for k in ctes if self.catalog.same(k, name)), None)

    # -- positions ---------------------------------------------------------------
    def offset(self, location: int) -> int:
        """pglast's byte offset -> character offset in the block."""
        if location < 0:
            return 0
        if self.sql.isascii():
            return location
        if self._encoded is None:
            self._encoded = self.sql.encode("utf-8")
        return len(self._encoded[:location].decode("utf-8", "ignore"))

    def finding(self, code: str, message: str, offset: int) -> None:
        line, column = self.block.position(offset)
        self.out.findings.append(
            Diagnostic(code, f"the example's SQL {message}", self.path, line, column, self.uid)
        )

    # -- the statement -------------------------------------------------------------
    def check(self) -> ExampleSql:
        from pglast import parser

        try:
            tree = json.loads(parser.parse_sql_json(self.sql))
        except parser.ParseError as exc:
            at = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else None
            where = len(self.sql.rstrip()) if at is None else max(at - 1, 0)
            self.finding(REFUSED, f"does not parse in PostgreSQL's dialect: {exc.args[0]}", where)
            return self.out
        stmts = _list(tree, "stmts")
        why = not_one_statement(len(stmts))
        if why is not None:  # at the second statement, if there is one
            at = self._start(self.offset(_int(stmts[1], "stmt_location"))) if stmts else 0
            self.finding(REFUSED, why, at)
            return self.out
        stmt = _dict(stmts[0], "stmt")
        start = self._start(self.offset(_int(stmts[0], "stmt_location")))
        if "SelectStmt" not in stmt:
            kind = next(iter(stmt), "?")
            self.finding(REFUSED, f"is {_statement_words(kind)}, not a read-only query", start)
            return self.out
        select = stmt["SelectStmt"]
        if select.get("intoClause"):
            why = "is SELECT ... INTO, which creates a table; an example is a read-only query"
            self.finding(REFUSED, why, start)
            return self.out
        self.query(select, None, {})
        if self.refusal is not None:
            why, location = self.refusal
            self.out.findings = [d for d in self.out.findings if d.code == REFUSED]
            self.finding(REFUSED, why, self._start(self.offset(location)) if location else start)
            return self.out
        for name, at in self.out.functions:
            schema, _, bare = name.rpartition(".")
            if bare in SIDE_EFFECTS and schema in ("", "pg_catalog"):
                self.finding(
                    REFUSED,
                    f"calls {name}(), which changes the database or the session; an example "
                    "is a read-only query",
                    at,
                )
        if not self.out.findings:  # names resolved: the server may prepare it
            self.out.statement = self.sql
        return self.out

    def _start(self, at: int) -> int:
        """The first character of what starts at ``at`` (past blanks and comments)."""
        return skip_blanks(self.sql, at)

    # -- queries ---------------------------------------------------------------------
    def query(
        self, node: Json, outer: Scope | None, ctes: dict[str, list[str] | None]
    ) -> list[str] | None:
        """Resolve one query's names; its output column names (None: not knowable)."""
        select: Json = node.get("SelectStmt", node) if isinstance(node, dict) else {}
        if select.get("lockingClause") and self.refusal is None:
            self.refusal = (
                "locks rows (FOR UPDATE / FOR SHARE); an example is a read-only query",
                0,
            )
        ctes = self._with(select, outer, ctes)
        if select.get("op", "SETOP_NONE") != "SETOP_NONE":
            left = self.query(_dict(select, "larg"), outer, ctes)
            self.query(_dict(select, "rarg"), outer, ctes)
            scope = Scope(outer, ctes, [], left or [])
            self.expr(_list(select, "sortClause"), scope, outputs=True)
            return left
        scope = Scope(outer, ctes)
        if "valuesLists" in select:
            lists = _list(select, "valuesLists")
            self.expr(lists, scope)
            width = len(_list(_dict(lists[0], "List"), "items")) if lists else 0
            return [f"column{i + 1}" for i in range(width)]
        for item in _list(select, "fromClause"):
            self.from_item(item, scope, scope)
        outputs: list[str] | None = []
        for target in _list(select, "targetList"):
            res = _dict(target, "ResTarget")
            val = _dict(res, "val")
            ref = val.get("ColumnRef")
            if ref is not None:
                fields = _list(ref, "fields")
                if fields and "A_Star" in fields[-1]:
                    cols = self.star(fields, _int(ref, "location"), scope)
                    outputs = None if cols is None or outputs is None else outputs + cols
                    continue
            self.expr(val, scope)
            if outputs is not None:
                outputs.append(res.get("name") or output_name(Node(val)))
        scope.outputs = outputs or []
        for key in ("whereClause", "havingClause", "limitCount", "limitOffset", "windowClause"):
            if key in select:
                self.expr(select[key], scope)
        for key in ("groupClause", "sortClause", "distinctClause"):
            if key in select:
                self.expr(select[key], scope, outputs=True)
        return outputs

    def _with(
        self, select: Json, outer: Scope | None, ctes: dict[str, list[str] | None]
    ) -> dict[str, list[str] | None]:
        with_clause = select.get("withClause")
        if not with_clause:
            return ctes
        ctes = dict(ctes)
        recursive = bool(with_clause.get("recursive"))
        for cte in _list(with_clause, "ctes"):
            c = _dict(cte, "CommonTableExpr")
            name = c.get("ctename", "")
            aliases = [_sval(a) for a in _list(c, "aliascolnames")]
            if recursive:  # the CTE may read itself: its names are the aliases, or unknown
                ctes[name] = aliases or None
            inner = _dict(c, "ctequery")
            writes = next((k for k in _WRITES if k in inner), None)
            if writes is not None:
                if self.refusal is None:
                    self.refusal = (
                        f"holds {_statement_words(writes)} (a data-modifying WITH); an example "
                        "is a read-only query",
                        _int(c, "location"),
                    )
                ctes[name] = None
                continue
            ctes[name] = _renamed(self.query(inner, outer, ctes), aliases)
        return ctes

    def from_item(self, item: Json, scope: Scope, into: Scope) -> list[Source]:
        """Add one FROM item's sources to ``into.sources``; the ones it added."""
        added: list[Source] = []
        if "RangeVar" in item:
            added.append(self.range_var(item["RangeVar"], scope))
        elif "JoinExpr" in item:
            j = item["JoinExpr"]
            left = self.from_item(_dict(j, "larg"), scope, into)
            right = self.from_item(_dict(j, "rarg"), scope, into)
            for name in (_sval(n) for n in _list(j, "usingClause")):
                self.using(name, left, right, j)
            if "quals" in j:
                self.expr(j["quals"], scope)
            join_alias = _dict(j, "alias").get("aliasname")
            if join_alias:
                added.append(Source(join_alias, None, aliased=True))
            into.sources.extend(added)
            return [*left, *right, *added]
        elif "RangeSubselect" in item:
            sub = item["RangeSubselect"]
            outer = scope if sub.get("lateral") else scope.outer
            cols = self.query(_dict(sub, "subquery"), outer, scope.ctes)
            alias = _dict(sub, "alias")
            names = [_sval(a) for a in _list(alias, "colnames")]
            added.append(Source(alias.get("aliasname", "?"), _renamed(cols, names), aliased=True))
        else:  # a function in FROM, XMLTABLE, TABLESAMPLE ...: its arguments, unknown columns
            inner = next(iter(item.values()), None) if item else None
            node: Json = inner if isinstance(inner, dict) else {}
            alias = _dict(node, "alias")
            names = [_sval(a) for a in _list(alias, "colnames")]
            relation = _dict(node, "relation")
            if "RangeVar" in relation:  # TABLESAMPLE wraps a relation
                added.append(self.range_var(relation["RangeVar"], scope))
            self.expr([v for k, v in node.items() if k not in ("alias", "relation")], scope)
            if alias.get("aliasname"):
                added.append(Source(alias["aliasname"], names or None, aliased=True))
        into.sources.extend(added)
        return added

    def range_var(self, rv: Json, scope: Scope) -> Source:
        schema, name = rv.get("schemaname"), rv.get("relname", "")
        alias = _dict(rv, "alias")
        shown = alias.get("aliasname") or name
        colnames = [_sval(a) for a in _list(alias, "colnames")]
        self.out.names += 1
        cte = self.find(name, scope.ctes) if schema is None and scope.ctes else None
        if cte is not None:
            return Source(shown, _renamed(scope.ctes[cte], colnames), aliased=True)
        catalog = self.catalog
        rel = catalog.relation(schema, name)
        if rel is None:
            written = f"{quote_ident(schema)}.{quote_ident(name)}" if schema else quote_ident(name)
            near = catalog.near_relations(schema, name)
            self.finding(
                "E180",
                f"names {written}, which is not a table or view of the catalog"
                + did_you_mean(near),
                self.offset(_int(rv, "location")),
            )
            return Source(shown, None, aliased=True)
        self._use(rel, None, _int(rv, "location"))
        cols = _renamed([c.name for c in rel.columns], colnames)
        aliased = alias.get("aliasname") is not None
        return Source(shown, cols, rel, aliased, None if aliased else rel.schema)

    def using(self, name: str, left: list[Source], right: list[Source], join: Json) -> None:
        self.out.names += 1
        for side, sources in (("left", left), ("right", right)):
            having = [s for s in sources if self.has(s.columns, name)]
            if len(having) > 1 and not self._merged(having, name):
                self.finding(
                    "E182",
                    f"joins USING ({quote_ident(name)}), but {', '.join(s.name for s in having)} "
                    f"on its {side} side all have a column {quote_ident(name)}; join with ON",
                    self._using_offset(name, join),
                )
                return
            if any(s.columns is None for s in sources):
                continue
            if not having:
                near = sorted({n for s in sources for n in closest(name, s.columns or [])})
                shown = ", ".join(s.name for s in sources)
                self.finding(
                    "E181",
                    f"joins USING ({quote_ident(name)}), but the {side} side ({shown}) has no "
                    f"column {quote_ident(name)}" + did_you_mean(near[:3]),
                    self._using_offset(name, join),
                )
                return
        for s in [*left, *right]:
            if self.has(s.columns, name):
                self.merged.setdefault(name, set()).add(id(s))
                if s.relation is not None and self.used is not None:
                    self.used(s.relation, name, self.block.position(self._using_offset(name, join)))

    def _merged(self, sources: list[Source], name: str) -> bool:
        joined = self.merged.get(name, set())
        return all(id(s) in joined for s in sources)

    def _using_offset(self, name: str, join: Json) -> int:
        """Where ``name`` is written in the USING list (pglast keeps no position for it):
        after the last relation the join names."""
        after = max(
            (self.offset(_int(rv, "location")) for rv in under(join, "RangeVar")), default=0
        )
        m = re.compile(r"\busing\s*\(", re.I).search(self.sql, after)
        if m is None:
            return after
        pattern = re.compile(
            r'"' + re.escape(name.replace('"', '""')) + r'"|\b' + re.escape(name) + r"\b", re.I
        )
        found = pattern.search(self.sql, m.end())
        return found.start() if found else m.start()

    # -- expressions ------------------------------------------------------------------
    def expr(self, node: JsonValue, scope: Scope, *, outputs: bool = False) -> None:
        stack: list[Any] = [node]
        while stack:
            raw = stack.pop()
            if isinstance(raw, list):
                stack.extend(reversed(raw))
                continue
            if not isinstance(raw, dict):
                continue
            ref = raw.get("ColumnRef")
            if ref is not None:
                self.column_ref(ref, scope, outputs)
                continue
            link = raw.get("SubLink")
            if link is not None:
                if "testexpr" in link:
                    self.expr(link["testexpr"], scope)
                self.query(_dict(link, "subselect"), scope, scope.ctes)
                continue
            if "SelectStmt" in raw:
                self.query(raw, scope, scope.ctes)
                continue
            call = raw.get("FuncCall")
            if call is not None:
                names = [_sval(n) for n in _list(call, "funcname")]
                if names:
                    at = self.offset(_int(call, "location"))
                    self.out.functions.append((".".join(names), at))
            stack.extend(v for v in raw.values() if isinstance(v, dict | list))

    def column_ref(self, ref: Json, scope: Scope, outputs: bool) -> None:
        fields = _list(ref, "fields")
        location = _int(ref, "location")
        if fields and "A_Star" in fields[-1]:
            self.star(fields, location, scope)
            return
        names = [_sval(f) for f in fields]
        if not names or not all(names) or len(names) > 3:
            return
        self.out.names += 1
        if len(names) == 1:
            self.bare(names[0], scope, outputs, location)
        else:
            source = self.qualifier(names[:-1], scope, location)
            if source is not None:
                self.in_source(source, names[-1], names, location)

    def bare(self, column: str, scope: Scope, outputs: bool, location: int) -> None:
        level: Scope | None = scope
        while level is not None:
            having = [s for s in level.sources if self.has(s.columns, column)]
            if len(having) > 1 and self._merged(having, column):
                having = having[:1]  # the one column a USING join made of them
            if len(having) == 1:
                self._hit(having[0], column, location)
                return
            if len(having) > 1:
                shown = ", ".join(s.name for s in having)
                self.finding(
                    "E182",
                    f"names {quote_ident(column)}, which is ambiguous: {shown} all have a "
                    f"column {quote_ident(column)}; qualify it with one of them",
                    self.offset(location),
                )
                return
            if outputs and level is scope and self.has(level.outputs, column):
                return
            if any(s.columns is None for s in level.sources):
                return  # a FROM item whose columns are not known may have it
            if any(self.catalog.same(s.name, column) for s in level.sources):
                return  # a whole-row reference: count(a)
            level = level.outer
        written = quote_ident(column)
        sources = [s for lvl in _levels(scope) for s in lvl.sources]
        near = sorted({n for s in sources for n in closest(column, s.columns or [])})
        at = self.offset(location)
        if not sources:
            self.finding("E181", f"names the column {written}, but its query reads no table", at)
            return
        shown = ", ".join(s.name for s in sources)
        self.finding(
            "E181",
            f"names the column {written}, which none of {shown} has" + did_you_mean(near[:3]),
            at,
        )

    def qualifier(self, names: list[str], scope: Scope, location: int) -> Source | None:
        """The FROM item ``a`` (or ``schema.table``) of ``a.column``, else E180."""
        table = names[-1]
        schema = names[0] if len(names) == 2 else None
        for level in _levels(scope):
            for s in level.sources:
                if self.catalog.same(s.name, table) and (
                    schema is None or self.catalog.same(s.schema, schema)
                ):
                    return s
        written = ".".join(quote_ident(n) for n in names)
        aliases = [s for lvl in _levels(scope) for s in lvl.sources]
        hidden = [
            s
            for s in aliases
            if s.aliased and s.relation is not None and self.catalog.same(s.relation.name, table)
        ]
        at = self.offset(location)
        if hidden:
            self.finding(
                "E180",
                f"qualifies a column with {written}, but the query names that table by its "
                f"alias; did you mean {hidden[0].name}?",
                at,
            )
            return None
        near = closest(table, [s.name for s in aliases])
        self.finding(
            "E180",
            f"qualifies a column with {written}, which is no table or alias of its FROM clause"
            + did_you_mean(near),
            at,
        )
        return None

    def in_source(self, source: Source, column: str, names: list[str], location: int) -> None:
        if source.columns is None:
            return
        if self.has(source.columns, column):
            self._hit(source, column, location)
            return
        if source.relation is not None and self.catalog.same(source.name, column):
            return
        what = source.relation.qualified if source.relation is not None else source.name
        written = ".".join(quote_ident(n) for n in names)
        self.finding(
            "E181",
            f"names {written}, but {what} has no column {quote_ident(column)}"
            + did_you_mean(closest(column, source.columns)),
            self.offset(location),
        )

    def star(self, fields: list[Any], location: int, scope: Scope) -> list[str] | None:
        qualifier = [_sval(f) for f in fields[:-1]]
        if not qualifier:
            cols: list[str] = []
            for s in scope.sources:
                if s.columns is None:
                    return None
                cols.extend(s.columns)
            return cols
        self.out.names += 1
        source = self.qualifier(qualifier, scope, location)
        return None if source is None or source.columns is None else list(source.columns)

    def _hit(self, source: Source, column: str, location: int) -> None:
        if source.relation is not None:
            self._use(source.relation, column, location)

    def _use(self, rel: Relation, column: str | None, location: int) -> None:
        if self.used is not None:
            self.used(rel, column, self.block.position(self.offset(location)))


# The parse tree as pglast's JSON gives it: dicts, lists, strings, numbers.
Json = dict[str, Any]


def _dict(node: Any, key: str) -> Json:
    found = node.get(key) if isinstance(node, dict) else None
    return found if isinstance(found, dict) else {}


def _list(node: Any, key: str) -> list[Any]:
    found = node.get(key) if isinstance(node, dict) else None
    return found if isinstance(found, list) else []


def _int(node: Any, key: str) -> int:
    found = node.get(key) if isinstance(node, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def _sval(node: Any) -> str:
    """A ``{"String": {"sval": ...}}`` node's text (names, aliases, fields)."""
    if isinstance(node, dict):
        inner = node.get("String")
        if isinstance(inner, dict):
            value = inner.get("sval")
            return value if isinstance(value, str) else ""
    return ""


def _renamed(cols: list[str] | None, names: list[str]) -> list[str] | None:
    """Columns as an alias list renames them: the first ones named, the rest as they were."""
    return names + cols[len(names) :] if cols is not None and names else cols


def _levels(scope: Scope) -> Iterator[Scope]:
    level: Scope | None = scope
    while level is not None:
        yield level
        level = level.outer


def not_one_statement(count: int) -> str | None:
    """Why a block of ``count`` statements is not an example (E184), or None for one."""
    if count == 1:
        return None
    if not count:
        return "holds no statement; write one query"
    return (
        f"holds {count} statements; an example is one read-only query "
        "(split it into one example per query)"
    )


def _statement_words(kind: str) -> str:
    """``InsertStmt`` -> 'an INSERT statement'."""
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", kind.removesuffix("Stmt")).upper()
    words = "SET" if words == "VARIABLE SET" else words
    article = "an" if words[:1] in "AEIOU" else "a"
    return f"{article} {words} statement"


def skip_blanks(sql: str, at: int) -> int:
    """Where the next token after ``at`` starts, past blanks and comments read as PostgreSQL
    reads them: block comments nest (``/* a /* b */ c */`` is one), ``--`` inside one
    starts nothing, and one left open runs to the end (pglast refused such SQL first)."""
    at = min(at, len(sql))
    while True:
        found = _BLANKS.match(sql, at)
        at = found.end() if found else at
        if not sql.startswith("/*", at):
            return at
        depth, at = 1, at + 2
        while depth:
            edge = _COMMENT_EDGE.search(sql, at)
            if edge is None:
                return len(sql)
            depth += 1 if edge.group() == "/*" else -1
            at = edge.end()
