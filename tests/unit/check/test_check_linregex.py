"""generator/check/linregex.py: CRD `pattern`s searched in linear time, as Go's RE2 reads them."""

from __future__ import annotations

import random
import re
import time

import pytest

from mpigen.check import linregex
from mpigen.check.linregex import Unsupported, compile_pattern, longest_text, search

# Every pattern of the upstream CRDs (mpi-operator, Argo CD, Flux, Kubeflow trainer, network operators) and
# a few shapes beside them.
PATTERNS = [
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
    r"^.{2,}|[^./]$", r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$",
    r"^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$", r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$", r"^(\d+)(Ei|Pi|Ti|Gi|Mi|Ki)$",
    r"^(http|https|oci)://.*$", r"^[^:]+$", r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$", r"[a-zA-Z0-9\-]+",
    r"a{2,3}b", r"x{2}", r"(ab|c)*d", r"", r"^$", r"a|", r"(|a)b", r"[]a]", r"[^]a]+", r"\d{3}-\w+", r"a{",
    r"(?:ab)+?c", r"(?P<n>x)y", r"[a\-z]", r"a.c", r"\.", r"[.]", r"\s\S\W\D", r"a{0}b", r"(a|b){2,}c?",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_search_agrees_with_a_backtracking_engine(pattern):
    """Python's `re` with `$` as the end of the text (`\\Z`) is right on these, only slow on others."""
    reference = re.compile(pattern.replace("$", r"\Z"))
    alphabet = "ab-c.0123xyz[]_/\\{},:!\n "
    generator = random.Random(pattern)
    for _ in range(2000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 9)))
        assert search(pattern, text) == (reference.search(text) is not None), (pattern, text)


def test_go_semantics_where_python_differs():
    assert not search(r"^a$", "a\n")  # Go's `$` is the end of the text; Python's also before a final newline
    assert search(r"a{,3}", "a{,3}") and not search(r"^a{,3}$", "aa")  # `{,3}` is text in RE2
    assert search(r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$", "Ab-C")  # a flag after `^`: Python 3.11 refuses it
    assert not search(r"^.$", "\n")


def test_only_ascii_digits_count_a_repetition_as_in_re2():
    """`{²}` is text, not a count: Python's `int` refuses `²`, and check stopped with a traceback."""
    assert search(r"^a{²}$", "a{²}") and not search(r"^a{²}$", "aa")
    assert search(r"^a{٣}$", "a{٣}") and not search(r"^a{٣}$", "aaa")


@pytest.mark.parametrize("pattern", [r"[ab]*a[ab]{20}$", r"^(a|ab|b)*(ba|b){5}$", r"(.*a){8}"])
def test_no_text_of_the_longest_length_is_refused_as_too_costly(pattern, monkeypatch):
    """`longest_text` bounds the work one search may do; under a small budget (the same bound, cheap texts), random
    texts of that length all run out (and of the first, which no cache helps, much longer ones do not)."""
    monkeypatch.setattr(linregex, "MAX_WORK", 20_000)
    longest = longest_text(pattern)
    generator = random.Random(pattern)
    for _ in range(50):
        search(pattern, "".join(generator.choice("ab") for _ in range(longest)))
    if pattern == r"[ab]*a[ab]{20}$":
        with pytest.raises(Unsupported, match="too costly"):
            search(pattern, "".join(generator.choice("ab") for _ in range(longest * 40)))


@pytest.mark.parametrize("pattern", [r"(?=a)", r"(?!a)", r"(?<=a)b", r"(a)\1", r"\bx", r"a**", r"a{2}{3}", r"(a",
                                     r"a)", r"[a", r"[[:alpha:]]", r"\p{L}", "a{1001}", "(((a{1000}){1000}))"])
def test_what_rE2_and_ecma_do_not_share_or_is_too_large_is_refused(pattern):
    with pytest.raises(Unsupported):
        compile_pattern(pattern)


@pytest.mark.parametrize(("pattern", "text"), [
    (r"^(a+)+$", "a" * (1024 * 1024) + "!"), (r"^(a|a)*$", "a" * (1024 * 1024) + "!"),
    (r"(a|b)*a(a|b){12}$", "ab" * (512 * 1024)), (r"^\s*\s*\s*x$", " " * (1024 * 1024)),
    (r"^(.*,){20}$", "x," * (512 * 1024)),
])
def test_catastrophic_patterns_run_in_linear_time(pattern, text):
    started = time.monotonic()
    try:
        search(pattern, text)
    except Unsupported as error:  # a work budget is an answer too: bounded, never a hang
        assert "too costly" in str(error)
    assert time.monotonic() - started < 5
