"""Text reporters: a command's JSON result as lines written for people.

Every key of the result is printed as an aligned ``key: value`` line (nested results
as indented blocks), so the text says everything ``--json`` says, and no value is a
Python repr: no braces, brackets, quotes or ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from evidence_tool.cli.narrow import arr, obj, objs, strs, text
from evidence_tool.jsonvalue import JsonObject, JsonValue

if TYPE_CHECKING:
    from evidence_tool.activation.records import SearchResult

# One rule for long lists in text output (issue 34): the first LIST_LIMIT items, then how
# many more and where the rest is.  --json always lists everything.
LIST_LIMIT = 20


def more(count: int, limit: int = LIST_LIMIT) -> str:
    """'… and N more (--json lists all)' for a list of ``count`` items cut at ``limit``."""
    return f"… and {count - limit} more (--json lists all)"


def id_list(items: Sequence[str], limit: int = LIST_LIMIT) -> str:
    """``items`` joined by commas, cut at ``limit`` by the one rule."""
    shown = ", ".join(items[:limit])
    return f"{shown}, {more(len(items), limit)}" if len(items) > limit else shown


def cut_lines(lines: Sequence[str], limit: int = LIST_LIMIT, indent: str = "") -> list[str]:
    """One line per item, cut at ``limit`` by the one rule."""
    if len(lines) <= limit:
        return list(lines)
    return [*lines[:limit], f"{indent}{more(len(lines), limit)}"]


def scalar(value: JsonValue | tuple[JsonValue, ...]) -> str:
    """One value as a person reads it: ``-`` for nothing, yes/no, lists comma-joined."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(scalar(v) for v in value) if value else "none"
    if isinstance(value, Mapping) and not value:
        return "none"
    return str(value)


def _nested(value: JsonValue | tuple[JsonValue, ...]) -> bool:
    if isinstance(value, Mapping):
        return bool(value)
    return isinstance(value, list | tuple) and any(isinstance(v, Mapping | list) for v in value)


def _long(value: JsonValue) -> bool:
    """A sentence (a message, a note): one line of its own, not one of a comma list."""
    return isinstance(value, str) and (", " in value or len(value) > 60)


def key_values(data: Mapping[str, JsonValue], indent: int = 0) -> list[str]:
    """``data`` as ``key: value`` lines, values aligned in one column per block."""
    pad = " " * indent
    width = max((len(k) for k, v in data.items() if not _nested(v)), default=0) + 2
    lines = []
    for key, value in data.items():
        if isinstance(value, Mapping) and value:
            lines.append(f"{pad}{key}:")
            lines += key_values(value, indent + 2)
        elif isinstance(value, list | tuple) and any(_long(v) for v in value):
            lines.append(f"{pad}{key}: {len(value)}")
            lines += [f"{pad}  - {scalar(v)}" for v in value]
        elif isinstance(value, list | tuple) and _nested(value):
            lines.append(f"{pad}{key}: {len(value)}")
            for n, item in enumerate(value, 1):
                if isinstance(item, Mapping):
                    lines.append(f"{pad}  #{n}")
                    lines += key_values(item, indent + 4)
                else:
                    lines.append(f"{pad}  #{n} {scalar(item)}")
        else:
            lines.append(f"{pad}{(key + ':').ljust(width)}{scalar(value)}".rstrip())
    return lines


def show_lines(data: JsonObject) -> list[str]:
    """``show``: a headline for a deleted unit, the unit's keys, then its text verbatim."""
    head: list[str] = []
    fields = {k: v for k, v in data.items() if k != "text"}
    deleted = data.get("deleted")
    if deleted:
        deleted = obj(deleted)
        head.append(
            f"{data['id']} was deleted at {deleted['deleted_at']} by {deleted['actor']} "
            f"({deleted['reason']}); restore with: tht workspace evidence restore {data['id']}"
        )
        # The last snapshot that held it, not a working file, is what is shown.
        fields["path"] = "- (no working file; the text below is its last archived content)"
    else:
        fields["deleted"] = "no"
    # The text verbatim, one element per line: the reporter escapes within each line.
    return [*head, *key_values(fields), "text:", *text(data["text"]).rstrip("\n").split("\n")]


def verify_lines(result: JsonObject, problems: int) -> list[str]:
    """``verify``: the counts, the index comparison, and a closing verdict."""
    verdict = "ok" if not problems else f"FAILED ({problems} problem{'s' if problems > 1 else ''})"
    return [*key_values(result), f"verify: {verdict}"]


_SCORES = {
    "bm25": "BM25 / best hit's",
    "dense": "cosine similarity",
    "hybrid": "fused: normalised BM25 and cosine",
}


def search_lines(found: SearchResult) -> list[str]:
    """``search``: which mode ran and what its scores are, then one line per hit."""
    note = ""
    if found.mode == "hybrid" and found.rankings == ("bm25",):
        note = ", the model does not serve the query's language: words alone"
    head = f"mode: {found.mode} (score: {_SCORES.get(found.mode, 'backend score')}{note})"
    return [head] + (
        [
            f"{h.score:.3f}  {h.id}  [{h.kind}/{h.language}, "
            f"{h.provenance}]  {h.title}  matched: {', '.join(h.matched)}"
            for h in found.hits
        ]
        or ["no match"]
    )


def eval_lines(data: JsonObject) -> list[str]:
    """``eval``: a line of figures per revision and mode, then each question's misses
    and retired ids; the modes unavailable for one reason share one line saying it."""
    lines = [f"{data['questions']} question(s), k={data['k']}"]
    for run in objs(data["runs"]):
        head = f"{run['label']} {text(run['revision'])[:12]} {run['backend']}"
        absent: dict[str, list[str]] = {}
        for m in objs(run["modes"]):
            if not m["available"]:
                absent.setdefault(text(m["reason"]), []).append(text(m["mode"]))
                continue
            lines.append(
                f"{head}/{m['mode']}: recall@{data['k']} {scalar(m['recall'])}  "
                f"MRR {scalar(m['mrr'])}  nDCG {scalar(m['ndcg'])}"
                f"  ({m['evaluated']} scored, {m['retired_only']} only retired ids)"
            )
            for q in objs(m["questions"]):
                lines += [f"  line {q['line']}: miss {uid}" for uid in arr(q.get("misses", []))]
                lines += [
                    f"  line {q['line']}: retired {r['id']} ({scalar(r['reason'])} by "
                    f"{scalar(r['actor'])} at {scalar(r['deleted_at'])})"
                    for r in objs(q["retired"])
                ]
        for reason, modes in absent.items():
            lines.append(f"{head}/{', '.join(modes)}: unavailable ({reason})")
    if "adopted" in data:
        chosen = obj(data["adopted"])
        fusion = chosen.get("fusion")
        how = (
            f" ({obj(fusion)['method']}, lexical weight {obj(fusion)['weight']})" if fusion else ""
        )
        lines.append(
            f"adopted: {chosen['mode']}{how} into {chosen['descriptor']}: {chosen['reason']}"
        )
    return lines


def refresh_lines(
    data: JsonObject, commands: Callable[[str, str], dict[str, str]] | None
) -> list[str]:
    """``refresh``: a line per source, then the decide commands of each comparison, with
    its real source id and revision (``commands`` is None in a dry run: nothing to decide)."""
    lines = []
    sources = objs(data["sources"])
    for x in sources:
        lines.append(f"{text(x['status']):<9} {text(x['source_id'])[:12]} {x['locator']}")
        if x["status"] == "compared":
            lines.append(
                f"          revision {x['revision']}: {len(arr(x['proposed']))} proposed, "
                f"retire {scalar(x['retire'])}, {x['review_items']} review item(s)"
                + _import_counts(x)
            )
            lines.append(f"          {change_counts(obj(x['changes']))}")
            lines += [f"          dropped {d['id']} ({d['reason']})" for d in objs(x["dropped"])]
    compared = [x for x in sources if x["status"] == "compared"]
    if commands is None:
        lines.append("dry run: nothing written")
    elif compared:
        lines.append("decide each comparison: keep the local units, or replace them:")
        for x in compared:
            by_decision = commands(text(x["source_id"]), text(x["revision"]))
            lines += [f"  {by_decision[d]}" for d in ("keep", "replace")]
    return lines


def change_counts(counts: JsonObject) -> str:
    """'1 added, 3 changed, 7 identical, 0 retired': what replace would do."""
    return ", ".join(
        f"{counts[k] if isinstance(counts[k], int) else len(arr(counts[k]))} {k}"
        for k in ("added", "changed", "identical", "retired")
    )


def _import_counts(line: JsonObject) -> str:
    """An import's not-imported count and skipped kinds, after its refresh line."""
    if "not_imported" not in line:
        return ""
    skipped = ", ".join(f"{n} {what}" for what, n in obj(line["skipped"]).items())
    return f", {line['not_imported']} not imported, skipped {skipped or 'nothing'}"


def _flag(flag: JsonObject) -> str:
    sid = flag.get("source_id")
    source = f" (source {text(sid)[:12]})" if sid else ""
    return f"{flag['id']} {flag['flag']}{source}"


def cite_check_lines(revision: str | None, results: Sequence[JsonObject]) -> list[str]:
    """``cite-check``: per answer, each class of ids on its own aligned line."""
    lines = [f"revision: {scalar(revision)}"]
    for n, res in enumerate(results, 1):
        lines.append(f"answer {n}:")
        shown = {k: res[k] for k in ("grounded", "ungrounded", "inactive", "unused")}
        shown["flags"] = [_flag(f) for f in objs(res["flags"])]
        shown["ok"] = res["ok"]
        lines += key_values(shown, 2)
    return lines


def _changes(what: str, changes: JsonObject) -> list[str]:
    lines = []
    for cls in ("added", "changed", "removed"):
        names = strs(changes[cls])
        if names:
            lines.append(f"  {what} {cls} ({len(names)}): {id_list(names)}")
    if changes["restamped"]:
        lines.append(f"  {what} naming the new revision only: {changes['restamped']}")
    lines.append(f"  {what} unchanged: {changes['unchanged']}")
    return lines


def publish_lines(data: JsonObject) -> list[str]:
    """``publish``: what was (or would be) written, and every unit the format left out."""
    verb = "would publish" if data["dry_run"] else "published"
    lines = [
        f"{verb} {data['units']} unit(s) of revision {data['revision']} as {data['format']} "
        f"to {data['output']}"
    ]
    lines += _changes("files", obj(data["files"]))
    entries = data.get("entries")
    if isinstance(entries, dict):
        lines += _changes("entries", entries)
    skipped = objs(data["not_exported"])
    if skipped:
        lines.append(f"  not exported ({len(skipped)}):")
        lines += [f"    {s['unit_id']}: {s['reason']}" for s in skipped]
    if data["dry_run"]:
        lines.append("dry run: nothing written; run it without --dry-run to publish")
    return lines
