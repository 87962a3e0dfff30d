"""The compiled validators of `check` (support/compiled_schema.py): jsonschema-rs judging a document as
LinearValidator would, so that only the documents it does not find valid cost LinearValidator's time.

LinearValidator runs each pattern in linear time with linregex, in the syntax RE2 and ECMA-262 share. The compiled
validator runs them with the `regex` crate (never fancy-regex, which backtracks), each pattern first written out
in the few constructs both engines read alike (`portable_pattern`), so that both match the same texts:

- a pattern linregex does not read (it warns that the schema cannot be used), one with `(?i)` (case folding: the
  `regex` crate folds `ſ` into `[a-z]`, linregex does not), or with `\\S`, `\\D` or `\\W` inside a class, leaves
  its schema to LinearValidator;
- `.` is written `[^\\n]` (jsonschema-rs reads `.` as ECMA-262 does, never `\\r`), `\\d \\w \\s` as their ASCII
  classes (linregex's), every other character but a letter or digit as its `\\xHH` escape (the `regex` crate reads
  `\\<` as a word boundary, `&&` in a class as an intersection), a named group as a plain one;
- linregex gives up on a text too long for the pattern's size (linregex.longest_text) with a warning: a document
  holding a longer text or key than the schema's shortest such bound is LinearValidator's.

Kubernetes' definitions (`_definitions.json`, which every built-in and own schema `$ref`s) are handed to
jsonschema-rs in a registry, under their `$id`, as `check` reads them from kubernetes-validate's bundle: nothing is
ever fetched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

from mpigen.check import linregex
from mpigen.support.compiled_schema import (
    DATA_KEYWORDS,
    SCHEMA_MAPS,
    UNVETTED_KEYWORDS,
    CompiledSchema,
    compile_schema,
    keywords,
)

_SHORTHANDS = {"d": "0-9", "w": "0-9A-Za-z_", "s": r"\x09\x0a\x0b\x0c\x0d\x20"}
"""linregex's `\\d \\w \\s` (ASCII, as in Go), as the ranges of a class."""
_ESCAPED = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}
_REGEX_ENGINE = jsonschema_rs.RegexOptions()
"""The `regex` crate: linear time, as RE2 and linregex."""


def _literal(ch: str) -> str:
    """One character as a pattern that means only it, to linregex and the `regex` crate alike."""
    if (ch.isascii() and ch.isalnum()) or ord(ch) > 0x7F:
        return ch
    return f"\\x{ord(ch):02x}"


class _Portable:
    """A scan of a pattern linregex reads (compile_pattern passed), writing it out for the `regex` crate."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.out: list[str] = []

    def take(self) -> str:
        ch = self.text[self.at]
        self.at += 1
        return ch

    def escape(self) -> str:
        """The character an escape (past its backslash) stands for; a shorthand class is the caller's."""
        ch = self.take()
        if ch in "xu":
            digits = 2 if ch == "x" else 4
            code = self.text[self.at:self.at + digits]
            self.at += digits
            return chr(int(code, 16))
        return _ESCAPED.get(ch, ch)

    def write(self) -> str | None:
        while self.at < len(self.text):
            ch = self.take()
            if ch == "\\" and self.text[self.at] in "dDwWsS":
                letter = self.take()
                self.out.append(f"[{'^' if letter.isupper() else ''}{_SHORTHANDS[letter.lower()]}]")
            elif ch == "\\":
                self.out.append(_literal(self.escape()))
            elif ch == "[":
                if not self.char_class():
                    return None
            elif ch == ".":
                self.out.append(r"[^\x0a]")
            elif ch == "(":
                if self.text.startswith("?i)", self.at):
                    return None
                if self.text.startswith("?", self.at):  # `(?:`, `(?P<name>`, `(?<name>`: a plain group
                    self.at = self.text.index(":" if self.text[self.at + 1] == ":" else ">", self.at) + 1
                self.out.append("(?:")
            elif ch == "{" and self.bounds():
                continue
            elif ch in ")|*+?^$":
                self.out.append(ch)
            else:
                self.out.append(_literal(ch))
        return "".join(self.out)

    def bounds(self) -> bool:
        """`{n}`, `{n,}` or `{n,m}` where linregex reads a repetition (else its `{` is a literal)."""
        bounds = linregex.repeat_bounds(self.text, self.at - 1)
        if bounds is None:
            return False
        low, high, self.at = bounds
        self.out.append(f"{{{low},{'' if high is None else high}}}")
        return True

    def char_class(self) -> bool:
        """A class, as linregex reads it (`]` first is a literal); False for a negated shorthand inside one."""
        self.out.append("[")
        if self.text.startswith("^", self.at):
            self.at += 1
            self.out.append("^")
        first = True
        while True:
            ch = self.take()
            if ch == "]" and not first:
                self.out.append("]")
                return True
            first = False
            if ch == "\\" and self.text[self.at] in "dDwWsS":
                letter = self.take()
                if letter.isupper():
                    return False
                self.out.append(_SHORTHANDS[letter])
                continue
            low = self.escape() if ch == "\\" else ch
            if self.text.startswith("-", self.at) and self.text[self.at + 1:self.at + 2] not in ("]", ""):
                self.at += 1
                high = self.take()
                high = self.escape() if high == "\\" else high
                self.out.append(f"{_literal(low)}-{_literal(high)}")
            else:
                self.out.append(_literal(low))


def portable_pattern(pattern: str) -> str | None:
    """`pattern` written so that the `regex` crate matches exactly the texts linregex matches, or None where it
    cannot be (see the module's doc)."""
    try:
        linregex.compile_pattern(pattern)
    except ValueError:  # Unsupported, or any other refusal
        return None
    return _Portable(pattern).write()


@dataclass(frozen=True)
class Portable:
    """A schema with its patterns written for the `regex` crate; `longest`: the longest text or key linregex judges
    by all of them (None: the schema has no pattern)."""

    schema: Any
    longest: int | None


def portable_schema(schema: Any) -> Portable | None:
    """`schema` with every `pattern` and `patternProperties` key portable, or None where one cannot be, or where the
    schema holds a keyword jsonschema alone judges. A schema without a pattern is given back as it is."""
    found: list[str] = []
    for key, value in keywords(schema):
        if key in UNVETTED_KEYWORDS:
            return None
        if key == "pattern" and isinstance(value, str):
            found.append(value)
        elif key == "patternProperties" and isinstance(value, dict):
            found += value
    if not found:
        return Portable(schema, None)
    written: dict[str, str] = {}
    for pattern in found:
        portable = portable_pattern(pattern)
        if portable is None:
            return None
        written[pattern] = portable
    return Portable(_rewritten(schema, written), min(map(linregex.longest_text, written)))


def _rewritten(node: Any, written: dict[str, str]) -> Any:
    """A schema with each pattern as `written` says, in `pattern` and as a `patternProperties` key: the nodes on the
    way to one are copies, every other node is the schema's own (Kubernetes' definitions are 1.3 MB)."""
    if isinstance(node, list):
        items = [_rewritten(item, written) for item in node]
        return node if all(new is old for new, old in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern" and isinstance(value, str):
            out[key] = written[value]
        elif key == "patternProperties" and isinstance(value, dict):
            out[key] = {written[name]: _rewritten(sub, written) for name, sub in value.items()}
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            subs = {name: _rewritten(sub, written) for name, sub in value.items()}
            out[key] = value if all(subs[name] is sub for name, sub in value.items()) else subs
        else:
            out[key] = value if key in DATA_KEYWORDS else _rewritten(value, written)
    return node if all(out[key] is value for key, value in node.items()) else out


@dataclass(frozen=True)
class Definitions:
    """Kubernetes' definitions as jsonschema-rs reads them: in a registry, under their `$id`."""

    registry: jsonschema_rs.Registry
    longest: int | None


def compiled_definitions(definitions: Mapping[str, Any]) -> Definitions | None:
    """The registry of one bundled version's definitions (or their view inside a custom resource), or None where
    LinearValidator alone must judge what `$ref`s them."""
    portable = portable_schema(definitions)
    if portable is None:
        return None
    try:
        registry = jsonschema_rs.Registry([(str(definitions["$id"]), portable.schema)])
    except Exception:
        return None
    return Definitions(registry, portable.longest)


def compile_check_schema(schema: Any, definitions: Definitions | None) -> CompiledSchema | None:
    """The compiled validator of one schema of `check`, which may `$ref` the definitions; None where LinearValidator
    alone judges its documents."""
    portable = portable_schema(schema)
    if portable is None or definitions is None:
        return None
    bounds = [bound for bound in (portable.longest, definitions.longest) if bound is not None]
    return compile_schema(portable.schema, longest=min(bounds) if bounds else None, vetted=True,
                          registry=definitions.registry, pattern_options=_REGEX_ENGINE)
