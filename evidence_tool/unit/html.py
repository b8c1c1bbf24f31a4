"""Markdown as inert HTML, for pages that show units (the review page).

Unit text is untrusted: raw HTML is never passed through (markdown-it's
``html`` option is off, so it comes out escaped), links keep only
``http``/``https``/``mailto`` targets (anything else stays literal text), and
images are written as text, so rendering a unit can neither run a script nor
load anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

# Checked after markdown-it decoded entities and percent-encoded the URL.
_SAFE_LINK = re.compile(r"^(https?://|mailto:)", re.IGNORECASE)


def _safe_link(url: str) -> bool:
    return bool(_SAFE_LINK.match(url.strip()))


def _image_as_text(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # An <img> would fetch its src (CSP aside); show what it points at instead.
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    src = token.attrGet("src") or ""
    return f'<span class="image-ref">[image: {escape(alt)}] {escape(str(src))}</span>'


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return str(self.renderToken(tokens, idx, options, env))


def _shift_headings(offset: int) -> Any:
    def rule(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        level = min(6, int(token.tag[1]) + offset)
        token.tag = f"h{level}"
        return str(self.renderToken(tokens, idx, options, env))

    return rule


@lru_cache(maxsize=8)
def _markdown(heading_offset: int) -> MarkdownIt:
    # GFM tables on (issue 34): CommonMark alone shows a unit's table as one paragraph of
    # pipes.  Cells are inline Markdown like any other text, so they stay as inert.
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.add_render_rule("image", _image_as_text)
    md.add_render_rule("link_open", _link_open)
    if heading_offset:
        shift = _shift_headings(heading_offset)
        md.add_render_rule("heading_open", shift)
        md.add_render_rule("heading_close", shift)
    return md


def render_markdown_html(text: str, *, heading_offset: int = 0) -> str:
    """CommonMark ``text`` (with GFM tables) as HTML with no raw HTML, no unsafe link and
    no image.

    ``heading_offset`` demotes headings (``# T`` becomes ``<h3>`` with 2) so a
    unit's title nests under the page's own headings.
    """
    # markdown-it types render() as Any; its HTML renderer returns the page as a str.
    html: str = _markdown(max(0, min(5, heading_offset))).render(text)
    return html
