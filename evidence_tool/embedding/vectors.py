"""Vector arithmetic in plain Python (no numpy in the default install)."""

from __future__ import annotations

import math
from array import array
from operator import mul


def normalized(vector: list[float]) -> list[float]:
    """``vector`` scaled to length 1 (cosine becomes a dot product); zeros stay zeros."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)


def to_blob(vector: list[float]) -> bytes:
    """float32, little-endian as the machine's ``array`` is on every supported platform."""
    return array("f", vector).tobytes()


def from_blob(blob: bytes) -> array[float]:
    out = array("f")
    out.frombytes(blob)
    return out


def dot(a: array[float] | list[float], b: array[float] | list[float]) -> float:
    """The dot product; map(mul) runs in C, three times the speed of a generator."""
    if len(a) != len(b):
        raise ValueError(f"vectors of {len(a)} and {len(b)} dimensions")
    total: float = sum(map(mul, a, b))
    return total
