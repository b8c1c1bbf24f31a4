"""atheris target: the descriptor loaders never raise anything but coded errors.

    python fuzz/fuzz_descriptor.py -max_total_time=60 CORPUS_DIR [SEED_DIR...]

The bytes go through the same path as ``workspace.yaml`` and ``--installation``
files (size bound, UTF-8, strict YAML, JSON Schema); the only exception allowed
out is an ``EvidenceError`` with a code (E902 invalid descriptor).
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from evidence_tool.errors import EvidenceError
    from evidence_tool.workspace.descriptor import parse_descriptor

SCHEMAS = ("workspace.schema.json", "installation.schema.json")


def TestOneInput(data: bytes) -> None:  # the name atheris calls
    schema = SCHEMAS[data[0] % 2] if data else SCHEMAS[0]
    try:
        parse_descriptor(data[1:], schema, "fuzz.yaml")
    except EvidenceError as exc:
        assert exc.code, "an error without a code"


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
