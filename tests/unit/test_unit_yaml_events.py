"""The unit-owned YAML event stream: positions a span reader can slice the text with."""

from __future__ import annotations

import pytest

from evidence_tool.unit.yaml_events import YamlSyntaxError, events
from evidence_tool.unit.yaml_strict import resolve_plain

TEXT = """\
models:
  - name: fct_orders   # a comment
    description: 'Orders, one row per ''order'''
    tests: [unique, not_null]
    rows: 12
"""


def test_scalars_sit_where_the_text_says() -> None:
    found = list(events(TEXT))
    kinds = [e.kind for e in found]
    assert kinds[:3] == ["stream-start", "document-start", "mapping-start"]
    assert kinds[-2:] == ["document-end", "stream-end"]
    scalars = [e for e in found if e.kind == "scalar"]
    assert [e.value for e in scalars] == [
        "models", "name", "fct_orders", "description", "Orders, one row per 'order'",
        "tests", "unique", "not_null", "rows", "12",
    ]  # fmt: skip
    quoted = TEXT.splitlines()[2].split("description: ")[1]
    for e in scalars:
        assert TEXT[e.start : e.end] == (e.value if e.plain else quoted), e
        assert TEXT.count("\n", 0, e.start) + 1 == e.line
    by_value = {e.value: e for e in scalars}
    assert by_value["fct_orders"].plain and not by_value["Orders, one row per 'order'"].plain
    assert resolve_plain(by_value["12"].value or "") == 12
    block, flow = (e for e in found if e.kind == "sequence-start")
    assert TEXT[block.start] == "-" and block.line == 2
    assert TEXT[flow.start] == "[" and flow.line == 4


def test_anchors_aliases_tags_and_documents_are_reported_not_refused() -> None:
    found = list(events("a: &x 1\nb: *x\nc: !!str 2\n---\nd: 3\n"))
    assert [e.anchor for e in found if e.kind == "scalar" and e.anchor] == ["x"]
    assert [e.anchor for e in found if e.kind == "alias"] == ["x"]
    assert [e.tag for e in found if e.tag] == ["tag:yaml.org,2002:str"]
    assert sum(e.kind == "document-start" for e in found) == 2


@pytest.mark.parametrize(
    ("text", "line"), [("a: [1, 2\nb: 3\n", 2), ("a: 'open\n", 2), ("a:\n  - x\n y: 1\n", 3)]
)
def test_broken_yaml_is_a_syntax_error_with_its_line(text: str, line: int) -> None:
    with pytest.raises(YamlSyntaxError) as raised:
        list(events(text))
    assert raised.value.line is not None and raised.value.line >= line - 1
    assert raised.value.message
