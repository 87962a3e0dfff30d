"""Deterministic YAML text that Go's YAML parsers (Helm, kubectl, Argo CD) read back unchanged.

A small block-style emitter for the JSON-like values mpigen outputs (dicts, lists, strings,
numbers, booleans, null). Written by hand rather than through a YAML library's representer so the
bytes depend on nothing but this file: the same charts on any machine, whatever library version.

Go's parsers follow YAML 1.1, where `on`, `yes` and `0777` are not strings, so every string that
could be read as anything but itself is double-quoted. Multi-line text becomes a literal block.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any

_YAML11_SPECIAL = re.compile(
    r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|~|null|Null|NULL|=|<<|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$"
)
_NUMBER_LIKE = re.compile(r"^[-+]?\.?[0-9]")
_PLAIN_FIRST = re.compile(r"^([A-Za-z0-9_./=^$(~]|-[^\s])")
_PLAIN_FORBIDDEN = re.compile(r": |:$| #|\t")
_BLOCK_LINE_SAFE = re.compile(r"^[^\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029\ufeff]*$")


def _printable(text: str) -> bool:
    return text.isprintable() and "\ufeff" not in text


def plain_ok(text: str) -> bool:
    """Whether `text` can stand unquoted and still read back as this very string under YAML 1.1 and 1.2."""
    return bool(
        text
        and _printable(text)
        and text == text.strip()
        and _PLAIN_FIRST.match(text)
        and not _YAML11_SPECIAL.match(text)
        and not _NUMBER_LIKE.match(text)
        and not _PLAIN_FORBIDDEN.search(text)
    )


def literal_ok(text: str) -> bool:
    """Whether `text` can be a literal block (`|`) that reads back byte for byte."""
    if "\n" not in text or not _BLOCK_LINE_SAFE.match(text) or text.startswith((" ", "\n")):
        return False
    return all(line == line.rstrip(" \t") for line in text.split("\n"))


def quoted(text: str) -> str:
    """A double-quoted scalar: JSON's escapes, plus escapes for what YAML would not print as is."""
    out = json.dumps(text, ensure_ascii=False)
    if _printable(text):
        return out
    return "".join(ch if ch.isprintable() and ch != "\ufeff" else
                   (f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}") for ch in out)


def scalar(value: Any) -> str:
    if value.__class__ is str:  # most values: the rest below
        return _text_scalar(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    return _text_scalar(str(value))


@lru_cache(maxsize=1 << 16)
def _text_scalar(text: str) -> str:
    """A string as a scalar; remembered, since a fleet's charts repeat the same keys and values thousands of times."""
    return text if plain_ok(text) else quoted(text)


def _literal(text: str, indent: int) -> list[str]:
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    header = "|" if trailing == 1 else ("|-" if trailing == 0 else "|+")
    pad = " " * indent
    lines = [header]
    lines += [f"{pad}{line}" if line else "" for line in body.split("\n")]
    lines += [""] * (trailing - 1) if trailing > 1 else []
    return lines


def _value_lines(value: Any, indent: int) -> tuple[str, list[str]]:
    """(text after `key:` or `- `, following lines) for a scalar or an empty collection."""
    if isinstance(value, dict):
        return "{}", []
    if isinstance(value, (list, tuple)):
        return "[]", []
    if isinstance(value, str) and literal_ok(value):
        head, *rest = _literal(value, indent)
        return head, rest
    return scalar(value), []


def _emit_mapping(mapping: dict[Any, Any], indent: int, out: list[str], first_prefix: str | None = None) -> None:
    pad = " " * indent
    for number, (key, value) in enumerate(mapping.items()):
        lead = first_prefix if (number == 0 and first_prefix is not None) else pad
        key_text = _text_scalar(key) if key.__class__ is str else scalar(str(key))
        if isinstance(value, dict) and value:
            out.append(f"{lead}{key_text}:")
            _emit_mapping(value, indent + 2, out)
        elif isinstance(value, (list, tuple)) and value:
            out.append(f"{lead}{key_text}:")
            _emit_sequence(value, indent, out)
        else:
            head, rest = _value_lines(value, indent + 2)
            out.append(f"{lead}{key_text}: {head}")
            out.extend(rest)


def _emit_sequence(items: list[Any] | tuple[Any, ...], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict) and item:
            _emit_mapping(item, indent + 2, out, first_prefix=f"{pad}- ")
        elif isinstance(item, (list, tuple)) and item:
            out.append(f"{pad}-")
            _emit_sequence(item, indent + 2, out)
        else:
            head, rest = _value_lines(item, indent + 2)
            out.append(f"{pad}- {head}")
            out.extend(rest)


def dump(value: Any) -> str:
    """One YAML document (no `---`), ending in a newline."""
    out: list[str] = []
    if isinstance(value, dict) and value:
        _emit_mapping(value, 0, out)
    elif isinstance(value, (list, tuple)) and value:
        _emit_sequence(value, 0, out)
    else:
        head, rest = _value_lines(value, 2)
        out = [head, *rest]
    return "\n".join(out) + "\n"


def dump_all(values: list[Any]) -> str:
    return "".join(f"---\n{dump(v)}" for v in values)
