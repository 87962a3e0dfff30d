"""A profile written by an import: YAML text whose every value carries a comment naming where it came from (an
object's field), or saying it is a guess and what to read to replace it, the way `mpigen init` marks its guesses.

Scalars are written by mpigen's own emitter (generator/support/yamlio.py: quoted wherever a YAML 1.1 reader could
read them as anything else), comments on one line (`one_line`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mpigen.support.diagnostics import one_line
from mpigen.support.schema_files import KIND_SCHEMA_FILES
from mpigen.support.yamlio import scalar
from mpigen.validate.schema import schema_errors
from mpigen.vocabulary.node_facts import GUESS_MARK

GUESS = GUESS_MARK
"""How a comment starts whose value the input did not hold: what follows says what to read instead."""


def guess(what_to_read: str) -> str:
    """A comment marking a guessed value, with what to read to replace it."""
    return f"{GUESS} {what_to_read}"


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


def plain(fields: list[Field] | tuple[Field, ...]) -> dict[str, Any]:
    """The profile as the loader reads it: nested Fields as mappings, fields left out as comments absent."""
    return {f.key: plain(f.value) if _nested(f.value) else f.value for f in fields if not f.left_out}


def schema_checked(fields: list[Field], notes: list[str]) -> list[Field]:
    """`fields` without what the job schema refuses (a value of the wrong type, or no value of its field's): each
    left out in a note naming where it came from and what the field takes, never the value itself (it may be
    anything an export held). A value inside a list leaves the whole list out: part of a command is no command."""
    for _ in range(len(fields) + 1):
        found = schema_errors(KIND_SCHEMA_FILES["Job"], plain(fields))
        if not found:
            break
        path, keyword, expected = found[0]
        fields, note = _without(fields, path, keyword, expected)
        notes.append(note)
    return fields


def _without(fields: list[Field] | tuple[Field, ...], path: tuple[str | int, ...], keyword: str,
             expected: Any) -> tuple[list[Field], str]:
    key = path[0] if path else ""
    for index, field in enumerate(fields):
        if field.key != key:
            continue
        if len(path) > 1 and isinstance(path[1], str) and _nested(field.value):
            inner, note = _without(field.value, path[1:], keyword, expected)
            rest = [*fields[:index], *([Field(field.key, tuple(inner), field.note)] if inner else []), *fields[index + 1:]]
            return rest, f"{key}.{note}"
        takes = f"one of {', '.join(map(str, expected))}" if keyword == "enum" else (
            f"a {expected}" if keyword == "type" else f"a value within its {keyword}")
        return [*fields[:index], *fields[index + 1:]], (f"{key} ({field.note or 'from the MPIJob'}) not kept: the "
                                                        f"profile's field takes {takes}")
    raise ValueError(f"no field at {path}")  # the schema refused what no Field wrote: a bug, not input


def _nested(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(item, Field) for item in value)
