"""Every example of the manual runs: each fenced block of README.md and docs/*.md is run, or checked against what
it shows, so the docs cannot drift from what mpigen does. docs/development.md ("The docs are tested") says what
each kind of block must hold, and the HTML comments that say what a block needs; a block the test does not know
how to run fails until it is marked `<!-- not run: why -->`. Sessions run in-process through the command line
(click's runner) in a copy of profiles/ and charts/; only `helm template` is a process of its own."""

from __future__ import annotations

import functools
import re
import shlex
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from conftest import CHARTS, REPO, current_folder, run_helm
from ruamel.yaml import YAML

from mpigen import __version__
from mpigen.commands.cli import main as mpigen_command  # the one place that names the command line's module
from mpigen.commands.pipeline import compile_profiles  # the one place that names the pipeline's module

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w-]*)\s*$")
MARK = re.compile(r"^<!--\s*(.*?)\s*-->$")
EDIT = re.compile(r"^edit (\S+): `(.*)` -> `(.*)`$")
WILD = "..."
SHELLS = ("sh", "bash", "shell", "console")
KIND_FOLDERS = {"Hardware": "hardware", "Cluster": "clusters", "Job": "jobs"}
# Paths of the repository named in backquotes must exist.
REPO_PATH = re.compile(r"(?:profiles|charts|schemas|scripts|docs|generator|tests)/[\w.-][\w./-]*")
BOOKKEEPING = ".mpigen-"
"""What a render keeps in an output folder (`.mpigen-owned`, `.mpigen-cache/`, `.mpigen-staging`): named by the
docs, made by mpigen, not all of it in the repository."""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    """1-based line of the opening fence."""
    lang: str
    text: str
    marks: tuple[str, ...]
    """The HTML comments on the lines right above the fence, in order."""

    @property
    def where(self) -> str:
        page = self.page.relative_to(REPO) if self.page.is_relative_to(REPO) else self.page
        return f"{page.as_posix()}:{self.line}"

    def mark(self, prefix: str) -> str | None:
        found = [m[len(prefix):].strip() for m in self.marks if m.startswith(prefix)]
        assert len(found) <= 1, f"{self.where}: more than one `{prefix}` mark"
        return found[0] if found else None

    @property
    def edits(self) -> list[tuple[str, str, str]]:
        found = []
        for mark in self.marks:
            if mark.startswith("edit "):
                parsed = EDIT.match(mark)
                assert parsed, f"{self.where}: write an edit as <!-- edit PATH: `OLD` -> `NEW` -->, not {mark!r}"
                path, old, new = parsed.groups()
                found.append((path, old.replace("\\n", "\n"), new.replace("\\n", "\n")))
        return found


def blocks_of(page: Path) -> Iterator[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        fence, lang = opened.groups()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence), None)
        assert end is not None, f"{page}:{i + 1}: a fence that is never closed"
        marks = []
        k = i - 1
        while k >= 0 and MARK.match(lines[k]):
            marks.insert(0, MARK.match(lines[k]).group(1))
            k -= 1
        yield Block(page, i + 1, lang, "\n".join(lines[i + 1:end]) + "\n", tuple(marks))
        i = end + 1


BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def _yaml(typ: str = "safe") -> YAML:
    return YAML(typ=typ, pure=True)


def _load(text: str) -> Any:
    return _yaml().load(text)


# --- what a session prints ---------------------------------------------------------------------------

def _line_fits(expected: str, actual: str) -> bool:
    if WILD not in expected:
        return expected == actual
    return re.fullmatch(".*".join(map(re.escape, expected.split(WILD))), actual) is not None


def output_fits(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` is what `expected` shows: a line `...` stands for any lines (none too), `...` within a line
    for any text; every other line as it is."""

    @functools.cache
    def fits(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i].strip() == WILD:
            return fits(i + 1, j) or (j < len(actual) and fits(i, j + 1))
        return j < len(actual) and _line_fits(expected[i], actual[j]) and fits(i + 1, j + 1)

    return fits(0, 0)


def sessions(block: Block) -> Iterator[tuple[str, list[str]]]:
    """Each `$ command` of the block with the lines it shows."""
    command, shown = None, []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            if command is not None:
                yield command, shown
            command, shown = line[2:], []
        else:
            assert command is not None, f"{block.where}: output before the first `$ command`"
            shown.append(line.rstrip())
    assert command is not None
    yield command, shown


# --- the copy of the example fleet the examples run in -----------------------------------------------

def fleet_copy(profiles_copy: Callable[..., Path], charts: bool = False) -> Path:
    """The folder holding a copy of profiles/ (and of charts/), as the repository holds them."""
    root = profiles_copy().parent
    if charts:
        shutil.copytree(CHARTS, root / "charts", ignore=shutil.ignore_patterns(".mpigen-cache"))
    return root


def apply_edits(block: Block, root: Path) -> None:
    for path, old, new in block.edits:
        target = root / path
        text = target.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{block.where}: `{old}` is not in {path} exactly once"
        target.write_text(text.replace(old, new), encoding="utf-8")


def assert_compiles_cleanly(block: Block, profiles: Path) -> None:
    result = compile_profiles([profiles])
    assert not result.diagnostics, f"{block.where}: " + "\n".join(d.format() for d in result.diagnostics)
    assert result.charts


def run_mpigen_here(args: list[str], **kwargs: Any) -> tuple[int, str]:
    result = CliRunner().invoke(mpigen_command, args, prog_name="mpigen", catch_exceptions=False, **kwargs)
    return result.exit_code, result.output


# --- each kind of block --------------------------------------------------------------------------------

def run_session(block: Block, profiles_copy: Callable[..., Path], request: pytest.FixtureRequest) -> None:
    root = fleet_copy(profiles_copy, charts=True)
    apply_edits(block, root)
    for command, shown in sessions(block):
        argv = shlex.split(command)
        with current_folder(root):
            if argv[0] == "mpigen":
                _, output = run_mpigen_here(argv[1:])
            elif argv[:2] == ["helm", "template"]:
                output = run_helm(request.getfixturevalue("helm4"), *argv[1:]).stdout
            else:
                pytest.fail(f"{block.where}: the test runs `mpigen` and `helm template` sessions, not `{command}`")
        printed = [line.rstrip() for line in output.replace(f"{root}/", "").splitlines()]
        assert output_fits(shown, printed), (f"{block.where}: `{command}` printed\n" + "\n".join(printed)
                                             + "\n\nwhere the docs show\n" + "\n".join(shown))


def check_profile(block: Block, profiles_copy: Callable[..., Path]) -> None:
    """A whole profile joins the example fleet, in place of the profile of its kind and name if there is one."""
    profile = _load(block.text)
    profiles = profiles_copy()
    same = [p for p in profiles.rglob("*.yaml")
            if (lambda d: isinstance(d, dict) and (d.get("kind"), d.get("name")) == (profile["kind"], profile["name"]))(
                _load(p.read_text(encoding="utf-8")))]
    target = same[0] if same else profiles / KIND_FOLDERS[profile["kind"]] / f"{profile['name']}.yaml"
    target.write_text(block.text, encoding="utf-8")
    assert_compiles_cleanly(block, profiles)


def check_laid_over(block: Block, path: str, profiles_copy: Callable[..., Path]) -> None:
    """The block's top-level keys replace those of a profile of the example fleet, which must still compile."""
    root = fleet_copy(profiles_copy)
    target = root / path
    yaml = _yaml("rt")
    profile = yaml.load(target.read_text(encoding="utf-8"))
    profile.update(yaml.load(block.text))
    with target.open("w", encoding="utf-8") as out:
        yaml.dump(profile, out)
    assert_compiles_cleanly(block, root / "profiles")


def _nodes(tree: Any) -> Iterator[Any]:
    yield tree
    children = tree.values() if isinstance(tree, dict) else tree if isinstance(tree, list) else ()
    for child in children:
        yield from _nodes(child)


def contains(whole: Any, part: Any) -> bool:
    """Whether `part` is `whole` with keys of mappings and items of lists left out (the items kept in order)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and contains(whole[k], v) for k, v in part.items())
    if isinstance(part, list):
        if not isinstance(whole, list):
            return False
        items = iter(whole)
        return all(any(contains(item, wanted) for item in items) for wanted in part)
    return whole == part


def check_part_of(block: Block, path: str) -> None:
    part = _load(block.text)
    documents = [d for d in _yaml().load_all((REPO / path).read_text(encoding="utf-8")) if d is not None]
    assert any(contains(node, part) for document in documents for node in _nodes(document)), (
        f"{block.where}: the block is not part of {path}")


def check_listing(block: Block, path: str) -> None:
    listed = {line.split()[0] for line in block.text.splitlines() if line.strip() and not line[0].isspace()}
    folder = REPO / path
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert listed == present, f"{block.where}: listed but absent {sorted(listed - present)}, " \
                              f"present but not listed {sorted(present - listed)}"


def _make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):(?!=)", text, re.MULTILINE))


def parse_command(words: list[str], where: str, scratch: Path) -> None:
    """`mpigen ...` as the command line parses it, without running it: the command, its options and their choices
    exist. Every word that could name a file is made a folder first, where the example's own folders stand."""
    words = words[:next((i for i, w in enumerate(words) if w in (">", ">>", "|", "&&", ";")), len(words))]
    assert words, f"{where}: `mpigen` alone"
    command = mpigen_command.get_command(None, words[0])  # type: ignore[attr-defined]
    assert command is not None, f"{where}: mpigen has no command `{words[0]}`"
    for word in words[1:]:
        if not word.startswith("-"):
            (scratch / word).mkdir(parents=True, exist_ok=True)
    with current_folder(scratch):
        try:
            command.make_context(words[0], list(words[1:]), parent=click.Context(mpigen_command, info_name="mpigen"))
        except click.ClickException as error:
            pytest.fail(f"{where}: `mpigen {' '.join(words)}`: {error.format_message()}")


COMPLETION = re.compile(r'^(?:eval "\$\()?_MPIGEN_COMPLETE=(\w+)_source mpigen(?:\)"| \| source)$')


def check_commands(block: Block, scratch: Path) -> None:
    text = block.text.replace("\\\n", " ")
    for line in text.splitlines():
        command = line.split("  #")[0].strip()  # two spaces before a comment, as the examples write them
        if not command or command.startswith("#"):
            continue
        completion = COMPLETION.match(command)
        if completion:
            code, output = run_mpigen_here([], env={"_MPIGEN_COMPLETE": f"{completion.group(1)}_source"})
            assert code == 0 and "_MPIGEN_COMPLETE" in output, f"{block.where}: no {completion.group(1)} completion"
            continue
        words = shlex.split(command, comments=True)
        if words[0] == "make":
            missing = {w for w in words[1:] if "=" not in w} - _make_targets()
            assert not missing, f"{block.where}: the Makefile has no target {sorted(missing)}"
        elif words[0] in ("mpigen", ".venv/bin/mpigen"):
            parse_command(words[1:], block.where, scratch)
        else:
            pytest.fail(f"{block.where}: the test does not know how to run `{command}`: mark the block "
                        "<!-- not run: why -->")


def check_workflow(block: Block, workflow: dict, scratch: Path) -> None:
    """A CI workflow: every step is an action or a command the test knows (pip installing this project, mpigen)."""
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    assert steps
    for step in steps:
        if "uses" in step:
            continue
        words = shlex.split(step["run"], comments=True)
        if words[:2] == ["pip", "install"]:
            assert (REPO / words[2] / "pyproject.toml").is_file(), f"{block.where}: `{step['run']}`"
        else:
            assert words[0] == "mpigen", f"{block.where}: the test does not know how to run `{step['run']}`"
            parse_command(words[1:], block.where, scratch)


def check_pre_commit(block: Block, config: dict) -> None:
    """The team's pre-commit config: hooks the repository ships, pinned to this release."""
    shipped = {hook["id"] for hook in _load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    for repo in config["repos"]:
        assert repo["rev"] == f"v{__version__}", f"{block.where}: the pin is not this release, v{__version__}"
        named = {hook["id"] for hook in repo["hooks"]}
        assert named and named <= shipped, f"{block.where}: no such hook {sorted(named - shipped)}"


def kind_of(block: Block) -> str:
    """What the test does with a block: from its mark, else from what it holds."""
    for mark in block.marks:
        assert re.match(r"(not run: \S|edit |laid over \S|part of \S|files of \S)", mark), (
            f"{block.where}: unknown mark <!-- {mark} -->")
    if block.mark("not run:") is not None:
        return "not run"
    for mark in ("files of", "part of", "laid over"):
        if block.mark(mark) is not None:
            return mark
    if block.text.startswith("$ "):
        return "session"
    if block.lang in ("yaml", "yml"):
        loaded = _load(block.text)
        if isinstance(loaded, dict) and str(loaded.get("apiVersion", "")).startswith("mpigen/"):
            return "profile"
        if isinstance(loaded, dict) and {"on", "jobs"} <= loaded.keys():
            return "workflow"
        if isinstance(loaded, dict) and "repos" in loaded:
            return "pre-commit"
    if block.lang in SHELLS:
        return "commands"
    return "unknown"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_the_example_is_what_mpigen_does(block: Block, tmp_path: Path, profiles_copy: Callable[..., Path],
                                         request: pytest.FixtureRequest) -> None:
    kind = kind_of(block)
    assert kind != "unknown", (f"{block.where}: the test does not know how to run this block; mark what it needs "
                               "(docs/development.md, \"The docs are tested\"), or <!-- not run: why -->")
    assert not block.edits or kind == "session", f"{block.where}: edits apply to `$ ...` sessions only"
    if kind == "not run":
        assert len(block.marks) == 1, f"{block.where}: a block that is not run needs no other mark"
    elif kind == "session":
        run_session(block, profiles_copy, request)
    elif kind == "profile":
        check_profile(block, profiles_copy)
    elif kind == "laid over":
        check_laid_over(block, block.mark("laid over"), profiles_copy)
    elif kind == "part of":
        check_part_of(block, block.mark("part of"))
    elif kind == "files of":
        check_listing(block, block.mark("files of"))
    elif kind == "commands":
        check_commands(block, tmp_path)
    elif kind == "workflow":
        check_workflow(block, _load(block.text), tmp_path)
    else:
        check_pre_commit(block, _load(block.text))


# --- the pages as a whole -----------------------------------------------------------------------------

def prose(page: Path) -> str:
    """The page without its fenced blocks."""
    lines, out, fence = page.read_text(encoding="utf-8").splitlines(), [], None
    for line in lines:
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            out.append(line)
    return "\n".join(out)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of the page's headings: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", prose(page), re.MULTILINE):
        found.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return found


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for target in LINK.findall(re.sub(r"`[^`\n]*`", "", prose(page))):  # a code span holds no link
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and (linked.suffix != ".md" or anchor not in anchors(linked))):
            broken.append(target)
    assert not broken, f"{page.relative_to(REPO)}: broken links {broken}"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_path_named_in_backquotes_exists(page: Path) -> None:
    named = {span for span in re.findall(r"`([^`\n]+)`", prose(page)) if REPO_PATH.fullmatch(span)}
    missing = sorted(p for p in named if not (REPO / p).exists() and not Path(p).name.startswith(BOOKKEEPING))
    assert not missing, f"{page.relative_to(REPO)}: no such path {missing}"


def test_the_readme_links_every_page_of_the_docs() -> None:
    linked = {(REPO / target.partition("#")[0]).resolve() for target in LINK.findall(prose(REPO / "README.md"))}
    unlinked = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert not unlinked, f"README.md does not link {unlinked}"


def test_a_block_the_test_cannot_run_fails_until_it_is_marked(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n```sh\nkubectl apply -f x\n```\n\n<!-- not run: talks to a cluster -->\n```sh\n"
                    "kubectl apply -f x\n```\n\n```\nsome picture\n```\n", encoding="utf-8")
    unmarked, marked, bare = blocks_of(page)
    with pytest.raises(pytest.fail.Exception, match="does not know how to run `kubectl apply -f x`"):
        check_commands(unmarked, tmp_path)
    assert (kind_of(marked), kind_of(bare)) == ("not run", "unknown")


def test_output_fits_only_what_the_docs_show() -> None:
    shown = ["a", "...", "c ... e", "..."]
    assert output_fits(shown, ["a", "b", "c d e", "f"])
    assert output_fits(shown, ["a", "c  e"])
    assert not output_fits(shown, ["a", "b", "c d"])
    assert not output_fits(shown, ["x", "c d e"])
    assert not output_fits(["a"], ["a", "b"])


def test_the_source_map_names_every_module() -> None:
    """docs/development.md's map of generator/ names each module under its folder, so a newcomer finds every one."""
    page = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    start = page.index("<!-- not run: a map of the source tree -->")
    tree = page[start:page.index("\n```\n", page.index("```", start) + 3)]
    package = REPO / "generator"
    missing = []
    for folder in sorted(p for p in package.iterdir() if p.is_dir() and any(p.glob("*.py"))):
        entry = re.search(rf"^  {folder.name}/\s(.*?)(?=^  \S|\Z)", tree, re.S | re.M)
        described = entry.group(1) if entry else ""
        missing += [module.relative_to(package).as_posix() for module in sorted(folder.rglob("*.py"))
                    if module.name != "__init__.py" and not re.search(rf"\b{module.stem}\b", described)]
    assert missing == []
