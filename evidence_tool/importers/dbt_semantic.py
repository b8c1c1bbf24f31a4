"""dbt's semantic layer as units: measures and metrics -> formula or domain, entities -> mapping.

Both YAML forms (legacy ``semantic_models:`` with ``measures`` and metrics with
``type_params``; the 1.12 form with ``agg``/``expr`` on model-embedded simple
metrics and ``numerator``/``input_metrics`` as direct keys) and manifest.json
arrive here as the same plain records.  A metric whose calculation is one SQL
expression becomes a formula; one that needs more (a cumulative window, a
conversion) a domain rule that says so; a filter (always Jinja in dbt) a review
item ``not-representable``, since dropping it would state a different number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evidence_tool.importers.base import (
    Imported,
    ImportResult,
    Span,
    element_id,
    make_unit,
)
from evidence_tool.importers.unit_parts import ident
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.unit.fields import is_italian
from evidence_tool.unit.formula import check_expression
from evidence_tool.unit.model import DomainPayload, FormulaPayload, MappingPayload

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# String literals are skipped so a metric name inside quotes is never replaced.
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_]*")
_DEPTH = 32  # metric references nest this deep at most (a cycle stops here too)


@dataclass
class Element:
    """A measure, metric or entity: its plain data and where it came from."""

    name: str
    data: JsonObject  # its plain data as the export holds it (a JSON boundary)
    table: str | None  # schema.table it is computed on, when known
    spans: list[Span]
    where: str  # "models/orders.yml:40" for messages
    model: str = ""  # entities: the dbt model they belong to


@dataclass
class Semantic:
    measures: dict[str, Element] = field(default_factory=dict)
    metrics: dict[str, Element] = field(default_factory=dict)
    entities: list[Element] = field(default_factory=list)


class NotOne(Exception):
    """The metric is not one SQL expression; ``filtered``: because of a Jinja filter."""

    def __init__(self, reason: str, filtered: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.filtered = reason, filtered


def agg_sql(agg: Any, expr: Any, params: JsonObject) -> str:
    """PostgreSQL for one aggregation (MetricFlow's semantics)."""
    name = str(agg or "").lower()
    e = str(expr).strip()
    simple = {"sum": "SUM", "min": "MIN", "max": "MAX", "average": "AVG", "avg": "AVG"}
    if name in simple:
        return f"{simple[name]}({e})"
    if name == "count":
        return f"COUNT({e})"
    if name == "count_distinct":
        return f"COUNT(DISTINCT {e})"
    if name == "sum_boolean":
        return f"SUM(CASE WHEN {e} THEN 1 ELSE 0 END)"
    if name == "median":
        return f"PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY {e})"
    if name == "percentile":
        return _percentile(e, params)
    raise NotOne(f"the aggregation {agg!r} is not one dbt knows (sum, count, average, ...)")


def _percentile(expr: str, params: JsonObject) -> str:
    value = params.get("percentile")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NotOne("a percentile aggregation without a numeric percentile")
    # Legacy agg_params give a fraction (0.99), the 1.12 key a percentage (99.0).
    fraction = value / 100 if value > 1 else value
    if not 0 <= fraction <= 1:
        raise NotOne(f"the percentile {value} is outside 0..100")
    discrete = params.get("use_discrete_percentile") or params.get("percentile_type") == "discrete"
    function = "PERCENTILE_DISC" if discrete else "PERCENTILE_CONT"
    return f"{function}({fraction:g}) WITHIN GROUP (ORDER BY {expr})"


def _params(metric: Element) -> JsonObject:
    """The metric's type parameters: legacy ``type_params`` first, then the 1.12 direct keys."""
    merged = dict(metric.data)
    tp = metric.data.get("type_params")
    if isinstance(tp, dict):
        merged.update({k: v for k, v in tp.items() if v not in (None, [], {})})
    return merged


def _has_filter(value: Any) -> bool:
    if isinstance(value, dict):  # the manifest's {"where_filters": [...]}
        return any(_has_filter(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_filter(v) for v in value)
    return value not in (None, "", False)


def _input(value: Any) -> tuple[str, str]:
    """(metric name, alias) of a ratio side or derived input (a name or a mapping)."""
    if isinstance(value, str):
        return value, value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        if _has_filter(value.get("filter")):
            raise NotOne(f"its input {value['name']} has a filter (Jinja)", filtered=True)
        for key in ("offset_window", "offset_to_grain"):
            if value.get(key) not in (None, ""):
                raise NotOne(f"its input {value['name']} has an {key}")
        alias = value.get("alias")
        return value["name"], alias if isinstance(alias, str) and alias else value["name"]
    raise NotOne(f"an input is not a metric name: {value!r}")


class Resolver:
    def __init__(self, sem: Semantic) -> None:
        self.sem = sem
        self.tables: set[str] = set()  # the tables the last resolution computed on

    def measure_sql(self, name: str) -> str:
        measure = self.sem.measures.get(name)
        if measure is None:
            raise NotOne(f"it names the measure {name!r}, which no semantic model defines")
        data = measure.data
        if measure.table:
            self.tables.add(measure.table)
        if data.get("non_additive_dimension"):
            raise NotOne(f"the measure {name} is semi-additive (non_additive_dimension)", True)
        expr = data.get("expr", name)
        return agg_sql(data.get("agg"), name if expr is None else expr, _agg_params(data))

    def metric_sql(self, name: str, depth: int = 0) -> str:
        metric = self.sem.metrics.get(name)
        if metric is None:
            raise NotOne(f"it names the metric {name!r}, which the project does not define")
        if depth > _DEPTH:
            raise NotOne("its metrics refer to each other in a cycle")
        p = _params(metric)
        if metric.table:
            self.tables.add(metric.table)
        if _has_filter(metric.data.get("filter")):
            raise NotOne(f"the metric {name} has a filter (Jinja)", filtered=True)
        kind = str(p.get("type", "")).lower()
        if kind == "simple":
            return self._simple(name, p)
        if kind == "ratio":
            (num, _), (den, _) = _input(p.get("numerator")), _input(p.get("denominator"))
            n, d = self.metric_sql(num, depth + 1), self.metric_sql(den, depth + 1)
            return f"CAST({n} AS DOUBLE PRECISION) / CAST(NULLIF({d}, 0) AS DOUBLE PRECISION)"
        if kind == "derived":
            return self._derived(p, depth)
        raise NotOne(f"a {kind or 'untyped'} metric is not one SQL expression")

    def _simple(self, name: str, p: JsonObject) -> str:
        measure = p.get("measure")
        if measure is not None:
            measure_name, _ = _input(measure)
            return self.measure_sql(measure_name)
        agg_params = p.get("metric_aggregation_params")
        if isinstance(agg_params, dict):  # manifest of the 1.12 form
            expr = p.get("expr") if p.get("expr") not in (None, "") else name
            return agg_sql(agg_params.get("agg"), expr, _agg_params(agg_params))
        if p.get("agg") is None:
            raise NotOne("a simple metric without measure or agg")
        expr = p.get("expr")
        return agg_sql(p.get("agg"), name if expr in (None, "") else expr, _agg_params(p))

    def _derived(self, p: JsonObject, depth: int) -> str:
        expr = p.get("expr")
        inputs = p.get("input_metrics") or p.get("metrics") or []
        if not isinstance(expr, str) or not expr.strip() or not isinstance(inputs, list):
            raise NotOne("a derived metric without expr and input metrics")
        names: dict[str, str] = {}
        for item in inputs:
            metric, alias = _input(item)
            names[alias] = f"({self.metric_sql(metric, depth + 1)})"
        sql = _TOKEN.sub(lambda m: names.get(m.group(), m.group()), expr.strip())
        problem = check_expression(sql)
        if problem is not None:
            raise NotOne(f"its expression {problem[0]}")
        return sql


def _agg_params(data: JsonObject) -> JsonObject:
    given = data.get("agg_params")
    params: JsonObject = dict(given) if isinstance(given, dict) else {}
    for key in ("percentile", "percentile_type", "use_discrete_percentile"):
        if key in data:
            params[key] = data[key]
    return params


def _words(language: str) -> dict[str, str]:
    if is_italian(language):
        return {"entity": "Entità {name} di {model}", "calc": "Calcolo (metrica dbt {kind}): {how}"}
    return {"entity": "Entity {name} of {model}", "calc": "Calculation (dbt {kind} metric): {how}"}


def _label(element: Element) -> str:
    label = element.data.get("label")
    return label.strip() if isinstance(label, str) and label.strip() else element.name


def semantic_units(sem: Semantic, language: str, result: ImportResult) -> None:
    """Append the units, review items and not-imported entries of the semantic layer."""
    resolver = Resolver(sem)
    for name, measure in sem.measures.items():
        uid = element_id("dbt", "measure", name)
        resolver.tables = set()
        try:
            sql = resolver.measure_sql(name)
        except NotOne as exc:
            _not_one(result, uid, f"measure {name}", measure, exc, language, None)
            continue
        _formula(result, uid, f"measure {name}", measure, sql, resolver.tables, language)
    for name, metric in sem.metrics.items():
        uid = element_id("dbt", "metric", name)
        resolver.tables = set()
        try:
            sql = resolver.metric_sql(name)
        except NotOne as exc:
            _not_one(result, uid, f"metric {name}", metric, exc, language, _params(metric))
            continue
        _formula(result, uid, f"metric {name}", metric, sql, resolver.tables, language)
    for entity in sem.entities:
        _mapping(result, entity, language)


def _formula(
    result: ImportResult,
    uid: str,
    what: str,
    element: Element,
    sql: str,
    tables: set[str],
    language: str,
) -> None:
    unit = make_unit(
        id=uid,
        language=language,
        title=_label(element),
        payload=FormulaPayload(concept=_label(element), sql=sql),
        purposes=("sql_generation",),
        tables=tuple(sorted(tables)),
    )
    result.units.append(Imported(unit, list(element.spans)))
    description = element.data.get("description")
    if isinstance(description, str) and description.strip():
        # A formula has no field for prose; the description stays cited in the excerpt.
        result.omit(f"dbt {what}", "description")


def _not_one(
    result: ImportResult,
    uid: str,
    what: str,
    element: Element,
    exc: NotOne,
    language: str,
    params: JsonObject | None,
) -> None:
    if exc.filtered or params is None:
        # A filter cannot be dropped, and a measure that is not one expression has no rule text.
        code = "not-representable" if exc.filtered else "invalid-element"
        result.review(
            code, f"{element.where}: dbt {what} not imported: {exc.reason}", uid, element.spans[0]
        )
        kept = "filter (Jinja)" if exc.filtered else f"calculation: {exc.reason}"
        result.omit(f"dbt {what}", kept, element.spans[0])
        return
    kind = str(params.get("type", "")).lower()
    how = _how(params)
    description = element.data.get("description")
    lines = [description.strip()] if isinstance(description, str) and description.strip() else []
    lines.append(_words(language)["calc"].format(kind=kind, how=how))
    unit = make_unit(
        id=uid,
        language=language,
        title=_label(element),
        payload=DomainPayload(rule="\n\n".join(lines)),
        purposes=("disambiguation", "sql_generation"),
        tables=(element.table,) if element.table else (),
    )
    result.units.append(Imported(unit, list(element.spans)))
    result.omit(f"dbt {what}", f"calculation: {exc.reason}")


def _how(p: JsonObject) -> str:
    """The calculation as dbt states it, in one line."""
    parts = []
    nested = p.get("cumulative_type_params") or p.get("conversion_type_params")
    if isinstance(nested, dict):  # the manifest keeps these one level down
        p = {**p, **{k: v for k, v in nested.items() if v not in (None, "", [], {})}}
    keys = ("measure", "metric", "input_metric", "expr", "numerator", "denominator")
    for key in (*keys, "window", "grain_to_date", "period_agg", "entity", "base_metric"):
        value = p.get(key)
        if isinstance(value, dict):
            value = value.get("name")
        if value not in (None, "", [], {}):
            parts.append(f"{key} {' '.join(str(value).split())}")
    inputs = p.get("input_metrics") or p.get("metrics")
    if isinstance(inputs, list) and inputs:
        names = [i.get("name") if isinstance(i, dict) else i for i in inputs]
        parts.append("inputs " + ", ".join(str(n) for n in names))
    return "; ".join(parts) or "-"


def _mapping(result: ImportResult, entity: Element, language: str) -> None:
    uid = element_id("dbt", "entity", entity.model, entity.name)
    expr = entity.data.get("expr")
    column = entity.name if expr in (None, "") else str(expr).strip()
    columns: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    if entity.table and _IDENT.fullmatch(column):
        columns = (f"{entity.table}.{ident(column)}",)
    elif entity.table:
        tables = (entity.table,)
        result.omit(f"dbt entity {entity.name} of {entity.model}", f"expression {column}")
    if not (columns or tables):
        result.review(
            "invalid-element",
            f"{entity.where}: dbt entity {entity.name}: its model's table is unknown",
            uid,
        )
        return
    title = _words(language)["entity"].format(name=entity.name, model=entity.model)
    unit = make_unit(
        id=uid,
        language=language,
        title=title,
        payload=MappingPayload(concept=entity.name, tables=tables, columns=columns),
        purposes=("schema_linking",),
        tables=tables,
        columns=columns,
    )
    result.units.append(Imported(unit, list(entity.spans)))
