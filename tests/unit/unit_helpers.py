"""Builders for unit texts and the reader of the Markdown fixture files in ``cases/``.

Named ``unit_helpers`` (not ``helpers``) because test folders have no ``__init__.py``:
module basenames must be unique across ``tests/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, settings

from evidence_tool.unit import ParseResult

CASES = Path(__file__).parent / "cases"

# Deterministic, no example database written into the checkout, no flaky deadlines.
PROPERTY = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def front(
    *,
    kind: str = "domain",
    language: str = "en",
    id: str = "evidence:test:x",
    purposes: str = "[rewriting]",
    extra: str = "",
) -> str:
    """Frontmatter lines 1-7 (with ``extra`` before the closing '---')."""
    return (
        "---\n"
        "schema_version: 4\n"
        f"id: {id}\n"
        f"kind: {kind}\n"
        f"language: {language}\n"
        f"purposes: {purposes}\n"
        f"{extra}"
        "---\n"
    )


def unit_text(body: str, **meta: str) -> str:
    """A whole unit: ``front(**meta)``, a blank line, then ``body`` (which starts at line 9)."""
    return front(**meta) + "\n" + body


DOMAIN_BODY = "# Title\n\n## Rule\n\nCount only validated rows.\n"


def where(result: ParseResult) -> list[tuple[str, int | None, int | None]]:
    return [(d.code, d.line, d.column) for d in result.errors]


# -- fixture files ---------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    code: str
    line: int | None
    column: int | None
    fragment: str


@dataclass(frozen=True)
class Case:
    title: str
    text: str
    expected: tuple[Expected, ...]
    source: str  # file:line of the case title, for failure messages


_EXPECT = re.compile(r"(?P<code>[EW]\d{3}) (?P<line>-|\d+)(?::(?P<col>\d+))?(?: (?P<frag>.*))?")


def read_cases(path: Path) -> list[Case]:
    """Cases in markdown-it-py's fixture layout: a title line, then ``.``, the input, ``.``,
    one expected diagnostic per line (``CODE LINE[:COLUMN] message fragment``), ``.``.

    Lines of the input are numbered from 1, as in the file the input stands for.
    """
    lines = path.read_text(encoding="utf-8").split("\n")
    cases: list[Case] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip() or lines[i].startswith("//"):
            i += 1
            continue
        title, title_line = lines[i], i + 1
        if lines[i + 1] != ".":
            raise ValueError(f"{path.name}:{i + 2}: expected '.' after the case title")
        end_input = lines.index(".", i + 2)
        end_expected = lines.index(".", end_input + 1)
        text = "\n".join(lines[i + 2 : end_input]) + "\n"
        expected = []
        for raw in lines[end_input + 1 : end_expected]:
            m = _EXPECT.fullmatch(raw)
            if m is None:
                raise ValueError(f"{path.name}: bad expectation {raw!r}")
            expected.append(
                Expected(
                    m["code"],
                    None if m["line"] == "-" else int(m["line"]),
                    int(m["col"]) if m["col"] else None,
                    m["frag"] or "",
                )
            )
        cases.append(Case(title, text, tuple(expected), f"{path.name}:{title_line}"))
        i = end_expected + 1
    return cases


def all_cases() -> list[Case]:
    return [case for path in sorted(CASES.glob("*.md")) for case in read_cases(path)]


def strictly_equal(a: object, b: object) -> bool:
    """Equality that also compares types, so ``True`` is not ``1`` and ``1`` is not ``1.0``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(
            strictly_equal(ka, kb) and strictly_equal(a[ka], b[kb])
            for ka, kb in zip(a, b, strict=True)
        )
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def budget(max_examples: int) -> settings:
    """``PROPERTY`` with its own number of examples."""
    return settings(PROPERTY, max_examples=max_examples)
