"""How the unit parser's CPU time grows on hostile inputs (issue 2, part 5).

    python bench/parser_growth.py [--n 10000] [--repeat 3]

Parses each hostile text (a billion laughs, deep nesting, many keys, headings, titles,
enum values...) at an eighth of its size and at its full size, as str and as bytes,
and loads ``n``-scaled YAML mappings with the strict loader; prints the median CPU
seconds of each and their ratio.  Linear growth is a ratio near 8 (16 for the YAML
row); a quadratic one is near 64 (256).  CPU time, not the wall clock, so a ratio
holds on a shared machine.  tests/unit/test_unit_properties.py parses the same texts
at full size and requires coded diagnostics; this measures how long they take.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence_tool.unit import parse_unit
from evidence_tool.unit.yaml_strict import YamlProblem, load


def _unit(body: str, kind: str = "domain") -> str:
    return (
        f"---\nschema_version: 4\nid: evidence:test:x\nkind: {kind}\nlanguage: en\n"
        f"purposes: [rewriting]\n---\n\n{body}"
    )


def _laughs() -> str:
    names = "abcdefghij"
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for prev, name in itertools.pairwise(names):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\n\n# T\n"


def hostile(n: int) -> dict[str, str]:
    """Hostile unit texts whose size grows with ``n`` (10,000 is the tests' size)."""
    lists = "".join(" " * (2 * i) + "- x\n" for i in range(3 * math.isqrt(n)))  # text ~ n
    return {
        "billion laughs": _laughs(),
        "deep flow sequence": "---\nx: " + "[" * n + "]" * n + "\n---\n# T\n",
        "deep flow mapping": "---\nx: " + "{a: " * n + "1" + "}" * n + "\n---\n",
        "unclosed deep sequence": "---\nx: " + "[" * n + "\n---\n# T\n",
        "many metadata keys": "---\n" + "".join(f"k{i}: 1\n" for i in range(2 * n)) + "---\n",
        "many duplicate keys": "---\n" + "k: 1\n" * (2 * n) + "---\n",
        "a very long line": _unit("# T\n\n## Rule\n\n" + "x" * (25 * n) + "\n"),
        "many headings": _unit("# T\n\n## Rule\n\n" + "## h\n" * (4 * n)),
        "many titles": _unit("# T\n" * (4 * n)),
        "deeply nested quotes": _unit("# T\n\n## Rule\n\n" + ">" * n + " x\n"),
        "deeply nested lists": _unit("# T\n\n## Rule\n\n" + lists),
        "deep SQL parentheses": _unit(
            "# T\n\n## Concept\n\nc\n\n## SQL\n\n```sql\n"
            + "(" * (n // 2)
            + "1"
            + ")" * (n // 2)
            + "\n```\n",
            kind="formula",
        ),
        "many enum values": _unit(
            "# T\n\n## Column\n\ns.t.c\n\n## Values\n\n"
            + "".join(f'### "{i}"\n' for i in range(2 * n)),
            kind="enum",
        ),
    }


def _cpu(work: Callable[[], object], repeat: int) -> float:
    """Median CPU seconds of ``work``."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return statistics.median(times)


def _parse(text: str) -> Callable[[], object]:
    return lambda: (parse_unit(text), parse_unit(text.encode()))


def _yaml(n: int) -> Callable[[], object]:
    """The strict loader on ``n`` keys, then refusing ``2n`` nested brackets."""
    many = "".join(f"k{i}: {i}\n" for i in range(n))

    def work() -> None:
        load(many)
        with contextlib.suppress(YamlProblem):  # refused, as it must be
            load("[" * (2 * n))

    return work


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ns = ap.parse_args()
    small, full = hostile(ns.n // 8), hostile(ns.n)
    rows = [(name, _parse(small[name]), _parse(full[name]), 8) for name in full]
    rows.append(("yaml: keys and nesting", _yaml(ns.n * 5 // 16), _yaml(ns.n * 5), 16))
    print(f"{'case':26} {'small s':>9} {'full s':>9} {'ratio':>7}  linear / quadratic")
    for name, low, high, scale in rows:
        a, b = _cpu(low, ns.repeat), _cpu(high, ns.repeat)
        ratio = b / a if a > 0 else float("nan")
        print(f"{name:26} {a:9.4f} {b:9.4f} {ratio:7.1f}  {scale} / {scale * scale}")


if __name__ == "__main__":
    main()
