"""Issue 2, part 2: each failing example yields exactly its code, at the right place.

The examples live in ``cases/*.md`` (markdown-it-py's fixture layout), so a case
reads as the file a curator would write, with the diagnostics it must produce.
"""

from __future__ import annotations

import pytest
from unit_helpers import Case, all_cases

from evidence_tool.errors import CODES
from evidence_tool.unit import parse_unit

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.title for c in CASES])
def test_a_bad_unit_reports_exactly_its_codes_at_the_right_place(case: Case) -> None:
    result = parse_unit(case.text, path="evidence/curated/x/case.md")

    found = [(d.code, d.line, d.column, d.message) for d in result.errors]
    assert result.unit is None, case.source
    assert {d.code for d in result.errors} == {e.code for e in case.expected}, (case.source, found)
    assert len(result.errors) == len(case.expected), (case.source, found)  # one report per problem
    for e in case.expected:
        matches = [
            d
            for d in result.errors
            if d.code == e.code
            and d.line == e.line
            and (e.column is None or d.column == e.column)
            and e.fragment in d.message
        ]
        assert matches, (case.source, e, found)
    assert all(d.path == "evidence/curated/x/case.md" for d in result.errors)


def test_every_case_title_names_the_code_it_expects() -> None:
    for case in CASES:
        assert case.title.split()[0] in {e.code for e in case.expected}, case.source
        assert all(e.code in CODES for e in case.expected), case.source


def test_the_cases_cover_every_unit_level_code() -> None:
    # E108 and E120 are workspace rules (test_unit_workspace_rules.py); E105, E107, E109 and
    # E113 are systematic families covered in test_unit_error_families.py.
    covered = {e.code for case in CASES for e in case.expected}
    assert covered >= {
        "E101", "E102", "E103", "E104", "E106", "E110", "E111",
        "E112", "E113", "E114", "E115", "E116", "E122",
    }  # fmt: skip
