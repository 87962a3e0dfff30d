"""Findings about the input, as data: every stage returns them, only the CLI prints them."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import ParamSpec

NEVER_FITS = "never-fits"
"""A job that is sound but can never run where it is: more than its nodes or its queue can ever hold. `mpigen plan`
reports such a job, with the rest of the fleet, instead of stopping at it."""


NAMES_SHOWN = 8
"""Names in one list of a message: the jobs a warning names, the jobs a waiting job waits for in `plan`."""


def names_text(names: Sequence[str], omitted: int = 0, shown: int = NAMES_SHOWN) -> str:
    """`a, b, c`; past `shown` names (or with `omitted` more not given), `a, b, c and 12 more`: a message grows with
    what it shows, never with the fleet's size."""
    more = omitted + max(len(names) - shown, 0)
    listed = ", ".join(names[:shown])
    return f"{listed} and {more} more" if more else listed


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Location:
    """A place in a profile file; line and column count from 1, like editors do."""

    path: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    location: Location
    message: str
    hint: str = ""
    severity: Severity = Severity.ERROR
    code: str = ""
    """What kind of finding it is, where a later stage acts on the kind (`NEVER_FITS`); most have none."""
    rule: str = ""
    """The check that raised it (generator/support/profile_rules.py), for code-scanning and CI reports: given by
    `with_rule` where the check is called, never written into the message."""

    def format(self) -> str:
        """One line, whatever the profile text quoted in it holds (a newline in a name, a file name)."""
        text = f"{self.location}: {self.severity.value}: {self.message}"
        return one_line(f"{text}; {self.hint}" if self.hint else text)


# Bidirectional formatting characters: embeddings and overrides, isolates, marks. Shown raw, they make a reader see
# text in another order than it is (`program` read backwards, a finding that seems to name another object).
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
LINE_SEPARATORS = frozenset("\u2028\u2029")  # line breaks to YAML 1.1 readers (Helm's) and some terminals and editors
SURROGATES = "\ud800-\udfff"  # halves of UTF-16 pairs, from escapes like `"\\ud800"`: no UTF-8 text holds one

_UNPRINTABLE = "\x7f-\x9f" + "".join(sorted(BIDI_CONTROLS | LINE_SEPARATORS)) + SURROGATES + "\ufffe\uffff"
_LINE_BREAKING = re.compile(f"[\x00-\x08\x0a-\x1f{_UNPRINTABLE}]")
_BREAKING_BUT_NEWLINE = re.compile(f"[\x00-\x08\x0b-\x1f{_UNPRINTABLE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """`text` as it may be printed, on one line: every control character but tab (C0 with newline, DEL, C1), bidi
    control, line separator, lone surrogate and U+FFFE/U+FFFF is written as an escape (`\\x1b`, `\\u202e`).

    Every text a command prints from its input goes through here (or `printable`): an object name holding
    `\\x1b]0;...\\x07` or `\\x1b[2J` would retitle or clear the reader's terminal, U+202E reverse what they read, a
    lone surrogate stop the output with an encoding error. What is left is also text XML 1.0 can hold, so the JUnit
    report escapes with the same function."""
    return _LINE_BREAKING.sub(_escape, text)


def printable(text: str) -> str:
    """`one_line` for text of several lines (a diff, a plan): the same escapes, but newlines kept."""
    return _BREAKING_BUT_NEWLINE.sub(_escape, text)


def with_rule(rule: str, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics, each without a rule given `rule`: the innermost check that names one wins, so a check
    made of others names only what is its own."""
    return [diagnostic if diagnostic.rule else replace(diagnostic, rule=rule) for diagnostic in diagnostics]


_Arguments = ParamSpec("_Arguments")


def raises(rule: str) -> Callable[[Callable[_Arguments, Iterable[Diagnostic]]], Callable[_Arguments, list[Diagnostic]]]:
    """A check's decorator: what it returns is of `rule` (`with_rule`), however many messages it has."""
    def decorate(check: Callable[_Arguments, Iterable[Diagnostic]]) -> Callable[_Arguments, list[Diagnostic]]:
        @functools.wraps(check)
        def ruled(*args: _Arguments.args, **kwargs: _Arguments.kwargs) -> list[Diagnostic]:
            return with_rule(rule, check(*args, **kwargs))
        return ruled
    return decorate


def errors(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity is Severity.ERROR]


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """File order, then line order: the order a reader fixes them in."""
    return sorted(diagnostics, key=lambda d: (d.location, d.message))


def did_you_mean(word: str, choices: Iterable[str], n: int = 1) -> str:
    """A hint naming the closest choice (the `n` closest), else the list of choices."""
    options = sorted(set(choices))
    close = difflib.get_close_matches(word, options, n=n, cutoff=0.6)
    if close:
        named = [f"'{one_line(c)}'" for c in close]
        return f"did you mean {' or '.join([', '.join(named[:-1]), named[-1]] if len(named) > 1 else named)}?"
    if not options:
        return "there is none to choose from"
    shown = ", ".join(f"'{o}'" for o in options[:12])
    more = f" and {len(options) - 12} more" if len(options) > 12 else ""
    return f"expected one of {shown}{more}"
