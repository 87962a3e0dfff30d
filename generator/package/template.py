"""Turn a built object into Helm template text without ever letting data become template code.

The object is dumped as YAML; every `{{` in that text can only come from profile data, so each line
holding one becomes a single action printing that line as a Go string literal: `{{ `line` }}` (a raw
string), or `{{ "line" }}` with `\\` and `\"` escaped where the line has a backtick. Helm prints the
line back byte for byte. A line costs at most twice its length and a few bytes, however many `{{` it
holds: escaping each `{{` alone (`{{ "{{" }}`, five times its length) let a 1 MiB profile string make
a template over Helm's 5 MiB limit per chart file. The few lines that also hold a hole keep the
per-brace escape. Then the few places bound to chart values (holes) are replaced by template actions.
Hole markers are chosen so they occur nowhere in the data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mpigen.objects.chartfiles import action, go_quoted, go_raw
from mpigen.support import yamlio

ESCAPED_OPEN = action(go_quoted("{{"))


@dataclass(frozen=True)
class Hole:
    """A template action standing where a value goes.

    `inline` actions replace a scalar (`{{ int .Values.workers }}`); `block` actions replace a
    whole mapping or block scalar and are given the indentation of the line they sit on, as
    `{indent}` in the text (`{{- include "x.labels" . | nindent {indent} }}`); lines a block action
    adds after its own start with `{pad}`, the spaces of that indentation.
    """

    action: str
    block: bool = False


def set_path(obj: Any, path: tuple[str | int, ...], value: Any) -> None:
    node = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


_MARKER_BASES = re.compile(r"mpigenhole([0-9]+)x")


def _marker_base(obj: Any) -> str:
    """`mpigenhole<n>x` for the smallest n the data does not hold, found in one pass over it (a search per
    candidate n was quadratic in a profile string listing many of them)."""
    taken = {int(n) for n in _MARKER_BASES.findall(json.dumps(obj, sort_keys=True, ensure_ascii=False))
             if len(n) < 8}
    n = 0
    while n in taken:
        n += 1
    return f"mpigenhole{n}x"


def literal_line(line: str) -> str:
    """`line` (no newline in it) as template text that Helm prints back as it is."""
    if "{{" not in line:
        return line
    if "`" not in line and "\r" not in line:  # Go drops carriage returns from raw strings
        return action(go_raw(line))
    return action(go_quoted(line))


def render_template(obj: dict[str, Any], holes: dict[tuple[str | int, ...], Hole]) -> str:
    """YAML template text of `obj` with `holes` (path -> action) punched into it."""
    base = _marker_base(obj)
    patched = json.loads(json.dumps(obj))
    markers: dict[str, Hole] = {}
    for number, (path, hole) in enumerate(sorted(holes.items(), key=lambda item: [str(p) for p in item[0]])):
        marker = f"{base}{number}z"
        markers[marker] = hole
        set_path(patched, path, marker)
    lines = yamlio.dump(patched).split("\n")
    holed = {i for i, line in enumerate(lines) if base in line}
    lines = [line.replace("{{", ESCAPED_OPEN) if i in holed else literal_line(line) for i, line in enumerate(lines)]
    for marker, hole in markers.items():
        for i, line in enumerate(lines):
            if marker not in line:
                continue
            indent = len(line) - len(line.lstrip(" "))
            is_item = line.lstrip(" ").startswith("- ")
            width = indent + 2 if not is_item else indent + 4
            action = hole.action.replace("{indent}", str(width)).replace("{pad}", " " * width)
            lines[i] = line.replace(marker, action)
            break
        else:  # pragma: no cover - every hole was placed on a scalar of the dump
            raise AssertionError(f"hole {marker} vanished from the dump")
    return "\n".join(lines)


def escape_text(text: str) -> str:
    """Plain text (NOTES.txt) with any `{{` from data made literal, line by line."""
    return "\n".join(literal_line(line) for line in text.split("\n"))
