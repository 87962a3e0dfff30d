"""tests/data/verify/: every log is listed in SOURCES.yaml, and every excerpt is, line for line, the lines it names of
its copy under tests/upstream/ (whose own SOURCES.yaml gives the repository, commit, path and licence): nothing is
retyped, so a parser passing on it passes on what the tool printed."""

from __future__ import annotations

from conftest import REPO, VERIFY_DATA
from ruamel.yaml import YAML


def sources() -> dict[str, dict[str, str]]:
    return YAML(typ="safe").load((VERIFY_DATA / "SOURCES.yaml").read_text(encoding="utf-8"))["logs"]


def test_every_log_is_listed_and_every_listed_log_is_there() -> None:
    assert sorted(sources()) == sorted(path.name for path in VERIFY_DATA.glob("*.log"))


def test_every_excerpt_is_its_lines_of_the_upstream_copy() -> None:
    excerpts = {name: entry for name, entry in sources().items() if "copy" in entry}
    assert len(excerpts) == 4
    for name, entry in excerpts.items():
        assert entry["copy"].startswith("tests/upstream/") and entry["what"], name
        first, last = (int(part) for part in str(entry["lines"]).split("-"))
        copied = (REPO / entry["copy"]).read_text(encoding="utf-8").split("\n")[first - 1:last]
        assert (VERIFY_DATA / name).read_text(encoding="utf-8") == "\n".join(copied) + "\n", name


def test_every_composed_log_says_how_and_where_its_figures_come_from() -> None:
    composed = {name: entry for name, entry in sources().items() if "copy" not in entry}
    assert composed and all(set(entry) == {"composed", "figures", "what"} for entry in composed.values())
