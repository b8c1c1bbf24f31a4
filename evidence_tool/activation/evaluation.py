"""``tht workspace evidence eval``: recall@k, MRR and nDCG of a question set.

Deletion-aware: an expected id the archive deleted or retired is reported as
``retired`` with its deletion record (who, when, why) and left out of the
figures; an id the archive never held is an error of the question set (E911).
``--compare REV`` rebuilds REV's index in a temporary folder outside the
workspace and runs the same questions on it.

Every mode the workspace can serve is run, per backend: ``bm25`` always; ``dense`` and
``hybrid`` when ``evidence.embedding`` names a service and the index holds its vectors,
each question embedded once through the activation's embedder and cache.  A mode that
cannot run is listed with the reason, never silently dropped.
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from jsonschema import Draft202012Validator

from evidence_tool.activation.fusion import DEFAULT as DEFAULT_FUSION
from evidence_tool.activation.fusion import Fusion, Retrieval
from evidence_tool.activation.search import MODES, searchable_backend
from evidence_tool.activation.settings import ActivationSettings
from evidence_tool.activation.sqlite_index import INDEX_NAME, Filters, search_path
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.records import Deletion
from evidence_tool.embedding import DenseEmbedder
from evidence_tool.embedding.cache import EmbeddingCache, question_key
from evidence_tool.embedding.vectors import from_blob
from evidence_tool.errors import DescriptorError, Diagnostic, NotReadyError, UsageError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import UNSET, Record, UnsetType
from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import YamlProblem, load_unique

# Bounds on a question set: a hostile or mistaken file is refused before it is parsed.
MAX_BYTES = 4 * 1024 * 1024
MAX_QUESTIONS = 5000


@dataclass(frozen=True)
class Question:
    line: int
    question: str
    expected: tuple[str, ...]
    filters: Filters


def _invalid(path: str, message: str, line: int | None = None) -> UsageError:
    where = f"{path}:{line}" if line else path
    return UsageError(
        f"{where}: {message}; docs/retrieval.md shows the question set's format",
        code="E910",
        path=path,
        line=line,
    )


def _records(path: str, text: str) -> Iterator[tuple[int, JsonValue]]:
    """(line, question object) pairs of a JSONL or YAML question set."""
    if path.endswith(".jsonl"):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield n, json.loads(line)
                except ValueError as exc:
                    raise _invalid(path, f"not a JSON object ({exc})", n) from None
        return
    try:
        yaml = load_unique(text)  # the strict loader of units: no anchors, tags or duplicates
    except YamlProblem as exc:
        raise _invalid(path, f"not valid YAML ({exc.message})", exc.line) from None
    doc = yaml.value
    problems = list(Draft202012Validator(_TOP).iter_errors(doc))
    if problems:
        raise _invalid(path, f"the top level must be {{questions: [...]}} ({problems[0].message})")
    for i, item in enumerate(doc["questions"]):
        yield yaml.mark(("questions", i))[0] or 1, item


_TOP = {**load_schema("eval-questions.schema.json"), "properties": {"questions": {"type": "array"}}}
_QUESTION = Draft202012Validator(
    {"$defs": load_schema("eval-questions.schema.json")["$defs"], "$ref": "#/$defs/question"}
)


def load_questions(path: str) -> list[Question]:
    """The questions of ``path`` (YAML or JSONL), each checked against the schema."""
    file = Path(path)
    try:
        if file.stat().st_size > MAX_BYTES:
            raise _invalid(path, f"larger than {MAX_BYTES // (1024 * 1024)} MiB")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(path, f"unreadable ({exc})") from None
    out: list[Question] = []
    for line, item in _records(path, text):
        if len(out) == MAX_QUESTIONS:
            raise _invalid(path, f"more than {MAX_QUESTIONS} questions", line)
        errors = list(_QUESTION.iter_errors(item))
        if errors:
            where = "/".join(map(str, errors[0].absolute_path)) or "question"
            raise _invalid(path, f"{where}: {errors[0].message}", line)
        out.append(_question(line, item))
    if not out:
        raise _invalid(path, "no questions")
    return out


def _question(line: int, item: JsonValue) -> Question:
    """A question the schema accepted: an object with a string, a list of strings and an
    object of string filters (narrowed again here, for the type checker)."""
    assert isinstance(item, dict)
    text, expected, filters = item["question"], item["expected"], item.get("filters") or {}
    assert isinstance(text, str) and isinstance(expected, list) and isinstance(filters, dict)
    typed = {k: v for k, v in filters.items() if isinstance(v, str)}
    return Question(line, text, tuple(str(x) for x in expected), Filters(**typed))


def _check_ids(path: str, questions: list[Question], known: set[str]) -> None:
    """Every expected id must be one the archive holds or deleted (E911)."""
    bad = [
        Diagnostic("E911", f"expected id {uid} was never in the archive", path, q.line)
        for q in questions
        for uid in q.expected
        if uid not in known
    ]
    if bad:
        first = bad[0]
        raise UsageError(
            f"{path}:{first.line}: {first.message.split(' was')[0]} was never in the archive "
            f"({len(bad)} unknown id(s)): correct the id, or drop it from the question",
            code="E911",
            path=path,
            line=first.line,
            diagnostics=bad,
        )


# -- records ---------------------------------------------------------------------------


class Retired(Record, frozen=True):
    """An expected id the archive deleted or retired: its deletion record."""

    id: str
    actor: str | None
    deleted_at: str | None
    reason: str | None

    @classmethod
    def of(cls, record: Deletion) -> Retired:
        return cls(record.id, record.actor, record.deleted_at, record.reason.value)


class QuestionResult(Record, frozen=True):
    """One question's row: its figures at k are left out when every expected id is
    retired (listed, not scored), its note when nothing says why nothing was found."""

    line: int
    question: str
    retired: tuple[Retired, ...]
    recall: float | UnsetType = UNSET
    rr: float | UnsetType = UNSET
    ndcg: float | UnsetType = UNSET
    misses: tuple[str, ...] | UnsetType = UNSET
    note: str | UnsetType = UNSET  # why nothing was found (e.g. only stop words)


def _mean(rows: list[QuestionResult], figure: str) -> float | None:
    return round(sum(getattr(r, figure) for r in rows) / len(rows), 4) if rows else None


class ModeFigures(Record, frozen=True, kw_only=True):
    """A mode's figures, averaged over the questions with a live expected id (computed
    from ``questions``)."""

    _keys = ("mode", "available", "*means", "questions")
    available: ClassVar[bool] = True  # always: written for the --json result, in this place
    mode: str
    questions: tuple[QuestionResult, ...]

    @property
    def scored(self) -> list[QuestionResult]:
        return [q for q in self.questions if q.recall is not UNSET]

    @property
    def means(self) -> dict[str, float | None]:
        """How many questions were scored, and the means of their figures (None: none)."""
        scored = self.scored
        return {
            "evaluated": len(scored),
            "retired_only": len(self.questions) - len(scored),
            "recall": _mean(scored, "recall"),
            "mrr": _mean(scored, "rr"),
            "ndcg": _mean(scored, "ndcg"),
        }


class Unavailable(Record, frozen=True, kw_only=True):
    """A mode this backend cannot run here, and why (one line, not an error)."""

    mode: str
    available: bool = False  # always: written for the --json result, in this place
    reason: str


class Run(Record, frozen=True):
    # keys named, so that each mode writes its computed figures (``ModeFigures._keys``)
    _keys = ("label", "revision", "backend", "modes")
    label: str  # "active" or "compare"
    revision: str
    backend: str
    modes: tuple[ModeFigures | Unavailable, ...]


class QuestionVectors(Record, frozen=True):
    embedded: int  # question texts sent to the embedding service by this eval
    cached: int  # question vectors read from the embedding cache


class Evaluation(Record, frozen=True):
    """An eval's --json result; ``question_vectors`` is left out when no question was
    embedded or read from the cache."""

    _keys = ("k", "questions", "path", "runs", "question_vectors?")
    k: int
    questions: int
    path: str
    runs: tuple[Run, ...]
    question_vectors: QuestionVectors | None = None


# -- scoring ---------------------------------------------------------------------------

Score = tuple[float, float, float, tuple[str, ...]]  # recall, rr, ndcg, misses
# (question, filters, k, mode) -> the ids of the ranked hits, best first
Searcher = Callable[[str, Filters, int, str], list[str]]


def _score(ranked: list[str], relevant: set[str], k: int) -> Score:
    """Recall, reciprocal rank and nDCG at ``k``, and the relevant ids missed."""
    top = ranked[:k]
    ranks = [n for n, uid in enumerate(top, 1) if uid in relevant]
    ideal = sum(1 / math.log2(n + 1) for n in range(1, min(len(relevant), k) + 1))
    return (
        len(ranks) / len(relevant),
        1 / ranks[0] if ranks else 0.0,
        sum(1 / math.log2(n + 1) for n in ranks) / ideal,
        tuple(sorted(relevant - set(top))),
    )


def _run_mode(
    search: Searcher,
    mode: str,
    questions: list[Question],
    retired: dict[str, Retired],
    k: int,
) -> tuple[QuestionResult, ...]:
    rows = []
    for q in questions:
        gone = tuple(retired[uid] for uid in q.expected if uid in retired)
        relevant = set(q.expected) - {r.id for r in gone}
        if not relevant:
            rows.append(QuestionResult(q.line, q.question, gone))
            continue
        note: str | UnsetType = UNSET
        try:
            ranked = search(q.question, q.filters, k, mode)
        except UsageError as exc:  # e.g. only stop words: nothing found, said why
            ranked, note = [], exc.message
        rows.append(QuestionResult(q.line, q.question, gone, *_score(ranked, relevant, k), note))
    return tuple(rows)


def _modes(asked: tuple[str, ...]) -> list[str]:
    unknown = [m for m in asked if m not in MODES]
    if unknown:
        raise UsageError(f"unknown mode '{unknown[0]}': use one of {', '.join(MODES)}")
    return list(dict.fromkeys(asked)) or list(MODES)


# -- the question embedder --------------------------------------------------------------


class QuestionEmbedder:
    """The installation's embedder for questions: each text embedded once per eval (in one
    batch, ahead of the searches) and cached by its hash beside the units' vectors."""

    def __init__(self, inner: DenseEmbedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.languages = getattr(inner, "languages", None)
        self.cache = cache
        self._vectors: dict[str, list[float]] = {}

    def prepare(self, texts: list[str]) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        blobs = self.cache.vectors([(question_key(t), t) for t in todo])
        for text in todo:
            self._vectors[text] = list(from_blob(blobs[question_key(text)]))

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.prepare(texts)
        return [self._vectors[t] for t in texts]


@dataclass(frozen=True)
class _Dense:
    """What the dense modes need: the question embedder, or why they cannot run."""

    embedder: QuestionEmbedder | None
    reason: str


def _dense(embedding: JsonObject, modes: list[str], cache_dir: Path) -> _Dense:
    """``embedding``: the ``evidence.embedding`` section as written, which the embedding
    package reads (JSON boundary: the installation file)."""
    from evidence_tool.embedding import embedder_for

    if not any(m != "bm25" for m in modes):
        return _Dense(None, "")
    try:
        inner = embedder_for(embedding)
    except DescriptorError as exc:  # e.g. the embeddings extra or the model not installed
        return _Dense(None, exc.message)
    if inner is None:
        return _Dense(
            None,
            "evidence.embedding is kind none: configure an embedding service "
            "(docs/retrieval.md) and run consolidate for dense and hybrid figures",
        )
    return _Dense(QuestionEmbedder(inner, EmbeddingCache(cache_dir, inner)), "")


# -- the backends ----------------------------------------------------------------------


def _stale_reason(held: str | None, wanted: str) -> str:
    what = f"vectors of {held}" if held else "no vectors"
    return (
        f"the index holds {what}, not of {wanted}: run 'tht workspace evidence consolidate' "
        "with this installation to embed the units"
    )


def _sqlite_searcher(
    path: Path, dense: _Dense, fusion: Fusion, active: Any = None
) -> tuple[Searcher, str | None]:
    """A searcher over the sqlite index at ``path``, and why its dense modes cannot run
    (None: they can).  ``active``: the layout whose active revision the index must hold."""
    from evidence_tool.activation.dense import index_model
    from evidence_tool.activation.sqlite_index import open_readonly
    from evidence_tool.activation.sqlite_search import _check_current

    if not path.is_file():
        raise NotReadyError(
            "no search index yet: run 'tht workspace evidence consolidate' "
            "with the sqlite backend (the default)"
        )
    reason = dense.reason or None
    if dense.embedder is not None:
        with open_readonly(path) as con:
            held = index_model(con)
        if held != dense.embedder.model_id:
            reason = _stale_reason(held, dense.embedder.model_id)

    def searcher(query: str, filters: Filters, k: int, mode: str) -> list[str]:
        data = search_path(path, query, filters, k, mode, lambda: dense.embedder, fusion=fusion)
        if active is not None:
            _check_current(active, data.revision, path)
        return data.ids()

    return searcher, reason


def _qdrant_searcher(
    stack: ExitStack,
    layout: Any,
    settings: ActivationSettings,
    dense: _Dense,
    fusion: Fusion = DEFAULT_FUSION,
) -> tuple[Searcher, str | None]:
    from evidence_tool.activation.qdrant_index import QdrantBackend

    backend = QdrantBackend(layout, settings, dense=dense.embedder)
    stack.callback(backend.close)
    backend.require_collection()
    reason = dense.reason or None
    if dense.embedder is not None and not backend._shape_matches():
        reason = _stale_reason(None, dense.embedder.model_id)

    def searcher(query: str, filters: Filters, k: int, mode: str) -> list[str]:
        # Filters' fields are the backend's filter keywords.
        points = backend.search(query, **asdict(filters), limit=k, mode=mode, fusion=fusion)
        return [p.unit_id for p in points]

    return searcher, reason


def _run(
    label: str,
    revision: str,
    backend: str,
    searcher: tuple[Searcher, str | None],
    questions: list[Question],
    retired: dict[str, Retired],
    k: int,
    modes: list[str],
    questioner: QuestionEmbedder | None = None,
) -> Run:
    search, dense_reason = searcher
    out: list[ModeFigures | Unavailable] = []
    for mode in modes:
        if mode != "bm25" and dense_reason is not None:
            out.append(Unavailable(mode=mode, reason=dense_reason))
            continue
        if mode != "bm25" and questioner is not None:
            questioner.prepare([q.question for q in questions])  # one batch, once per eval
        out.append(ModeFigures(mode=mode, questions=_run_mode(search, mode, questions, retired, k)))
    return Run(label, revision, backend, tuple(out))


def question_set(
    archive: LocalEvidenceArchive, questions_path: str
) -> tuple[list[Question], str, dict[str, Retired]]:
    """The questions of ``questions_path``, the active revision and the ids the newest
    snapshot retired; an expected id the archive never held is E911."""
    questions = load_questions(questions_path)
    newest = archive.newest_snapshot()
    active = archive.active_snapshot()
    if newest is None or active is None:
        raise NotReadyError(
            "no active revision to evaluate: run 'tht workspace evidence consolidate' first"
        )
    retired = {d.id: Retired.of(d) for d in newest.deletions}
    known = {e.id for e in newest.entries()} | {e.id for e in active.entries()} | set(retired)
    _check_ids(questions_path, questions, known)
    return questions, active.revision, retired


def evaluate(
    archive: LocalEvidenceArchive,
    questions_path: str,
    *,
    k: int = 5,
    modes: tuple[str, ...] = (),
    compare: str | None = None,
    activation: ActivationSettings | JsonObject | None = None,
    embedding: JsonObject | None = None,
    retrieval: Retrieval | JsonObject | None = None,
) -> Evaluation:
    """Figures of the configured backend's index in each mode it can serve, and of
    ``compare``'s index rebuilt in a temp folder (``activation``/``embedding``: the
    installation's sections as written, JSON boundary: the YAML file; ``retrieval``:
    the workspace's, whose fusion hybrid uses)."""
    from evidence_tool.archive.diffing import resolve_revision

    layout = archive.layout
    settings = searchable_backend(activation or {}, layout)
    questions, active_revision, retired = question_set(archive, questions_path)
    chosen = _modes(modes)
    fusion = (
        retrieval if isinstance(retrieval, Retrieval) else Retrieval.from_json(retrieval)
    ).fusion
    dense = _dense(embedding or {}, chosen, layout.cache / "embeddings")
    questioner, kind = dense.embedder, settings.kind

    def run(label: str, revision: str, searcher: tuple[Searcher, str | None]) -> Run:
        return _run(label, revision, kind, searcher, questions, retired, k, chosen, questioner)

    with ExitStack() as stack:
        searcher = (
            _qdrant_searcher(stack, layout, settings, dense, fusion)
            if kind == "qdrant"
            else _sqlite_searcher(layout.cache / INDEX_NAME, dense, fusion, layout)
        )
        runs = [run("active", active_revision, searcher)]
    if compare is not None:
        revision = resolve_revision(archive, compare)
        with tempfile.TemporaryDirectory(prefix="tht-eval-") as tmp, ExitStack() as stack:
            searcher = _rebuilt(stack, archive, revision, Path(tmp), kind, settings, dense, fusion)
            runs.append(run("compare", revision, searcher))
    vectors = (questioner.cache.embedded, questioner.cache.hits) if questioner else (0, 0)
    used = QuestionVectors(*vectors) if any(vectors) else None
    return Evaluation(k, len(questions), questions_path, tuple(runs), used)


def _rebuilt(
    stack: ExitStack,
    archive: LocalEvidenceArchive,
    revision: str,
    tmp: Path,
    kind: str,
    settings: ActivationSettings,
    dense: _Dense,
    fusion: Fusion = DEFAULT_FUSION,
) -> tuple[Searcher, str | None]:
    """A searcher over ``revision``'s index built in ``tmp``, outside the workspace: unit
    vectors the workspace's cache lacks are embedded into ``tmp`` too."""
    snapshot = archive.snapshot(revision)
    inner = dense.embedder.inner if dense.embedder else None
    cache = (
        EmbeddingCache(tmp / "embeddings", inner, also_read=archive.layout.cache / "embeddings")
        if inner
        else None
    )
    if kind == "qdrant":
        from evidence_tool.activation.qdrant_index import QdrantBackend

        local = settings.local_copy(str(tmp / "qdrant"))
        with contextlib.closing(QdrantBackend(archive.layout, local, dense=inner)) as builder:
            builder.cache = cache
            builder(snapshot)
        return _qdrant_searcher(stack, archive.layout, local, dense, fusion)
    from evidence_tool.activation import vec
    from evidence_tool.activation.dense import write_vectors
    from evidence_tool.activation.sqlite_index import build_index

    path = tmp / INDEX_NAME
    build_index(path, revision, snapshot.records())
    # the build's driver: vec_units follows the vectors
    with contextlib.closing(vec.connect(path)) as con:
        write_vectors(con, inner, cache)
        con.commit()
    return _sqlite_searcher(path, dense, fusion)


# -- the gate of a pull request (docs/ci.md) ---------------------------------------------

GATE_METRICS = ("recall", "mrr", "ndcg")


def gate(
    evaluation: Evaluation,
    *,
    min_recall: float | None = None,
    min_mrr: float | None = None,
    fail_on_drop: bool = False,
) -> tuple[JsonObject, list[Diagnostic]]:
    """The thresholds and the comparison as findings: E171 for each mode of the active
    run below ``min_recall`` / ``min_mrr`` (a mode that scored no question is below any
    threshold: a gate that measured nothing does not pass), E172 for each metric of each
    mode worse than on the compared revision.  Modes that could not run are left out;
    a gate with no mode left fails too."""
    if fail_on_drop and len(evaluation.runs) < 2:
        raise UsageError("--fail-on-drop compares with a revision: add --compare REV")
    active = {m.mode: m for m in evaluation.runs[0].modes if isinstance(m, ModeFigures)}
    found: list[Diagnostic] = []
    limits = {"recall": min_recall, "mrr": min_mrr}
    if (min_recall is not None or min_mrr is not None) and not active:
        found.append(Diagnostic("E171", "no search mode could run, so no threshold was met"))
    for mode, figures in active.items():
        for metric, limit in limits.items():
            value = figures.means[metric]
            if limit is not None and (value is None or value < limit):
                shown = "nothing (no question could be scored)" if value is None else value
                found.append(
                    Diagnostic(
                        "E171",
                        f"{mode}: {metric} is {shown}, below the required {limit} "
                        f"(k={evaluation.k}, {len(figures.scored)} question(s) scored)",
                    )
                )
    compared: list[JsonObject] = []
    if fail_on_drop:
        base = {m.mode: m for m in evaluation.runs[1].modes if isinstance(m, ModeFigures)}
        both = [mode for mode in active if mode in base]
        if not both:
            found.append(Diagnostic("E172", "no search mode ran on both revisions to compare"))
        for mode in both:
            for metric in GATE_METRICS:
                now, then = active[mode].means[metric], base[mode].means[metric]
                compared.append({"mode": mode, "metric": metric, "active": now, "compare": then})
                if then is not None and (now is None or now < then):
                    found.append(
                        Diagnostic(
                            "E172",
                            f"{mode}: {metric} dropped from {then} on "
                            f"{evaluation.runs[1].revision[:12]} to {now} on "
                            f"{evaluation.runs[0].revision[:12]}",
                        )
                    )
    summary: JsonObject = {
        "min_recall": min_recall,
        "min_mrr": min_mrr,
        "fail_on_drop": fail_on_drop,
        "passed": not found,
        "failures": len(found),
    }
    if fail_on_drop:
        summary["compared"] = list(compared)
    return summary, found
