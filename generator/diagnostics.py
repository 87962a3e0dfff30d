"""Findings about the input, as data: every stage returns them, only the CLI prints them."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

NEVER_FITS = "never-fits"
"""A job that is sound but can never run where it is: more than its nodes or its queue can ever hold. `mpigen plan`
reports such a job, with the rest of the fleet, instead of stopping at it."""


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

    def format(self) -> str:
        """One line, whatever the profile text quoted in it holds (a newline in a name, a file name)."""
        text = f"{self.location}: {self.severity.value}: {self.message}"
        return one_line(f"{text}; {self.hint}" if self.hint else text)


_LINE_BREAKING = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """`text` with every control character but tab written as an escape (`\\x0a`), so it stays one line."""
    return _LINE_BREAKING.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                              else f"\\u{ord(m.group()):04x}", text)


def errors(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity is Severity.ERROR]


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """File order, then line order: the order a reader fixes them in."""
    return sorted(diagnostics, key=lambda d: (d.location, d.message))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A hint naming the closest choice, else the list of choices."""
    options = sorted(set(choices))
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    if not options:
        return "there is none to choose from"
    shown = ", ".join(f"'{o}'" for o in options[:12])
    more = f" and {len(options) - 12} more" if len(options) > 12 else ""
    return f"expected one of {shown}{more}"
