"""Units are untrusted text: nothing in them may run or load anything on the review page.

Hostile Markdown sits in a curated unit, in a source draft (so in a proposed
unit and in the highlighted source text), in an error message and in a file
name.  The page must show it as text: no dialog, no console error (a CSP
violation is one), no ``window.__pwned``, no request but the file itself.
A control page proves the probe notices each of those when they do happen.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from report_helpers import copy_fixture, ok, tht

PAYLOAD = """\
<script>window.__pwned = 1; alert(1)</script>

[x](javascript:window.__pwned=2) [y](JaVa&#x73;cript:alert(1)) [z](data:text/html,<script>alert(1)</script>)
[v](vbscript:msgbox(1)) <javascript:alert(1)>

<img src=x onerror="window.__pwned = 3; alert(1)">

<iframe src="http://127.0.0.1:9/frame"></iframe>

<style>body { background: url(http://127.0.0.1:9/bg.png) }</style>

<link rel=stylesheet href=http://127.0.0.1:9/x.css>

![](http://127.0.0.1:9/p.png) ![pic](data:image/png;base64,iVBORw0KGgo=)

<svg onload="window.__pwned = 4"></svg> <a href="javascript:alert(1)">raw link</a>

<meta http-equiv="refresh" content="0; url=http://127.0.0.1:9/">
"""


def _unit(uid: str, title: str) -> str:
    return (
        "---\nschema_version: 4\n"
        f"id: {uid}\nkind: domain\nlanguage: en\npurposes: [sql_generation]\n"
        "applies_to:\n"
        '  concepts: ["<img src=x onerror=alert(1)>", "\\"><script>window.__pwned=5</script>"]\n'
        "---\n\n"
        f"# {title} <script>window.__pwned = 6</script>\n\n## Rule\n\n{PAYLOAD}"
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = copy_fixture(tmp_path_factory.mktemp("hostile") / "ws")
    curated = ws / "evidence/curated/domain"
    (curated / "hostile.md").write_text(_unit("evidence:hostile", "Hostile"), encoding="utf-8")
    draft = "# A draft <script>window.__pwned = 7</script>\n\n" + PAYLOAD + "\n"
    draft += _unit("evidence:hostile-draft", "Hostile draft")
    (ws / "evidence/incoming/hostile.md").write_text(draft, encoding="utf-8")
    result = ok(tht(ws, "refresh"))
    assert any(s["locator"].endswith("incoming/hostile.md") for s in result["sources"])
    # Findings that echo hostile text: an unknown key, and a file name with markup.
    (curated / "bad.md").write_text(
        _unit("evidence:bad", "Bad").replace(
            "kind: domain\n", 'kind: domain\n"<script>window.__pwned=8</script>": 1\n'
        ),
        encoding="utf-8",
    )
    (curated / "<img src=x onerror=alert(9)>.md").write_text(
        _unit("evidence:named", "Named"), encoding="utf-8"
    )
    return Path(ok(tht(ws, "report"))["path"])


def test_the_probe_sees_scripts_dialogs_and_requests(probe: Any) -> None:
    """Control: without the report's protections every channel fires."""
    page = probe.page
    page.set_content(
        "<script>window.__pwned = 1</script><img src='http://127.0.0.1:9/p.png'>"
        "<script>console.error('boom'); alert('hi')</script>"
    )
    assert page.evaluate("() => window.__pwned") == 1
    assert probe.dialogs == ["hi"]
    assert "boom" in probe.console_errors
    assert "http://127.0.0.1:9/p.png" in probe.requests


def test_hostile_units_neither_run_nor_load_anything(probe: Any, hostile: Path) -> None:
    page = probe.page
    page.goto(hostile.as_uri())
    for link in page.locator("a[href]").all():  # every link the page offers is inert or http(s)
        href = link.get_attribute("href") or ""
        assert re.match(r"^(#|https?://|mailto:)", href), href
    page.locator("details").evaluate_all("els => els.forEach(d => d.open = true)")
    page.mouse.wheel(0, 200000)  # render every card (content-visibility) and every image
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pwned") is None
    assert probe.dialogs == []
    assert probe.page_errors == []
    assert probe.console_errors == []  # a CSP violation would be reported here
    assert probe.requests == [hostile.as_uri()]
    counts = page.evaluate(
        """() => ({
        scripts: document.scripts.length,
        nonced: document.querySelectorAll('script[nonce]').length,
        styles: document.querySelectorAll('style').length,
        loaders: document.querySelectorAll('img, iframe, link, svg, object, embed, video, audio, source, base, form[action]').length,
        handlers: [...document.querySelectorAll('*')].filter(
            e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
        refresh: document.querySelectorAll('meta[http-equiv=refresh]').length,
    })"""
    )
    assert counts == {
        "scripts": 1,
        "nonced": 1,
        "styles": 1,
        "loaders": 0,
        "handlers": 0,
        "refresh": 0,
    }
    # The hostile text is shown, as text, where a reviewer needs to see it.
    card = page.locator("[id='unit-evidence:hostile']").text_content()
    assert "<script>window.__pwned = 1; alert(1)</script>" in card
    assert "[x](javascript:window.__pwned=2)" in card
    assert "[image: ] http://127.0.0.1:9/p.png" in card
    errors = page.locator("#errors").text_content()
    assert '"<script>window.__pwned=8</script>"' in errors or "window.__pwned=8" in errors
    assert "<img src=x onerror=alert(9)>.md" in errors
    source = page.locator("article.comparison pre.source-text").all_text_contents()
    assert any('<iframe src="http://127.0.0.1:9/frame"></iframe>' in s for s in source)


def test_the_page_declares_a_strict_policy_with_a_fresh_nonce(hostile: Path) -> None:
    html = hostile.read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    directives = dict(d.strip().split(" ", 1) for d in policy.group(1).split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["img-src"] == "'none'"
    assert directives["style-src"] == "'unsafe-inline'"
    nonce = re.fullmatch(r"'nonce-([A-Za-z0-9_-]{20,})'", directives["script-src"])
    assert nonce is not None
    assert html.count("<script") == 1 and f'<script nonce="{nonce.group(1)}">' in html
    # The policy comes before anything a unit contributed.
    assert html.index("Content-Security-Policy") < html.index("evidence:hostile")
    # Each report draws its own nonce.
    ws = hostile.parent.parent
    again = Path(ok(tht(ws, "report", "--html", str(ws / "again.html")))["path"])
    assert nonce.group(1) not in again.read_text(encoding="utf-8")
