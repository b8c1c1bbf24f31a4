"""The documentation is tested like code.

Every fenced example in ``docs/*.md`` (future pages included) is checked by
its info string:

- ``yaml``: loaded strictly and validated against the schema its first line
  names (``# workspace.yaml``, ``# installation descriptor``); a block without
  a known header fails, so no YAML example goes unchecked;
- ``markdown`` starting with ``---``: parsed as a unit; valid and canonical,
  unless preceded by ``<!-- invalid: E1xx -->`` (exactly that code) or
  ``<!-- non-canonical -->`` (valid, not canonical);
- ``sh``: run with ``bash -euo pipefail`` in a fresh copy of
  ``fixtures/workspace``; exit 0 unless preceded by ``<!-- exit: N -->``;
  the blocks of ``quickstart.md`` run together, in order, in an empty folder;
- ``json``: parses; ``<!-- schema: cli/envelope -->`` validates it against
  ``schemas/cli/envelope.schema.json``;
- ``python`` in ``api.md``: run by a fresh interpreter in a fresh copy of
  ``fixtures/workspace`` (the current folder); exit 0.  Other pages' Python
  blocks need a service (an HTTP embedder) and are only shown.

``docs/errors.md`` must match ``evidence_tool.errors.CODES`` section by
section, and every registered ``tht`` command must have help and be
mentioned in the docs.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from cli_runner import subcommands
from markdown_it import MarkdownIt

from evidence_tool.cli.main import cli
from evidence_tool.errors import CODES, WARNINGS, DescriptorError
from evidence_tool.unit import parse_unit, render
from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import YamlProblem, load
from evidence_tool.workspace.descriptor import validate_descriptor

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
FIXTURE_WORKSPACE = REPO / "fixtures" / "workspace"
BIN = Path(sys.executable).parent

YAML_HEADERS: dict[str, str | None] = {
    "# workspace.yaml": "workspace.schema.json",
    "# installation descriptor": "installation.schema.json",
    "# local-manifest.yaml": None,  # derived files: must load, no schema of their own
    "# state.yaml": None,
    "# .pre-commit-config.yaml": None,  # run by tests/gitflow/test_precommit_hooks.py
}
# Which marker may precede which kind of block.
# legacy-example / converted: a legacy unit file and the v4 file it converts to, both
# checked by tests/migrate (a converted unit is also checked here as a valid unit).
MARKERS = {
    "converted": "markdown",
    "invalid": "markdown",
    "non-canonical": "markdown",
    "exit": "sh",
    "schema": "json",
    "legacy-example": "text",
}
MARKER_RE = re.compile(
    r"<!--\s*(invalid|non-canonical|exit|schema|legacy-example|converted)(?::\s*(\S+?))?\s*-->"
)
# Info strings that would smuggle an example past the checks above.
UNCHECKED_LANGUAGES = {"bash", "shell", "console", "shell-session", "zsh", "yml", "jsonc", "md"}
SECTION_CODE_RE = re.compile(r"^(E\d{3})\b")


@dataclass(frozen=True)
class Example:
    doc: str
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marker: str | None  # the marker's name, e.g. "invalid"
    value: str | None  # the marker's value, e.g. "E111"
    marker_line: str | None  # the raw comment line, when it is one
    section: str  # text of the nearest H2 above the block

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}"


def _examples() -> list[Example]:
    found: list[Example] = []
    for path in sorted(DOCS.glob("*.md")):
        source = path.read_text(encoding="utf-8")
        lines = source.split("\n")
        section = ""
        tokens = MarkdownIt("commonmark").parse(source)
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and tok.tag == "h2":
                section = tokens[i + 1].content
            if tok.type != "fence" or tok.map is None:
                continue
            prev = tok.map[0] - 1
            while prev >= 0 and not lines[prev].strip():
                prev -= 1
            before = lines[prev].strip() if prev >= 0 else ""
            match = MARKER_RE.fullmatch(before)
            found.append(
                Example(
                    doc=path.name,
                    line=tok.map[0] + 1,
                    lang=tok.info.split()[0] if tok.info.strip() else "",
                    text=tok.content,
                    marker=match.group(1) if match else None,
                    value=match.group(2) if match else None,
                    marker_line=before if before.startswith("<!--") else None,
                    section=section,
                )
            )
    return found


EXAMPLES = _examples()


def _of(lang: str) -> list[Example]:
    return [e for e in EXAMPLES if e.lang == lang]


def _ids(examples: list[Example]) -> list[str]:
    return [str(e) for e in examples]


UNITS = [e for e in _of("markdown") if e.text.startswith("---")]


def test_the_documented_pages_exist() -> None:
    for name in ("unit-format.md", "errors.md", "cli.md", QUICKSTART):
        assert (DOCS / name).is_file(), f"docs/{name} is missing"
    assert _of("yaml") and UNITS and _of("sh") and _of("json")


@pytest.mark.parametrize("ex", [e for e in EXAMPLES if e.marker_line], ids=str)
def test_markers_are_known_and_precede_their_kind_of_block(ex: Example) -> None:
    assert ex.marker is not None, f"{ex}: unknown marker comment {ex.marker_line!r}"
    assert MARKERS[ex.marker] == ex.lang, f"{ex}: <!-- {ex.marker} --> before a {ex.lang} block"
    if ex.marker == "invalid":
        assert ex.value and ex.value in CODES, f"{ex}: unknown code {ex.value!r}"
    if ex.marker == "exit":
        assert ex.value is not None and ex.value.isdigit(), f"{ex}: exit needs a number"


def test_no_example_uses_an_unchecked_language() -> None:
    bad = [f"{e} ({e.lang})" for e in EXAMPLES if e.lang in UNCHECKED_LANGUAGES]
    assert not bad, "use ```sh, ```yaml, ```markdown or ```json so the example is tested: " + (
        ", ".join(bad)
    )


@pytest.mark.parametrize("ex", _of("yaml"), ids=_ids(_of("yaml")))
def test_yaml_example_loads_and_matches_its_schema(ex: Example) -> None:
    header = ex.text.split("\n", 1)[0].rstrip()
    assert header in YAML_HEADERS, (
        f"{ex}: a YAML example must start with one of {sorted(YAML_HEADERS)}, got {header!r}"
    )
    try:
        doc = load(ex.text)
    except YamlProblem as exc:
        pytest.fail(f"{ex}: {exc.code} at line {exc.line}: {exc.message}")
    assert not doc.duplicates, f"{ex}: duplicate keys {[d.message for d in doc.duplicates]}"
    schema = YAML_HEADERS[header]
    if schema is not None:
        try:
            validate_descriptor(doc.value, schema, str(ex))
        except DescriptorError as exc:
            pytest.fail(str(exc))


@pytest.mark.parametrize("ex", UNITS, ids=_ids(UNITS))
def test_unit_example(ex: Example) -> None:
    result = parse_unit(ex.text)
    found = [f"{d.code} line {d.line}: {d.message}" for d in result.errors]
    if ex.marker == "invalid":
        codes = {d.code for d in result.errors}
        assert codes == {ex.value}, f"{ex}: expected exactly {ex.value}, got {found}"
        return
    assert result.unit is not None and not found, f"{ex}: the example unit is invalid: {found}"
    if ex.marker != "non-canonical":
        assert render(result.unit) == ex.text, (
            f"{ex}: the example is not in canonical form; write it as 'tht evidence fmt' "
            "would, or mark it <!-- non-canonical -->"
        )
    else:
        assert render(result.unit) != ex.text, f"{ex}: marked non-canonical but is canonical"


def _shell_env(tmp: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "THT_ACTOR": "docs",
        "TMPDIR": str(tmp),
    }
    env.pop("THT_INSTALLATION", None)
    return env


# The quickstart's blocks are one session from an empty folder: run together, below.
QUICKSTART = "quickstart.md"
SHELL = [e for e in _of("sh") if e.doc != QUICKSTART]


@pytest.mark.parametrize("ex", SHELL, ids=_ids(SHELL))
def test_shell_example_runs(ex: Example, tmp_path: Path) -> None:
    prompts = [line for line in ex.text.splitlines() if line.startswith("$ ")]
    assert not prompts, f"{ex}: write plain commands, without '$ ' prompts: {prompts}"
    assert "fixtures/workspace" not in ex.text, f"{ex}: refer to the workspace as '.'"
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE_WORKSPACE, ws, ignore=shutil.ignore_patterns(".evidence-cache"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", ex.text],
        cwd=ws,
        env=_shell_env(tmp),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    expected = int(ex.value) if ex.marker == "exit" and ex.value else 0
    report = f"\n--- script\n{ex.text}--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    assert proc.returncode == expected, f"{ex}: exit {proc.returncode}, expected {expected}{report}"
    # An error example under '## E108 — ...' must fail with that code, not another one.
    code = SECTION_CODE_RE.match(ex.section)
    if expected and code:
        assert code.group(1) in proc.stdout + proc.stderr, (
            f"{ex}: the example does not produce {code.group(1)}{report}"
        )


# docs/api.md is a host's code: each block runs in its own interpreter, as a host would.
API = "api.md"
PYTHON = [e for e in _of("python") if e.doc == API]


def test_the_api_page_has_its_examples() -> None:
    assert len(PYTHON) >= 5, [str(e) for e in PYTHON]


@pytest.mark.parametrize("ex", PYTHON, ids=_ids(PYTHON))
def test_python_example_runs(ex: Example, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE_WORKSPACE, ws, ignore=shutil.ignore_patterns(".evidence-cache"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", ex.text],
        cwd=ws,
        env=_shell_env(tmp),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = f"\n--- script\n{ex.text}--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, f"{ex}: exit {proc.returncode}{report}"


def test_readme_links_the_quickstart_first() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    docs_list = readme.split("\n## Documentation\n", 1)[1]
    first = next(line for line in docs_list.splitlines() if line.startswith("- "))
    assert f"(docs/{QUICKSTART})" in first, first


def _commands_in(script: str) -> list[str]:
    """The commands of a script: one per line and per '&&', heredoc bodies left out."""
    commands, heredoc = [], None
    for line in script.splitlines():
        if heredoc is not None:
            heredoc = None if line == heredoc else heredoc
            continue
        if match := re.search(r"<<'?(\w+)'?", line):
            heredoc = match.group(1)
        commands += [c.strip() for c in line.split("&&") if c.strip()]
    return commands


def test_quickstart_runs_from_nothing(tmp_path: Path) -> None:
    """docs/quickstart.md, every block in order, in an empty folder: a committed workspace."""
    blocks = [e for e in _of("sh") if e.doc == QUICKSTART]
    first_hour = [e for e in blocks if not e.section.startswith("Next")]
    assert len(blocks) == 5 and len(first_hour) == 4, [str(e) for e in blocks]
    assert len(_commands_in("".join(e.text for e in first_hour))) == 10, "the page promises ten"
    script = "".join(e.text for e in blocks)
    assert "$ " not in script and "fixtures/workspace" not in script
    start, home, tmp = tmp_path / "start", tmp_path / "home", tmp_path / "tmp"
    for folder in (start, home, tmp):
        folder.mkdir()
    env = {**_shell_env(tmp), "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    for role in ("AUTHOR", "COMMITTER"):
        env |= {f"GIT_{role}_NAME": "Docs", f"GIT_{role}_EMAIL": "docs@example.org"}
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=start,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = f"\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, report
    assert "evidence:example:cancelled-orders" in proc.stdout, "the search found nothing" + report
    assert "evidence tree clean" in proc.stdout, report
    ws = start / "shop-evidence"

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ws, env=env, capture_output=True, text=True, check=True
        ).stdout

    assert git("status", "--porcelain") == "", "everything is committed"
    assert len(git("log", "--oneline").splitlines()) == 2
    assert "evidence/curated/glossary/refund.md" in git("ls-files")


@pytest.mark.parametrize("ex", _of("json"), ids=_ids(_of("json")))
def test_json_example(ex: Example) -> None:
    try:
        value = json.loads(ex.text)
    except ValueError as exc:
        pytest.fail(f"{ex}: not JSON: {exc}")
    if ex.marker == "schema":
        import jsonschema

        schema = load_schema(f"{ex.value}.schema.json")
        validator = jsonschema.validators.validator_for(schema)(schema)
        problems = [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(value)
        ]
        assert not problems, f"{ex}: does not match schemas/{ex.value}.schema.json: {problems}"


# -- docs/errors.md ----------------------------------------------------------

SECTION_RE = re.compile(r"^## (E\d{3}) — (.+)$", re.MULTILINE)


def _error_sections() -> dict[str, list[tuple[str, str]]]:
    """code -> [(title, section text)] in document order; headings inside fences do not count."""
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    tokens = MarkdownIt("commonmark").parse(text)
    h2 = [
        (tok.map[0], tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open" and tok.tag == "h2" and tok.map
    ]
    sections: dict[str, list[tuple[str, str]]] = {}
    for n, (start, heading) in enumerate(h2):
        m = SECTION_RE.fullmatch(f"## {heading}")
        if m is None:
            continue
        end = h2[n + 1][0] if n + 1 < len(h2) else len(lines)
        body = "\n".join(lines[start + 1 : end])
        sections.setdefault(m.group(1), []).append((m.group(2), body))
    return sections


def test_errors_doc_has_exactly_one_section_per_code() -> None:
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    malformed = [
        line
        for line in text.splitlines()
        if re.match(r"^#+ *E\d", line) and not SECTION_RE.match(line)
    ]
    assert not malformed, f"write code headings as '## E101 — title': {malformed}"
    sections = _error_sections()
    assert sorted(sections) == sorted(CODES), (
        f"missing: {sorted(set(CODES) - set(sections))}, "
        f"not in CODES: {sorted(set(sections) - set(CODES))}"
    )
    repeated = sorted(code for code, found in sections.items() if len(found) != 1)
    assert not repeated, f"codes with more than one section: {repeated}"


@pytest.mark.parametrize("code", sorted(CODES))
def test_error_section_matches_the_code_table(code: str) -> None:
    info = CODES[code]
    found = _error_sections().get(code)
    assert found, f"docs/errors.md has no section for {code}"
    title, body = found[0]
    assert title == info.title, f"{code}: title {title!r}, CODES says {info.title!r}"
    assert f"**Exit code:** {info.exit_code}\n" in body, f"{code}: exit code {info.exit_code}"
    assert "**Cause.**" in body, f"{code}: say what causes it"
    assert info.fix in body, f"{code}: the section must give the tool's hint {info.fix!r}"


WARNING_RE = re.compile(r"^### (W\d{3}) — (.+)$", re.MULTILINE)


def _warning_sections() -> dict[str, list[tuple[str, str]]]:
    """code -> [(title, section text)] of the ``### W123 — title`` sections."""
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    tokens = MarkdownIt("commonmark").parse(text)
    heads = [
        (tok.map[0], tok.tag, tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open" and tok.tag in ("h2", "h3") and tok.map
    ]
    sections: dict[str, list[tuple[str, str]]] = {}
    for n, (start, tag, heading) in enumerate(heads):
        m = WARNING_RE.fullmatch(f"### {heading}") if tag == "h3" else None
        if m is None:
            continue
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        sections.setdefault(m.group(1), []).append((m.group(2), "\n".join(lines[start + 1 : end])))
    return sections


def _emitted_warning_codes() -> set[str]:
    """Every ``"W123"`` string in the library's source: the codes it can emit."""
    found = set()
    for path in (REPO / "evidence_tool").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and re.fullmatch(r"W\d{3}", node.value):
                found.add(node.value)
    return found


def test_every_emitted_warning_code_is_in_the_table_and_documented() -> None:
    emitted = _emitted_warning_codes()
    assert len(emitted) >= 15, emitted  # the scan really found the codes
    assert emitted == set(WARNINGS), (
        f"emitted but not in WARNINGS: {sorted(emitted - set(WARNINGS))}, "
        f"in WARNINGS but never emitted: {sorted(set(WARNINGS) - emitted)}"
    )
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    malformed = [
        line
        for line in text.splitlines()
        if re.match(r"^#+ *W\d", line) and not WARNING_RE.match(line)
    ]
    assert not malformed, f"write warning headings as '### W123 — title': {malformed}"
    sections = _warning_sections()
    assert sorted(sections) == sorted(WARNINGS)
    assert not [c for c, found in sections.items() if len(found) != 1]


@pytest.mark.parametrize("code", sorted(WARNINGS))
def test_warning_section_matches_the_table(code: str) -> None:
    info = WARNINGS[code]
    [(title, body)] = _warning_sections()[code]
    assert title == info.title, f"{code}: title {title!r}, WARNINGS says {info.title!r}"
    assert "**Cause.**" in body, f"{code}: say what causes it"
    assert "**Exit code:**" not in body, f"{code}: a warning never changes the exit code"


def test_errors_doc_has_the_exit_code_table() -> None:
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| (\d+) \|", text, re.MULTILINE))
    wanted = {str(n) for n in range(8)} | {str(i.exit_code) for i in CODES.values()}
    assert wanted <= rows, f"exit codes missing from the table: {sorted(wanted - rows)}"


# -- commands ------------------------------------------------------------------


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, cmd in sorted(subcommands(group).items()):
        yield (*path, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))


COMMANDS = list(_commands(cli))


def _command(path: tuple[str, ...]) -> click.Command:
    cmd: click.Command = cli
    for name in path:
        assert isinstance(cmd, click.Group)
        cmd = subcommands(cmd)[name]
    return cmd


def _all_docs() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))


def test_commands_are_found() -> None:
    assert ("evidence", "validate") in COMMANDS
    assert ("workspace", "evidence", "validate") in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_command_has_help(path: tuple[str, ...]) -> None:
    cmd = _command(path)
    assert cmd.help and cmd.help.strip(), f"'tht {' '.join(path)}' has no help text"


# Known gaps, reported as bugs: remove an entry once its options have help (strict xfail).
OPTIONS_WITHOUT_HELP = {}


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            marks=pytest.mark.xfail(
                strict=True,
                reason=f"BUG: 'tht {' '.join(p)}': no help for {OPTIONS_WITHOUT_HELP[p]}",
            ),
        )
        if p in OPTIONS_WITHOUT_HELP
        else p
        for p in COMMANDS
    ],
    ids=[" ".join(p) for p in COMMANDS],
)
def test_command_options_have_help(path: tuple[str, ...]) -> None:
    cmd = _command(path)
    for param in cmd.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert param.help, f"'tht {' '.join(path)}' option {param.opts} has no help"


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_command_is_documented(path: tuple[str, ...]) -> None:
    # 'tht', any global options ('--installation FILE'), then the command path.
    pattern = re.compile(
        r"\btht(?:\s+--?[A-Za-z][\w-]*(?:[ =](?!-)[^\s`]+)?)*\s+"
        + r"\s+".join(map(re.escape, path))
        + r"(?![\w-])"
    )
    assert pattern.search(_all_docs()), (
        f"'tht {' '.join(path)}' is not mentioned in docs/ (cli.md, archive.md, ...)"
    )


def test_readme_lists_every_docs_page() -> None:
    """A new user finds the docs from README's list: every page of docs/ is on it."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- \[docs/([\w.-]+\.md)\]\(docs/\1\)", readme, re.M))
    pages = {p.name for p in (REPO / "docs").glob("*.md")}
    assert len(pages) >= 11
    assert pages - listed == set(), f"docs pages missing from README's list: {pages - listed}"
