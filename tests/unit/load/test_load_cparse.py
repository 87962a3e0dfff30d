"""The C-speed reader (load/cparse.py) against the full reader: for every file it takes, the same documents, values,
types, positions and verdicts; every other file it hands back. Over the corpus, the example fleet, the matrix
fleet, the fixtures and upstream examples, and fuzzed text derived from them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import PROFILES, REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.comments import CommentedMap, CommentedSeq

import mpigen.load.parse as parse_module
from mpigen.load import load_bytes
from mpigen.load.cparse import parse_plain
from mpigen.load.document import ProfileFile, node_position, position
from mpigen.support.diagnostics import Diagnostic

FUZZ_EXAMPLES = int(os.environ.get("MPIGEN_FUZZ_EXAMPLES", 150))
# Every profile the project holds (upstream manifests are not profiles, and are read by readback's own reader).
TEXT_FILES = sorted({*PROFILES.rglob("*.yaml"), *(REPO / "tests" / "acceptance").rglob("*.yaml"),
                     *(REPO / "tests" / "fixtures").rglob("*.yaml"), *(REPO / "tests" / "unit").rglob("*.yaml")})


def _observed(tree: Any) -> list[tuple[Any, ...]]:
    """What later stages can see of a tree: each node's path, type, value and the positions `position` gives for it
    (at its value and at its key), and each collection's own position."""
    seen: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        seen.append((path, type(node).__name__, position(tree, path), position(tree, path, at_key=True)))
        if isinstance(node, CommentedMap):
            seen.append((path, "at", node_position(node), list(node)))
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, CommentedSeq):
            seen.append((path, "at", node_position(node), len(node)))
            for index, item in enumerate(node):
                walk(item, (*path, index))
        else:
            seen.append((path, "value", repr(node)))

    walk(tree, ())
    return seen


def _full_read(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[ProfileFile | None, list[Diagnostic]]:
    with monkeypatch.context() as patched:
        patched.setattr(parse_module, "parse_plain", lambda text: None)
        return load_bytes(raw, "p.yaml", "p.yaml")


def _same_both_ways(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Assert that loading `raw` gives the same result with the C path as without it; whether the C path took it."""
    fast, fast_problems = load_bytes(raw, "p.yaml", "p.yaml")
    full, full_problems = _full_read(raw, monkeypatch)
    assert fast_problems == full_problems
    assert (fast is None) == (full is None)
    if fast is not None and full is not None:
        assert fast.lines == full.lines
        assert _observed(fast.data) == _observed(full.data)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return parse_plain(text) is not None


def test_the_c_path_reads_every_file_of_the_project_as_the_full_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = {path: _same_both_ways(path.read_bytes(), monkeypatch) for path in TEXT_FILES
             if path.stat().st_size <= parse_module.MAX_FILE_BYTES}
    fleet = [path for path in taken if path.is_relative_to(PROFILES)]
    # Not vacuous: the plain profiles of the example fleet (all but those with anchors or `&&` in a command) and
    # most files of the corpus are read at C speed.
    assert sum(taken[path] for path in fleet) >= 0.8 * len(fleet)
    assert sum(taken.values()) >= 0.6 * len(taken)


def test_a_value_with_no_text_points_at_its_key_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """libyaml puts an empty value where its key ends, ruamel.yaml at the next token: `position` reads the key."""
    raw = b"apiVersion: mpigen/v1alpha1\nkind: Job\nimage:\nworkers: 2\n"
    assert _same_both_ways(raw, monkeypatch)
    document, _ = load_bytes(raw, "p.yaml", "p.yaml")
    assert document is not None and document.location("image").line == 3


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n", "a: !secret x\n", "%YAML 1.1\n---\na: 1\n", "a:\n  <<: {b: 1}\n", "a: 'x\u2028y'\n",
    "a: 1\na: 2\n", "a: [1\n", "a: \"\\ud800\"\n", "a: \x85b\n", "a:\n  - \tb\n"])
def test_the_full_reader_reads_what_only_it_can_say(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_plain(text) is None or text.startswith("a: \"")
    _same_both_ways(text.encode(), monkeypatch)


def _fleet_texts() -> Iterator[bytes]:
    for path in sorted(PROFILES.rglob("*.yaml")):
        yield path.read_bytes()


FLEET_TEXTS = list(_fleet_texts())
# Characters that change what YAML means, line breaks and white space of every kind, text beyond ASCII and the BMP.
ALPHABET = " :-?,[]{}#'\"|>\n\r\t\\0x1.e~_+éÅ中😀\ufeffnulltrueyes"


@settings(max_examples=FUZZ_EXAMPLES, derandomize="MPIGEN_FUZZ_EXAMPLES" not in os.environ, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(base=st.sampled_from(FLEET_TEXTS), edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3),
                                                                  st.text(ALPHABET, max_size=4)), min_size=1, max_size=4))
def test_fuzzed_profiles_read_alike_both_ways(base: bytes, edits: list[tuple[int, int, str]],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Edits of example profiles (a few characters cut and written in, anywhere): each loads the same both ways."""
    text = base.decode()
    for at, cut, written in edits:
        at %= len(text) + 1
        text = text[:at] + written + text[at + cut:]
    _same_both_ways(text.encode(), monkeypatch)
