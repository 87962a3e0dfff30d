"""A profile written by an import: YAML text whose every value carries a comment naming where it came from (an
object's field), or saying it is a guess and what to read to replace it, the way `mpigen init` marks its guesses.

Scalars are written by mpigen's own emitter (generator/support/yamlio.py: quoted wherever a YAML 1.1 reader could
read them as anything else), comments on one line (`one_line`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mpigen.support.diagnostics import one_line
from mpigen.support.yamlio import scalar

GUESS = "a guess"
"""How a comment starts whose value the input did not hold: what follows says what to read instead."""


def guess(what_to_read: str) -> str:
    """A comment marking a guessed value, with what to read to replace it."""
    return f"{GUESS}: {what_to_read}"


@dataclass(frozen=True)
class Field:
    """One key of a profile: a scalar, a list (of scalars or of mappings of scalars) or, as a tuple of Fields, a
    nested mapping; `note` is its comment. `left_out`: written as a comment only (a value the profile must not
    hold as it was, shown for the reader to complete)."""

    key: str
    value: Any
    note: str = ""
    left_out: bool = False


def profile_text(header: list[str], fields: list[Field]) -> str:
    """The profile: the header's comment lines, then each field in order."""
    lines = [f"# {one_line(line)}" if line else "#" for line in header]
    _emit(fields, 0, lines)
    return "\n".join(lines) + "\n"


def _emit(fields: list[Field] | tuple[Field, ...], indent: int, lines: list[str]) -> None:
    pad = "  " * indent
    for field in fields:
        comment = f"  # {one_line(field.note)}" if field.note else ""
        key = scalar(field.key)
        value = field.value
        if field.left_out:
            lines.append(f"{pad}# {key}: {one_line(str(value))}{comment}")
        elif isinstance(value, tuple) and all(isinstance(item, Field) for item in value):
            lines.append(f"{pad}{key}:{comment}")
            _emit(value, indent + 1, lines)
        elif isinstance(value, list):
            lines.append(f"{pad}{key}:{comment}")
            for item in value:
                if isinstance(item, dict):
                    first = True
                    for name, entry in item.items():
                        lines.append(f"{pad}  {'- ' if first else '  '}{scalar(name)}: {scalar(entry)}")
                        first = False
                else:
                    lines.append(f"{pad}  - {scalar(item)}")
        else:
            lines.append(f"{pad}{key}: {scalar(value)}{comment}")
