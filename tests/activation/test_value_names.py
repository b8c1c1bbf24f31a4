"""Values a question says: a unit whose SQL quotes a value the question names
("Fresno County" against ``County = 'Fresno'``), or that holds a value the question
quotes ('mdorf'), gains ``names.LITERAL_BOOST`` on the lexical side (docs/retrieval.md,
"Schema-aware ranking"); a value that is only part of a word does not.  A glossary
term's short definition is one of its names ("K-12": "students in grades 1 through 12")."""

from __future__ import annotations

from pathlib import Path

import pytest
from activation_helpers import Tht, literal_named, named, write_unit

from evidence_tool.activation import names
from evidence_tool.activation.records import IndexRecord
from evidence_tool.activation.sqlite_index import Filters, search_path

COUNTY = "evidence:schools:term.county"
USER = "evidence:forum:term.user-name"
OTHER = "evidence:forum:term.first-answer"


def _formula(uid: str, concept: str, sql: str) -> str:
    return (
        f"---\nschema_version: 4\nid: {uid}\nkind: formula\nlanguage: en\n"
        f"purposes: [sql_generation]\napplies_to:\n  concepts: [{concept}]\n---\n\n"
        f"# {concept}\n\n## Concept\n\n{concept}\n\n## SQL\n\n```sql\n{sql}\n```\n"
    )


def _record(sql: str, title: str = "a unit") -> IndexRecord:
    return IndexRecord({"id": "evidence:x:y", "title": title, "payload": {"sql": sql}})


def test_quoted_phrases_are_folded_and_short_ones_dropped() -> None:
    assert names.quoted("""Is 'Jarrod Dixon' or "HÄRLAN" or `K-12` or 'x' first?""") == [
        "jarrod dixon",
        "harlan",
        "k 12",
    ]


@pytest.mark.parametrize(
    ("question", "sql", "expected"),
    [
        ("How many schools are in Fresno County?", "County = 'Fresno'", True),
        ("How many schools are in fresno?", "County = 'Fresno'", True),
        ("Schools in Fresnoville", "County = 'Fresno'", False),  # part of a word
        ("Schools in Kern", "County = 'Fresno'", False),
        ("When did 'Mdorf' post first?", "DisplayName", False),  # the unit holds no mdorf
        ("When did 'Mdorf' post first?", "DisplayName = 'mdorf'", True),
        ("Posts by 'Jon Snow'?", "OwnerDisplayName IN ('Jon Snow', 'Arya')", True),
    ],
)
def test_a_value_said_in_the_question_is_a_literal_match(
    question: str, sql: str, expected: bool
) -> None:
    record = _record(sql)
    assert literal_named(record, question, names.quoted(question)) is expected


def test_the_literal_boost_lifts_the_unit_that_holds_the_value(tmp_path: Path, tht: Tht) -> None:
    root = tmp_path / "literals"
    root.mkdir()
    (root / "workspace.yaml").write_text(
        "descriptor_version: 4\nid: lit\nname: Literals\ndefault_language: en\n"
        "evidence:\n  descriptor_version: 1\n  sources: []\n",
        encoding="utf-8",
    )
    write_unit(root, "formula", "user", _formula(USER, "user display name", "'mdorf'"))
    write_unit(
        root,
        "formula",
        "first",
        _formula(OTHER, "first answer posted by a user in a thread", "MIN(CreationDate)"),
    )
    write_unit(root, "formula", "county", _formula(COUNTY, "school county", "County = 'Kern'"))
    assert tht("consolidate", root=root).json["result"]["status"] == "activated"
    index = root / ".evidence-cache" / "index.sqlite"
    question = "When did the user 'mdorf' post the first answer?"

    plain = {
        h.id: h.score
        for h in search_path(index, question, Filters(), 10, "bm25", name_boost=0).hits
    }
    got = {h.id: h.score for h in search_path(index, question, Filters(), 10, "bm25").hits}
    # Words alone rank the other unit first (it holds more of the question's words); the
    # unit holding the quoted value gains exactly the literal boost on that scale.
    assert plain[OTHER] == got[OTHER] == 1.0
    assert got[USER] == pytest.approx(plain[USER] + names.LITERAL_BOOST, abs=2e-4)
    assert COUNTY not in got  # it quotes 'Kern': no word of the question in it


def _term(definition: str) -> IndexRecord:
    return IndexRecord(
        {
            "id": "evidence:schools:term.k-12",
            "title": "K-12",
            "language": "en",
            "payload": {"definition": definition, "synonyms": [], "variants": []},
        }
    )


@pytest.mark.parametrize(
    ("question", "definition", "expected"),
    [
        (
            "Schools with the most students in grades 1 through 12?",
            "students in grades 1 through 12",
            True,
        ),
        ("Which districts have the most schools?", "districts", True),
        ("Students in grade 3 of each school?", "students in grades 1 through 12", False),
        # A definition longer than DEFINITION_WORDS words is prose, not a name.
        (
            "the amount the bank lent to the client for the loan in the year",
            "the amount the bank lent to the client for the loan in the year",
            False,
        ),
    ],
)
def test_a_short_definition_said_in_full_names_its_term(
    question: str, definition: str, expected: bool
) -> None:
    if definition.startswith("the amount"):  # the case must stay past the limit
        assert len(definition.split()) > names.DEFINITION_WORDS
    assert named(_term(definition), names.query_stems(question)) is expected
