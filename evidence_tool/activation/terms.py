"""A model-free embedder: sparse term vectors (hashed terms, log-scaled counts).

It needs no model download, so the qdrant backend works offline and in CI.
A dense embedding service plugs in through the same ``Embedder`` protocol
(see docs/activation.md).
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from evidence_tool.activation.analysis import fold

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Sparse:
    indices: list[int]
    values: list[float]


class Embedder(Protocol):
    """Turns texts into vectors; ``sparse`` says which kind of vector it returns."""

    sparse: bool
    dim: int | None

    def embed(self, texts: list[str]) -> list[Sparse] | list[list[float]]: ...


def terms(text: str) -> Counter[str]:
    return Counter(fold(w) for w in _WORD.findall(text) if len(w) > 1 or w.isdigit())


class TermEmbedder:
    sparse = True
    dim = None

    def embed(self, texts: list[str]) -> list[Sparse]:
        out = []
        for text in texts:
            counts: dict[int, float] = {}
            for term, n in terms(text).items():
                index = zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF
                counts[index] = counts.get(index, 0.0) + 1.0 + math.log(n)
            norm = math.sqrt(sum(v * v for v in counts.values())) or 1.0
            keys = sorted(counts)
            out.append(Sparse(keys, [counts[k] / norm for k in keys]))
        return out
