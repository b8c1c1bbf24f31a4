"""``check --execute``: each example's query run read-only, its result remembered.

Opt-in, PostgreSQL and SQLite.  A query that checked clean (names, and PREPARE on
PostgreSQL) is run once: on PostgreSQL inside the check's READ ONLY transaction
(statement_timeout 30 s, lock_timeout 5 s) as ``SELECT * FROM (<query>) LIMIT 10001``
in the same pipelines as the other statements; on SQLite on the read-only connection
whose authorizer allows reading only, stopped after 30 s.  What is kept is bounded: the
row count up to ``ROW_LIMIT`` (more is "over"), and the sha256 of the rows sorted, as
text, when they fit ``ROW_LIMIT`` rows and ``BYTE_LIMIT`` bytes.

The results go to ``.evidence-cache/example-results.json`` (machine-local, like the
catalog record: they say what this machine's warehouse returned), keyed by unit id and
the SQL block's line, with the SQL's hash and the active revision.  The next
``check --execute`` compares: a query whose SQL is unchanged but whose result is not is
warning W185 with both row counts.  A query the warehouse refuses when run (division by
zero, a cast of stored data) is W185 too: the check's findings stay about names and
types.  A hand-damaged store (not UTF-8 JSON of this shape, or an entry that is not one
result) is W189: what cannot be read is compared with nothing and replaced by this run's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from evidence_tool import fsio
from evidence_tool.archive.clock import now
from evidence_tool.archive.lock import ArchiveLock
from evidence_tool.errors import AvailabilityError, EvidenceWarning, LockHeldError
from evidence_tool.jsonvalue import JsonObject, JsonValue, View
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

STORE = "example-results.json"
FORMAT = 1
ROW_LIMIT = 10_000
BYTE_LIMIT = 1024 * 1024
WARNING = "W185"
DAMAGED = "W189"


@dataclass(frozen=True)
class Outcome:
    """One query's result, bounded: its row count (None: over ROW_LIMIT) and hash."""

    rows: int | None
    fingerprint: str | None  # None when over a bound or when it failed
    error: str | None = None

    def shown(self) -> str:
        return f"{self.rows} row(s)" if self.rows is not None else f"over {ROW_LIMIT:,} rows"


def outcome(rows: list[tuple[str | None, ...]]) -> Outcome:
    """The bounded count and hash of fetched rows (at most ROW_LIMIT + 1 of them)."""
    if len(rows) > ROW_LIMIT:
        return Outcome(None, None)
    size = sum(len(v) for row in rows for v in row if v is not None)
    if size > BYTE_LIMIT:
        return Outcome(len(rows), None)
    ordered = sorted(rows, key=lambda row: [(v is None, v or "") for v in row])
    text = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    return Outcome(len(rows), hashlib.sha256(text.encode("utf-8")).hexdigest())


def as_text(value: object) -> str | None:
    """A stored value as text, the same way on every run (SQLite hands back Python values)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass(frozen=True)
class Ran(View):
    _keys = ("unit_id", "path", "line", "*result")  # the outcome's rows, fingerprint, error
    unit_id: str
    path: str
    line: int
    sql: str
    result: Outcome

    @property
    def key(self) -> str:
        return f"{self.unit_id}#{self.line}"

    def sql_hash(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()

    def warning(self, message: str) -> EvidenceWarning:
        """W185 about this query's result, at its SQL block."""
        return EvidenceWarning(f"{self.unit_id}: {message}", self.path, self.line, code=WARNING)


def compare_and_record(
    layout: Layout, revision: str | None, ran: list[Ran]
) -> list[EvidenceWarning]:
    """W185 for each query whose result differs from the last recorded run of the same
    SQL, or that failed; then the record replaced with this run's results.  A damaged
    store or entry is W189 first, and is not compared."""
    before, warnings = _read(layout)
    for r in ran:
        if r.result.error is not None:
            warnings.append(r.warning(f"the example's query failed when run: {r.result.error}"))
            continue
        old = before.get(r.key)
        if not isinstance(old, dict) or old.get("sql") != r.sql_hash():
            continue  # first run of this SQL: nothing to compare with
        if old.get("rows") == r.result.rows and old.get("fingerprint") == r.result.fingerprint:
            continue
        both_unhashed = old.get("fingerprint") is None and r.result.fingerprint is None
        if both_unhashed and old.get("rows") == r.result.rows:
            continue  # both over a bound with the same count: no way to tell
        was, now_ = Outcome(_int(old.get("rows")), None).shown(), r.result.shown()
        since = f"since the check of {old.get('checked_at', 'an earlier run')}"
        warnings.append(r.warning(f"the example's result changed {since}: {was} then, {now_} now"))
    warnings.extend(_write(layout, revision, ran, before))
    return warnings


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_cache_record(layout: Layout, name: str) -> JsonObject:
    """The machine-local record ``name`` of the derived cache, or {} when no run left one
    (or it cannot be read: the next run rewrites it, and a reader must not fail over a
    derived file).  json's own detection of the encoding (catalog-review.json)."""
    path = layout.cache / name
    try:
        if path.is_symlink():  # planted: a record is only ever written as a file
            return {}
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def write_cache_record(
    layout: Layout, name: str, holder: str, record: Callable[[], JsonObject], after: str
) -> str | None:
    """Replace the record ``name`` with ``record()``, built under the archive lock (a
    writer's sweep after a crash must not take the temp file away).  Only the lock: a check
    neither replays nor settles another operation's journal.  A held lock, or a record that
    cannot be replaced, leaves the last one in place: why, for a warning (the check itself
    stands); ``after`` names what to wait for."""
    try:
        with ArchiveLock(layout.lock, holder), fsio.transaction(layout.root):
            text = json.dumps(record(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
            fsio.write_atomic(ensure_cache(layout) / name, text.encode("utf-8"), durable=False)
    except LockHeldError as exc:
        return f"{exc.message}; run the check again when {after} has finished"
    except AvailabilityError as exc:  # the lock file cannot be written (E604)
        if exc.code != "E604":
            raise
        return exc.message
    except OSError as exc:  # a folder in its place, a full disk, a read-only checkout
        return f"writing {name} failed ({exc.strerror or type(exc).__name__})"
    return None


def _read(layout: Layout) -> tuple[JsonObject, list[EvidenceWarning]]:
    """The recorded results by key, only those of the shape ``_write`` gives them, and
    W189 for what was damaged by hand (a missing store is a first run: nothing to say)."""
    path = layout.cache / STORE
    try:
        if path.is_symlink():  # planted: the store is only ever written as a file
            return {}, [_damaged(layout, "it is a link, not the file the check writes")]
        # Plain UTF-8 only, as written: a BOM or UTF-16 copy is an editor's, not the tool's.
        value = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return {}, []
    except UnicodeDecodeError:
        return {}, [_damaged(layout, "it is not UTF-8 text")]
    except ValueError as exc:
        return {}, [_damaged(layout, f"it is not JSON: {exc}")]
    except OSError as exc:
        return {}, [_damaged(layout, f"it cannot be read: {exc.strerror or type(exc).__name__}")]
    results = value.get("results") if isinstance(value, dict) else None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        return {}, [_damaged(layout, f"it is not a format-{FORMAT} results record")]
    if not isinstance(results, dict):
        return {}, [_damaged(layout, "its 'results' is not an object")]
    kept = {key: entry for key, entry in results.items() if _is_result(entry)}
    bad = sorted(key for key in results if key not in kept)
    if not bad:
        return kept, []
    named = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    why = f"{len(bad)} result(s) not of the shape it writes: {named}"
    return kept, [_damaged(layout, why, "those results were")]


def _is_result(entry: JsonValue) -> bool:
    """Whether ``entry`` is one result as ``_write`` records it (other keys are ignored:
    only what the comparison reads must be of its type)."""
    if not isinstance(entry, dict):
        return False
    rows, fingerprint = entry.get("rows", False), entry.get("fingerprint", False)
    count = _int(rows)
    rows_ok = rows is None or (count is not None and 0 <= count <= ROW_LIMIT)
    return (
        isinstance(entry.get("sql"), str)
        and rows_ok
        and (fingerprint is None or isinstance(fingerprint, str))
        and isinstance(entry.get("checked_at"), str)
        and isinstance(entry.get("revision", False), (str, type(None)))
    )


def _damaged(layout: Layout, why: str, what: str = "what it held was") -> EvidenceWarning:
    """W189 about the store: what was wrong, and that it was not compared."""
    return EvidenceWarning(
        f"{STORE} was damaged by hand ({why}): {what} set aside, not compared with this "
        "run's results, which are recorded in its place; run "
        "'tht workspace evidence check --execute' again to compare with them",
        layout.rel(layout.cache / STORE),
        code=DAMAGED,
    )


def _write(
    layout: Layout, revision: str | None, ran: list[Ran], before: JsonObject
) -> list[EvidenceWarning]:
    at = now()
    results: JsonObject = dict(before)  # examples not run this time keep theirs
    for r in ran:
        if r.result.error is None:
            results[r.key] = {
                "sql": r.sql_hash(),
                "rows": r.result.rows,
                "fingerprint": r.result.fingerprint,
                "checked_at": at,
                "revision": revision,
            }
    why = write_cache_record(
        layout,
        STORE,
        "catalog check --execute",
        lambda: {"format": FORMAT, "results": results},
        "it",
    )
    return (
        [] if why is None else [EvidenceWarning(f"the examples' results were not recorded: {why}")]
    )
