"""atheris target: the unit parser never raises, and what it accepts round-trips.

    python fuzz/fuzz_unit.py -max_total_time=60 CORPUS_DIR [SEED_DIR...]

(``tests/reliability/test_fuzz.py`` runs it for ``THT_FUZZ_SECONDS`` with the
fixture units as seeds.)  Any exception is a finding: ``parse_unit`` answers
every input with a unit or coded diagnostics; a unit it returns must render to
text that parses back to the same unit, and that text must be canonical.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from evidence_tool.unit import parse, parse_unit, render


def TestOneInput(data: bytes) -> None:  # the name atheris calls
    result = parse_unit(data)
    if result.unit is None:
        assert result.errors, "no unit and no diagnostic"
        return
    text = render(result.unit)
    again = parse(text)
    assert again == result.unit, "parse(render(u)) != u"
    assert render(again) == text, "render is not canonical"


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
