"""Catalog from a live PostgreSQL (psycopg 3, imported on use): one connection, one
READ ONLY transaction with statement_timeout and lock_timeout, reads of pg_catalog
only, plus the two checks that need the server (formula types, stored values).

The DSN comes from the environment variable the settings name (THT_CATALOG_DSN by
default); it is never stored, and no message quotes more of it than host and
database: psycopg's own messages are scrubbed of the DSN and its password.

Round trips are bounded: the setup is one, the whole catalog (every relation with
every column) is one query, and formulas and value samples go in pipelines of up
to ``PIPELINE_STATEMENTS`` statements and ``PIPELINE_BYTES`` bytes, each behind the
same SAVEPOINT so that one refused formula leaves the transaction usable for the next.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any

from evidence_tool.catalog.model import Catalog, Column, Relation
from evidence_tool.catalog.values import SAMPLE_LIMIT, Sampled, ValueSample
from evidence_tool.errors import AvailabilityError
from evidence_tool.workspace.redact import scrub

if TYPE_CHECKING:
    import psycopg
    from psycopg import pq

    from evidence_tool.catalog.results import Outcome

STATEMENT_TIMEOUT_MS = 30_000
LOCK_TIMEOUT_MS = 5_000
CONNECT_TIMEOUT_S = 10
# One pipeline is written whole before its replies are read.  Kept under 64 KiB it fits
# the kernel's socket buffers, so the write completes whatever the server answers
# meanwhile, and neither end can wait on the other; a longer statement goes alone.
PIPELINE_STATEMENTS = 200
PIPELINE_BYTES = 64 * 1024
_SAVEPOINT = b"ROLLBACK TO SAVEPOINT tht_check"
# Errors that say "the server gave up", not "the formula is wrong".
_GAVE_UP = {"57014": "the statement timeout", "55P03": "the lock timeout"}
_KINDS = {"r": "table", "p": "table", "f": "table", "v": "view", "m": "view"}
_RELATIONS = """
SELECT n.nspname, c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod)
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attribute a
  ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p', 'f', 'v', 'm')
  AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
ORDER BY n.nspname, c.relname, a.attnum
"""
# Functions an example may not call: volatile ones of the warehouse's own (pg_catalog's
# side effects are known by name, example_sql.SIDE_EFFECTS).
_VOLATILE = """
SELECT n.nspname, p.proname
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE p.provolatile = 'v' AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
"""


@dataclass(frozen=True)
class Described:
    """What the server said of one prepared formula: its result type, or its refusal."""

    type: str | None = None
    error: str | None = None
    pairs: tuple[tuple[int, int], ...] = ()  # (type oid, typmod) of each result column
    position: int | None = None  # 1-based character of the statement the error points at
    gave_up: str | None = None  # the timeout that stopped it: not the formula's fault


def _described_dsn(dsn: str) -> tuple[str, list[str]]:
    """('host H, database D' for messages: never the user, password or options; and what a
    message may not quote: the DSN, its password and its user)."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:  # a DSN psycopg cannot parse: scrubbed whole
        return "the DSN (which does not parse)", [dsn]
    host = str(parts.get("host") or parts.get("hostaddr") or "the default host")
    secrets = [dsn, *(str(parts.get(k) or "") for k in ("password", "user"))]
    return f"host {host}, database {parts.get('dbname') or 'the default'}", secrets


class LiveCatalog:
    """An open read-only session on the warehouse; ``round_trips`` counts every exchange."""

    def __init__(self, conn: psycopg.Connection[Any], dsn: str, search_path: tuple[str, ...]):
        self.conn = conn
        self.search_path = search_path
        self.round_trips = 0
        self.volatiles: set[tuple[str, str]] = set()  # (schema, function), read with the catalog
        self._where, self._secrets = _described_dsn(dsn)

    def fail(self, exc: BaseException, doing: str) -> AvailabilityError:
        text = " ".join(scrub(str(exc), self._secrets).split())
        return AvailabilityError(
            f"the PostgreSQL catalog ({self._where}) failed while {doing}: {text}", code="E189"
        )

    def _execute(self, query: Any, doing: str) -> list[list[tuple[Any, ...]]]:
        """Statements in one round trip: the rows of each that returns any."""
        import psycopg

        self.round_trips += 1
        try:
            cur = self.conn.execute(query)
            out: list[list[tuple[Any, ...]]] = []
            while True:
                if cur.description:
                    out.append(cur.fetchall())
                if not cur.nextset():
                    return out
        except psycopg.Error as exc:
            raise self.fail(exc, doing) from None

    def begin(self) -> None:
        """One round trip: the read-only transaction, its time limits, the search path, and
        the savepoint each checked statement rolls back to."""
        from psycopg import sql

        path = ", ".join(sql.Identifier(s).as_string(self.conn) for s in self.search_path)
        self._execute(
            sql.SQL(
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
                "SET LOCAL statement_timeout = {}; SET LOCAL lock_timeout = {}; "
                "SELECT pg_catalog.set_config('search_path', {}, true); SAVEPOINT tht_check"
            ).format(STATEMENT_TIMEOUT_MS, LOCK_TIMEOUT_MS, path),
            "starting a read-only transaction",
        )

    def catalog(self) -> Catalog:
        """Every relation with every column, and (same round trip) the volatile functions
        outside pg_catalog, which an example may not call."""
        sets = self._execute(_RELATIONS + ";" + _VOLATILE, "reading pg_catalog")
        rows = sets[0] if sets else []
        self.volatiles = {(str(n), str(p)) for n, p in (sets[1] if len(sets) > 1 else [])}
        relations = [
            Relation(
                schema,
                name,
                _KINDS[kind],
                tuple(Column(r[3], r[4]) for r in cols if r[3] is not None),
            )
            for (schema, name, kind), cols in groupby(rows, key=lambda r: r[:3])
        ]
        return Catalog("postgres", tuple(relations), self.search_path, sources=(self._where,))

    def describe(self, statements: Sequence[str]) -> list[Described]:
        """Each statement prepared (never executed) and described, in pipelines."""
        out = self.prepare(statements, "preparing the formulas")
        wanted = list(dict.fromkeys(p for d in out for p in d.pairs))
        names = self._type_names(wanted) if wanted else {}
        return [Described(", ".join(names[p] for p in d.pairs)) if d.pairs else d for d in out]

    def prepare(
        self, statements: Sequence[str], doing: str = "preparing the examples"
    ) -> list[Described]:
        """Each statement prepared (never executed): its refusal, if any; no type names."""
        segments = [_Segment(s.encode("utf-8"), describe=True) for s in statements]
        return [_described(r) for r in self._pipeline(segments, doing)]

    def run(self, queries: Sequence[str]) -> list[Outcome]:
        """``check --execute``: each query run inside the read-only transaction, at most
        ROW_LIMIT + 1 rows fetched, in pipelines; its bounded count and hash."""
        from evidence_tool.catalog.results import ROW_LIMIT, Outcome, outcome

        segments = [
            _Segment(f"SELECT * FROM (\n{q}\n) AS tht_example LIMIT {ROW_LIMIT + 1}".encode())
            for q in queries
        ]
        out: list[Outcome] = []
        for failed, rows in self._rows(segments, "running the examples"):
            if failed is None:
                out.append(outcome(rows))
            else:
                state, message = failed
                out.append(Outcome(None, None, _GAVE_UP.get(state) or f"{message} ({state})"))
        return out

    def _rows(
        self, segments: list[_Segment], doing: str
    ) -> Iterator[tuple[tuple[str, str] | None, list[tuple[str | None, ...]]]]:
        """Each segment's refusal (SQLSTATE, message), or the rows of its last result as text."""
        for results in self._pipeline(segments, doing):
            failed, res = _failure(results), results[-1]
            rows = [
                tuple(
                    None if (v := res.get_value(i, j)) is None else v.decode("utf-8", "replace")
                    for j in range(res.nfields)
                )
                for i in range(res.ntuples if failed is None else 0)
            ]
            yield failed, rows

    def volatile(self, names: Sequence[str]) -> set[str]:
        """Which of these function names (as an example's SQL writes them, schema-qualified
        or not) are a volatile function of the warehouse's own: read with the catalog."""
        out = set()
        for name in names:
            schema, _, proc = name.rpartition(".")
            if any(p == proc and (not schema or n == schema) for n, p in self.volatiles):
                out.add(name)
        return out

    def _type_names(self, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
        """format_type of every (type oid, typmod) pair the formulas produced: one query."""
        from psycopg import sql

        oids = sql.Literal([p[0] for p in pairs])
        mods = sql.Literal([p[1] for p in pairs])
        (rows,) = self._execute(
            sql.SQL(
                "ROLLBACK TO SAVEPOINT tht_check; "
                "SELECT t, m, pg_catalog.format_type(t, NULLIF(m, -1)) "
                "FROM unnest({}::oid[], {}::int[]) AS x(t, m)"
            ).format(oids, mods),
            "naming the formulas' types",
        )
        return {(int(t), int(m)): str(name) for t, m, name in rows}

    def sample(self, samples: Sequence[ValueSample]) -> list[Sampled]:
        """The most frequent stored values of each column (and the documented ones)."""
        segments = [_Segment(self._sample_query(s)) for s in samples]
        out: list[Sampled] = []
        for failed, rows in self._rows(segments, "sampling stored values"):
            if failed is not None:
                out.append(Sampled(None, _GAVE_UP.get(failed[0]) or failed[1]))
            else:
                out.append(Sampled({v: int(n) for v, n in rows if v is not None and n is not None}))
        return out

    def _sample_query(self, s: ValueSample) -> bytes:
        from psycopg import sql

        col = sql.Identifier(s.column)
        query = sql.SQL(
            "SELECT v, n FROM (SELECT {col}::text AS v, count(*) AS n, "
            "row_number() OVER (ORDER BY count(*) DESC, {col}::text) AS r "
            "FROM {schema}.{table} WHERE {col} IS NOT NULL GROUP BY 1) AS s "
            "WHERE r <= {limit} OR v = ANY({documented}::text[])"
        ).format(
            col=col,
            schema=sql.Identifier(s.relation.schema),
            table=sql.Identifier(s.relation.name),
            limit=SAMPLE_LIMIT,
            documented=sql.Literal(list(s.documented)),
        )
        return query.as_bytes(self.conn)

    def _pipeline(self, segments: list[_Segment], doing: str) -> list[list[pq.abc.PGresult]]:
        """Each segment sent after a rollback to the savepoint and closed by a Sync, so a
        refused statement aborts only its own segment; one round trip a batch."""
        out: list[list[pq.abc.PGresult]] = []
        pg = self.conn.pgconn
        for batch in _batches(segments):
            self.round_trips += 1
            pg.enter_pipeline_mode()
            try:
                for segment in batch:
                    pg.send_query_params(_SAVEPOINT, None)
                    segment.send(pg)
                    pg.pipeline_sync()
                out.extend(self._read_segment(pg, doing) for _ in batch)
            except AvailabilityError:
                raise
            except Exception as exc:  # the connection broke under the pipeline
                raise self.fail(exc, doing) from None
            finally:
                if pg.pipeline_status:  # after a broken connection libpq may refuse: moot then
                    with contextlib.suppress(Exception):
                        pg.exit_pipeline_mode()
        return out

    def _read_segment(self, pg: pq.abc.PGconn, doing: str) -> list[pq.abc.PGresult]:
        from psycopg import pq

        results: list[pq.abc.PGresult] = []
        idle = 0
        while True:
            r = pg.get_result()
            if r is None:
                idle += 1
                if idle > 4 or pg.status != pq.ConnStatus.OK:
                    raise self.fail(_Broken(pg.get_error_message()), doing)
                continue
            idle = 0
            if r.status == pq.ExecStatus.PIPELINE_SYNC:
                return results
            if r.status == pq.ExecStatus.FATAL_ERROR and _field(r, "SQLSTATE").startswith("08"):
                raise self.fail(_Broken(_field(r, "MESSAGE_PRIMARY")), doing)
            results.append(r)


class _Broken(Exception):
    pass


_OVERHEAD = len(_SAVEPOINT) + 64  # the rollback, message headers, the Sync


@dataclass(frozen=True)
class _Segment:
    """One statement of a pipeline: only prepared and described, or run."""

    sql: bytes
    describe: bool = False

    @property
    def size(self) -> int:  # bytes it sends
        return len(self.sql) + _OVERHEAD

    def send(self, pg: pq.abc.PGconn) -> None:
        if self.describe:
            pg.send_prepare(b"", self.sql)  # the unnamed statement: replaced by the next one
            pg.send_describe_prepared(b"")
        else:
            pg.send_query_params(self.sql, None)


def _batches(segments: list[_Segment]) -> Iterator[list[_Segment]]:
    batch: list[_Segment] = []
    size = 0
    for seg in segments:
        if batch and (len(batch) == PIPELINE_STATEMENTS or size + seg.size > PIPELINE_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(seg)
        size += seg.size
    if batch:
        yield batch


def _failure(results: list[pq.abc.PGresult]) -> tuple[str, str] | None:
    """(SQLSTATE, message) of a segment's first refused or aborted statement, if any."""
    from psycopg import pq

    failed = (pq.ExecStatus.FATAL_ERROR, pq.ExecStatus.PIPELINE_ABORTED)
    bad = next((r for r in results if r.status in failed), None)
    return None if bad is None else (_field(bad, "SQLSTATE"), _field(bad, "MESSAGE_PRIMARY"))


def _field(r: pq.abc.PGresult, name: str) -> str:
    from psycopg import pq

    raw = r.error_field(getattr(pq.DiagnosticField, name))
    return raw.decode("utf-8", "replace") if raw else ""


def _described(results: list[pq.abc.PGresult]) -> Described:
    """One formula's replies (rollback, prepare, describe) -> its type oids, or its refusal."""
    from psycopg import pq

    bad = next((r for r in results if r.status == pq.ExecStatus.FATAL_ERROR), None)
    if bad is None:
        desc = results[-1]
        return Described(pairs=tuple((desc.ftype(i), desc.fmod(i)) for i in range(desc.nfields)))
    state = _field(bad, "SQLSTATE")
    if state in _GAVE_UP:
        return Described(gave_up=_GAVE_UP[state])
    hint = _field(bad, "MESSAGE_HINT")
    position = _field(bad, "STATEMENT_POSITION")
    text = f"{_field(bad, 'MESSAGE_PRIMARY')} ({state})" + (
        f"; PostgreSQL's hint: {hint}" if hint else ""
    )
    return Described(error=text, position=int(position) if position.isdigit() else None)


@contextmanager
def open_live(env_name: str, search_path: tuple[str, ...]) -> Iterator[LiveCatalog]:
    """A read-only session on the warehouse the environment names; rolled back at the end."""
    try:
        import psycopg
    except ImportError:
        raise AvailabilityError(
            "checking against a live PostgreSQL needs the psycopg driver, which is not "
            "installed; install it with: pip install 'evidence-tool[postgres]'",
            code="E187",
        ) from None
    dsn = os.environ.get(env_name, "")
    if not dsn.strip():
        raise AvailabilityError(
            f"the environment variable {env_name} holds no PostgreSQL DSN; set it to the "
            "warehouse's connection string (it is read from the environment only, never stored)",
            code="E189",
        )
    try:
        conn = psycopg.connect(
            dsn,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name="tht catalog check",
            client_encoding="utf8",
        )
    except Exception as exc:  # OperationalError, or a DSN psycopg cannot parse
        where, secrets = _described_dsn(dsn)
        text = " ".join(scrub(str(exc), secrets).split())
        raise AvailabilityError(
            f"cannot connect to the PostgreSQL catalog ({where}) named by {env_name}: {text}",
            code="E189",
        ) from None
    live = LiveCatalog(conn, dsn, search_path)
    try:
        live.begin()
        yield live
    finally:
        with contextlib.suppress(Exception):
            conn.close()  # the read-only transaction ends with the connection: nothing kept
