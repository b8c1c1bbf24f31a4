"""Inert Markdown, word diffs and excerpt marks: the page's text building blocks."""

from __future__ import annotations

import pytest

from evidence_tool.report.textdiff import highlight_excerpts, word_diff_html
from evidence_tool.unit.html import render_markdown_html


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<iframe src=http://127.0.0.1:9/></iframe>",
        "<style>*{}</style>",
        "<link rel=stylesheet href=http://127.0.0.1:9/x.css>",
        "a <b onclick=alert(1)>b</b>",
    ],
)
def test_raw_html_comes_out_escaped(markdown: str) -> None:
    html = render_markdown_html(markdown)
    raw = markdown[markdown.index("<") :]
    assert raw not in html and "&lt;" + raw[1:].split(">")[0] in html


@pytest.mark.parametrize(
    "link",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "jav&#x61;script:alert(1)",
        "java\tscript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "data:image/png;base64,AAAA",
        "file:///etc/passwd",
        "relative/page.html",
        "//127.0.0.1:9/x",
    ],
)
def test_only_http_and_mailto_links_become_anchors(link: str) -> None:
    for markdown in (f"[x]({link})", f"<{link}>"):
        assert "<a " not in render_markdown_html(markdown), markdown


def test_safe_links_are_kept_without_referrer() -> None:
    html = render_markdown_html("[doc](https://example.org/a?b=1) <mailto:x@example.org>")
    assert '<a href="https://example.org/a?b=1" rel="noopener noreferrer nofollow">doc</a>' in html
    assert 'href="mailto:x@example.org"' in html


def test_images_are_text_and_headings_nest() -> None:
    html = render_markdown_html("# Title\n\n![a *b*](http://127.0.0.1:9/p.png)", heading_offset=2)
    assert "<img" not in html and "[image: a b] http://127.0.0.1:9/p.png" in html
    assert html.startswith("<h3>Title</h3>")
    assert render_markdown_html("###### deep", heading_offset=5).startswith("<h6>")


def test_word_diff_marks_words_and_folds_unchanged_lines() -> None:
    old = "".join(f"line {i}\n" for i in range(30))
    new = old.replace("line 15\n", "line fifteen <b>\n")
    html = word_diff_html(old, new)
    assert "line <del>15</del><ins>fifteen &lt;b&gt;</ins>" in html
    assert "12 unchanged line(s)" in html and "line 12\n" in html and "line 11\n" not in html
    assert word_diff_html("a\n", "a\nb\n") == "a\n<ins>b\n</ins>"
    assert "line 0\n" in word_diff_html(old, new, context=None)


def test_excerpts_are_marked_merged_and_missing_ones_named() -> None:
    text = "alpha <beta> gamma delta"
    html, missing = highlight_excerpts(
        text, {"evidence:a": ["<beta> gamma", "absent"], "evidence:b": ["gamma delta"]}
    )
    assert missing == ["absent"]
    assert html == (
        'alpha <mark title="supports evidence:a, evidence:b">&lt;beta&gt; gamma delta</mark>'
    )
    html, _ = highlight_excerpts("x y x", {"evidence:a": ["x"]})
    assert html.count("<mark") == 2
