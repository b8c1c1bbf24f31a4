"""The page's inline CSS and its one script (the filters), and the Content-Security-Policy.

The script never builds HTML: it reads each unit card's data attributes once
and then only toggles ``hidden``, so filtering 10,000 cards is one pass over
an array.  The search box is debounced; card text is read lazily, on the
first search.
"""

from __future__ import annotations


def content_security_policy(nonce: str) -> str:
    """Nothing loads, nothing but the page's own nonce'd script runs."""
    return (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src 'nonce-{nonce}'; img-src 'none'; base-uri 'none'; form-action 'none'"
    )


CSS = """
:root { --fg: #1d232a; --muted: #5b6570; --line: #d5dbe1; --bg: #f6f8fa; --warn: #fff4d6;
  --bad: #ffe3e3; --ok: #e3f6e8; --accent: #1f5fa8; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
header.page { padding: 1rem 2rem; background: var(--bg); border-bottom: 1px solid var(--line); }
header.page h1 { margin: 0 0 .25rem; font-size: 1.4rem; }
nav.sections a { margin-right: 1rem; color: var(--accent); }
main { padding: 0 2rem 4rem; max-width: 90rem; }
section.part { margin-top: 2rem; }
h2 { border-bottom: 2px solid var(--line); padding-bottom: .2rem; }
code, pre, kbd { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .9em; }
pre { background: var(--bg); border: 1px solid var(--line); padding: .6rem; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--bg); }
.muted { color: var(--muted); }
.note { background: var(--bg); border-left: 4px solid var(--line); padding: .4rem .8rem; }
.warning { background: var(--warn); border-left: 4px solid #d9a400; padding: .4rem .8rem; }
.problem { background: var(--bad); border-left: 4px solid #c62828; padding: .4rem .8rem; }
.badge { display: inline-block; border: 1px solid var(--line); border-radius: .8rem;
  padding: 0 .5rem; margin-right: .25rem; font-size: .8rem; background: #fff; }
.badge.added, .badge.new { background: var(--ok); }
.badge.modified, .badge.changed { background: var(--warn); }
.badge.deleted, .badge.error, .badge.review, .badge.retired { background: var(--bad); }
.catalog-status { font-weight: 600; }
.catalog-status.findings { color: #a00; }
.catalog-status.not-checked { color: #666; }
form.filters { position: sticky; top: 0; z-index: 2; background: #fff; padding: .6rem 0;
  border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
form.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
form.filters input[type=search] { min-width: 16rem; }
article.unit { border: 1px solid var(--line); border-radius: .4rem; margin: .8rem 0; padding: .6rem 1rem;
  content-visibility: auto; contain-intrinsic-size: auto 22rem; }
@media print { article.unit { content-visibility: visible; } form.filters { position: static; } }
article.unit > header code { font-size: .85rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: .4rem 0; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; }
.unit-grid { display: grid; grid-template-columns: minmax(16rem, 2fr) 3fr; gap: 1.2rem; }
.unit-grid > * { min-width: 0; }
.comparison .md { border-top: 1px dashed var(--line); margin-top: .4rem; }
.unit .md > :first-child { margin-top: .2rem; }
.md h3 { font-size: 1.15rem; } .md h4 { font-size: 1.02rem; } .md h5, .md h6 { font-size: .95rem; }
.image-ref { color: var(--muted); font-style: italic; }
ins { background: #c9f0d3; text-decoration: none; }
del { background: #ffd0d0; }
mark { background: #ffe866; }
.fold { color: var(--muted); font-style: italic; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.side > div { border: 1px solid var(--line); border-radius: .4rem; padding: .4rem .8rem; min-width: 0; }
.side h4 { margin: .2rem 0; }
.comparison { border: 2px solid var(--line); border-radius: .5rem; padding: .5rem 1rem; margin: 1rem 0; }
"""

SCRIPT = """
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var counter = document.getElementById("shown");
  if (!form) { return; }
  var cards = document.querySelectorAll("#unit-list > article.unit");
  var index = [];
  for (var i = 0; i < cards.length; i++) {
    var d = cards[i].dataset;
    index.push({
      el: cards[i], kind: d.kind, language: d.language,
      purposes: d.purposes.split(" "), tables: JSON.parse(d.tables),
      provenance: d.provenance, status: d.status.split(" "), text: null
    });
  }
  function value(name) { return form.elements[name].value; }
  function apply() {
    var kind = value("kind"), language = value("language"), purpose = value("purpose");
    var table = value("table"), provenance = value("provenance"), status = value("status");
    var query = value("q").trim().toLowerCase();
    var terms = query ? query.split(/\\s+/) : [];
    var shown = 0;
    for (var i = 0; i < index.length; i++) {
      var u = index[i];
      var ok = (!kind || u.kind === kind) &&
        (!language || u.language === language || u.language.indexOf(language + "-") === 0) &&
        (!purpose || u.purposes.indexOf(purpose) !== -1) &&
        (!table || u.tables.indexOf(table) !== -1) &&
        (!provenance || u.provenance === provenance) &&
        (!status || u.status.indexOf(status) !== -1);
      if (ok && terms.length) {
        if (u.text === null) { u.text = u.el.textContent.toLowerCase(); }
        for (var t = 0; t < terms.length && ok; t++) { ok = u.text.indexOf(terms[t]) !== -1; }
      }
      if (u.el.hidden === ok) { u.el.hidden = !ok; }
      if (ok) { shown++; }
    }
    counter.textContent = shown + " of " + index.length + " units shown";
    form.dataset.applied = String((+form.dataset.applied || 0) + 1);
  }
  var timer = null;
  form.addEventListener("change", function (event) {
    if (event.target.name !== "q") { apply(); }
  });
  form.elements.q.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(apply, 200);
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); apply(); });
  form.addEventListener("reset", function () { setTimeout(apply, 0); });
  apply();
})();
"""
