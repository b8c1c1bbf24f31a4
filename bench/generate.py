"""Deterministic N-unit workspaces for benchmarks: all kinds, both languages, 300-1500 bytes.

    python bench/generate.py N OUT_DIR [--seed S]

The same N and seed give byte-identical trees.  Units are rendered by the
tool's own renderer, so every file is canonical and valid.  Every 50th unit
also appears in a source draft under evidence/source/ (a multi-unit document
whose excerpts are the verbatim field texts), for refresh benchmarks.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence_tool.unit import (
    KINDS,
    PURPOSES,
    AppliesTo,
    DomainPayload,
    EnumPayload,
    EnumValue,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
    Metadata,
    NormalizationPayload,
    ReferencePayload,
    Unit,
    render,
)

WORDS_EN = [
    "admission",
    "discharge",
    "ward",
    "patient",
    "episode",
    "diagnosis",
    "procedure",
    "laboratory",
    "result",
    "value",
    "unit",
    "reference",
    "range",
    "prescription",
    "dose",
    "therapy",
    "encounter",
    "visit",
    "bed",
    "stay",
    "department",
    "physician",
    "nurse",
    "code",
    "status",
    "date",
    "period",
    "month",
    "year",
    "count",
    "rate",
]
WORDS_IT = [
    "ricovero",
    "dimissione",
    "reparto",
    "paziente",
    "episodio",
    "diagnosi",
    "procedura",
    "laboratorio",
    "risultato",
    "valore",
    "unità",
    "intervallo",
    "prescrizione",
    "dose",
    "terapia",
    "accesso",
    "visita",
    "letto",
    "degenza",
    "struttura",
    "medico",
    "infermiere",
    "codice",
    "stato",
    "data",
    "periodo",
    "mese",
    "anno",
    "conteggio",
    "tasso",
]
SCHEMAS = ("clinical", "admin", "lab", "pharmacy", "ed")


def _sentence(rng: random.Random, words: tuple[str, ...] | list[str], n: int) -> str:
    text = " ".join(rng.choice(words) for _ in range(n))
    return text[0].upper() + text[1:] + "."


def _para(rng: random.Random, words: list[str], lo: int, hi: int) -> str:
    return " ".join(_sentence(rng, words, rng.randint(6, 14)) for _ in range(rng.randint(lo, hi)))


def make_unit(i: int, rng: random.Random) -> Unit:
    kind = KINDS[i % len(KINDS)]
    lang = "it" if i % 3 == 0 else "en"
    words = WORDS_IT if lang == "it" else WORDS_EN
    schema = SCHEMAS[i % len(SCHEMAS)]
    table = f"{schema}.t{i % 97}"
    col = f"{table}.c{i % 13}"
    purposes = tuple(sorted(rng.sample(PURPOSES, rng.randint(1, 3)), key=PURPOSES.index))
    meta = Metadata(
        f"evidence:bench:{kind}:u{i:06d}",
        kind,
        lang,
        purposes,
        AppliesTo((rng.choice(words),), (table,), (col,)),
    )
    title = _sentence(rng, words, rng.randint(2, 5))[:-1]
    text = lambda lo=1, hi=3: _para(rng, words, lo + 1, hi + 2)  # noqa: E731
    payload = {
        "domain": lambda: DomainPayload(text(2, 6)),
        "glossary": lambda: GlossaryPayload(
            text(1, 3), tuple(sorted({rng.choice(words) for _ in range(3)})), ()
        ),
        "enum": lambda: EnumPayload(
            col, tuple(EnumValue(v, text(1, 1)) for v in ("A", "B", "C", "")[: rng.randint(2, 4)])
        ),
        "example": lambda: ExamplePayload(
            text(1, 2), text(1, 3) + f"\n\n```sql\nSELECT count(*) FROM {table}\n```"
        ),
        "mapping": lambda: MappingPayload(
            rng.choice(words), (table, f"{table}_hist"), (col, f"{table}.id", f"{table}.valid_from")
        ),
        "normalization": lambda: NormalizationPayload(text(1, 1), text(1, 1), text(1, 3)),
        "formula": lambda: FormulaPayload(
            rng.choice(words), f"sum({col}) / nullif(count({table}.id), 0)", (col, f"{table}.id")
        ),
        "reference": lambda: ReferencePayload(
            f"https://docs.example.org/psd/{kind}/{i}", title, text(1, 3)
        ),
    }[kind]()
    return Unit(meta, title, payload)


def generate(n: int, out: Path, seed: int = 42) -> Path:
    rng = random.Random(seed)
    curated = out / "evidence" / "curated"
    out.mkdir(parents=True, exist_ok=True)
    (out / "workspace.yaml").write_text(
        "descriptor_version: 4\nid: bench\nname: Benchmark\ndefault_language: en\n"
        "evidence:\n  descriptor_version: 1\n  sources: []\n",
        encoding="utf-8",
    )
    drafts: list[str] = []
    for i in range(n):
        unit = make_unit(i, rng)
        text = render(unit)
        path = curated / unit.kind / f"u{i:06d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if i % 50 == 0:
            drafts.append(text)
    source = out / "evidence" / "source"
    source.mkdir(parents=True, exist_ok=True)
    for k in range(0, len(drafts), 20):
        (source / f"draft-{k // 20:04d}.md").write_text(
            "\n".join(drafts[k : k + 20]), encoding="utf-8"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    generate(args.n, args.out, args.seed)
    print(f"wrote {args.n} units to {args.out}")


if __name__ == "__main__":
    main()
