"""sqlite-vec, the optional accelerator of the sqlite index's dense ranking (extra ``vec``).

When the ``sqlite_vec`` package is importable and its extension loads into a SQLite
driver that can load extensions (the stdlib ``sqlite3`` where it was built with
extension loading, else ``pysqlite3``), the index also holds ``vec_units``, a ``vec0``
virtual table mirroring the ``vectors`` table, and a dense query is a KNN in SQLite.
Otherwise the plain-Python ranking of dense.py reads ``vectors``.  ``vectors`` stays
the record either way, so a reader without the extra (the stdlib ``sqlite3``) still
answers every mode from the same file: it never touches ``vec_units``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from evidence_tool.activation.sqlite_schema import index_meta, rows_by_id
from evidence_tool.embedding.vectors import dot, from_blob, to_blob
from evidence_tool.errors import EvidenceWarning
from evidence_tool.record import Record, field

TABLE = "vec_units"
META_KEY = "vec"  # meta row: the sqlite-vec version that wrote vec_units (absent: none)
KNN_MAX = 4096  # sqlite-vec refuses a larger k
# float32 cosine in C and the float64 dot of dense.py differ by ~1e-7 on unit vectors:
# candidates this close to the k-th are fetched too, then all are rescored exactly, so
# both paths agree on the order and on the ties (broken by id).
TIE_MARGIN = 1e-5
LOOK_PAST = 16  # candidates fetched past the k-th, to see where its ties end
WARNING_CODE = "W702"


@dataclass(frozen=True)
class Driver:
    """A SQLite driver with sqlite-vec loaded on each connection it opens."""

    name: str  # "sqlite3" or "pysqlite3"
    version: str  # sqlite-vec's, as vec_version() says
    module: ModuleType
    load: Callable[[sqlite3.Connection], None]

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        return (sqlite3.Error, self.module.Error)

    def connect(self, target: str, uri: bool = False) -> sqlite3.Connection:
        con: sqlite3.Connection = self.module.connect(target, uri=uri)
        try:
            con.enable_load_extension(True)
            self.load(con)
            con.enable_load_extension(False)
        except BaseException:
            con.close()
            raise
        return con


@dataclass(frozen=True)
class Probe:
    """What this process found: a working driver, or why there is none."""

    driver: Driver | None
    problem: str | None  # set when the extra is installed but cannot serve (W702)

    def warning(self) -> EvidenceWarning | None:
        if self.problem is None:
            return None
        return EvidenceWarning(
            f"sqlite-vec is installed but cannot be used ({self.problem}): dense search "
            "runs in plain Python; reinstall the 'vec' extra for this platform "
            "(see docs/retrieval.md)",
            code=WARNING_CODE,
        )


def _modules() -> list[ModuleType]:
    """Candidate driver modules, the stdlib first (no second SQLite when it can load)."""
    found: list[ModuleType] = []
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        found.append(sqlite3)
    with contextlib.suppress(ImportError):
        found.append(importlib.import_module("pysqlite3.dbapi2"))
    return found


@functools.cache
def probe() -> Probe:
    """Find a driver that loads sqlite-vec and has FTS5, once per process."""
    try:
        sqlite_vec = importlib.import_module("sqlite_vec")
    except ImportError:
        return Probe(None, None)  # the default install: the plain-Python path, silently
    load = getattr(sqlite_vec, "load", None)
    if not callable(load):
        return Probe(None, f"the sqlite_vec module at {sqlite_vec.__file__} has no load()")
    modules = _modules()
    if not modules:
        return Probe(None, "no SQLite driver here can load extensions: install pysqlite3")
    problems = []
    for module in modules:
        driver = Driver(module.__name__.split(".")[0], "", module, load)
        try:
            with contextlib.closing(driver.connect(":memory:")) as con:
                (version,) = con.execute("SELECT vec_version()").fetchone()
                con.execute("CREATE VIRTUAL TABLE temp.probe USING fts5(x)")  # the index's
        except Exception as exc:  # a broken build raises whatever its loader raises
            problems.append(f"{driver.name}: {exc}")
            continue
        return Probe(Driver(driver.name, str(version), module, load), None)
    return Probe(None, "; ".join(problems))


def driver() -> Driver | None:
    return probe().driver


def errors() -> tuple[type[Exception], ...]:
    """The exception classes a build or a search may meet (the stdlib's and the driver's)."""
    d = driver()
    return d.errors if d else (sqlite3.Error,)


def connect(target: Path | str, uri: bool = False) -> sqlite3.Connection:
    """A connection that can use ``vec_units`` when the extra serves, else the stdlib's."""
    d = driver()
    return d.connect(str(target), uri) if d else sqlite3.connect(target, uri=uri)


def wanted(embedder_model: str | None) -> str | None:
    """The ``vec`` meta value an index built here must hold: the sqlite-vec version when
    the index has vectors and the extra serves, else None (no ``vec_units``)."""
    if not embedder_model:
        return None  # no vectors: no probe, so a no-op never imports sqlite_vec (and numpy)
    d = driver()
    return d.version if d else None


def has_table(con: sqlite3.Connection) -> bool:
    return (
        con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone() is not None
    )


def loaded(con: sqlite3.Connection) -> bool:
    """Does ``con`` have sqlite-vec loaded (it was opened by ``connect``)?"""
    try:
        con.execute("SELECT vec_version()")
    except Exception:  # the stdlib's or the driver's OperationalError: no such function
        return False
    return True


def can_update(meta: dict[str, str]) -> bool:
    """Can a build copy the index ``meta`` describes and edit its rows?  Not when it holds
    ``vec_units`` and this process cannot load sqlite-vec: its rows could not be deleted."""
    return META_KEY not in meta or driver() is not None


def drop(con: sqlite3.Connection) -> None:
    if has_table(con):
        con.execute(f"DROP TABLE {TABLE}")
    con.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))


def delete(con: sqlite3.Connection, unit_id: str) -> None:
    if has_table(con):
        con.execute(f"DELETE FROM {TABLE} WHERE id = ?", (unit_id,))


def sync(con: sqlite3.Connection, dim: int) -> None:
    """Make ``vec_units`` mirror ``vectors`` (when ``con`` can load sqlite-vec)."""
    if not loaded(con):
        return
    created = f"float[{dim}]"
    row = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone()
    if row is not None and created not in row[0]:
        drop(con)  # another model's size
    con.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING vec0("
        f"id TEXT PRIMARY KEY, embedding {created} distance_metric=cosine)"
    )
    con.execute(f"DELETE FROM {TABLE} WHERE id NOT IN (SELECT id FROM vectors)")
    missing = con.execute(
        f"SELECT id, vec FROM vectors WHERE id NOT IN (SELECT id FROM {TABLE})"
    ).fetchall()
    con.executemany(f"INSERT INTO {TABLE}(id, embedding) VALUES (?, ?)", missing)
    (version,) = con.execute("SELECT vec_version()").fetchone()
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (META_KEY, str(version)))


def serves(con: sqlite3.Connection) -> bool:
    """Will a dense query on ``con`` run in SQLite?"""
    return loaded(con) and has_table(con)


def ranking(
    con: sqlite3.Connection, query: list[float], where: list[str], args: Sequence[str | int], k: int
) -> list[tuple[str, float]] | None:
    """The ``k`` units most similar to ``query`` among those ``where`` keeps, by a KNN of
    ``vec_units``; rescored and ordered as dense.py orders them ((-similarity, id)).
    None when the ties at the k-th go past sqlite-vec's largest k (rank in Python)."""
    if k <= 0:
        return []
    # The filters are a pre-filter of the KNN (id IN ...), never applied after it.
    keep = (
        " AND id IN (SELECT u.id FROM units u WHERE " + " AND ".join(where) + ")" if where else ""
    )
    sql = f"SELECT id, distance FROM {TABLE} WHERE embedding MATCH ? AND k = ?{keep}"
    blob = to_blob(query)
    n = k + LOOK_PAST
    while True:
        rows = con.execute(sql, [blob, min(n, KNN_MAX), *args]).fetchall()
        if len(rows) < min(n, KNN_MAX) or rows[-1][1] > rows[k - 1][1] + TIE_MARGIN:
            break  # every candidate, or past the k-th's ties
        if n >= KNN_MAX:
            return None
        n *= 2
    return _rescored(con, query, [uid for uid, _ in rows], k)


def _rescored(
    con: sqlite3.Connection, query: list[float], ids: list[str], k: int
) -> list[tuple[str, float]]:
    rows = rows_by_id(con, "SELECT id, vec FROM vectors", ids)
    scored = [(dot(query, from_blob(vec)), uid) for uid, vec in rows]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [(uid, sim) for sim, uid in scored[:k]]


class DenseStatus(Record, frozen=True):
    """What ``status`` says of the sqlite index's vectors and who would rank them."""

    model: str | None  # the model id of the index's vectors; None: no vectors
    path: str | None = field(name="dense_path")  # "vec" or "python"; None without vectors
    sqlite_vec: str | None  # the version that wrote vec_units; None: the index has none


def dense_status(index: Path) -> tuple[DenseStatus, EvidenceWarning | None]:
    """The index file's dense side, read with the stdlib (a missing or unreadable file has
    none), and W702 when it has vectors and the installed extra cannot serve them."""
    meta = index_meta(index) or {}
    model = meta.get("embedding")
    if model is None:
        return DenseStatus(None, None, None), None
    path = "vec" if META_KEY in meta and driver() is not None else "python"
    return DenseStatus(model, path, meta.get(META_KEY)), probe().warning()
