"""Deterministic YAML text that Go's YAML parsers (Helm, kubectl, Argo CD) read back unchanged.

Go's parsers follow YAML 1.1, where `on`, `yes` and `0777` are not strings; ruamel writes YAML 1.2
and would leave them bare. Every string that could be read as something else is double-quoted.
"""

from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

_YAML11_SPECIAL = re.compile(
    r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|~|null|Null|NULL|=|<<|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$"
)
_NUMBER_LIKE = re.compile(r"^[-+]?\.?[0-9]")
_BLOCK_SAFE = re.compile(r"^[^\x00-\x08\x0b-\x1f\x7f\u0085\u2028\u2029\ufeff]*$")


def _needs_quotes(text: str) -> bool:
    return text == "" or bool(_YAML11_SPECIAL.match(text) or _NUMBER_LIKE.match(text))


def _literal_ok(text: str) -> bool:
    if "\n" not in text or not _BLOCK_SAFE.match(text) or text.startswith((" ", "\n")):
        return False
    return not any(line != line.rstrip(" \t") for line in text.split("\n"))


def prepare(value: Any) -> Any:
    """A copy of `value` with the scalar styles chosen; dict order is kept."""
    if isinstance(value, dict):
        return {str(k): prepare(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [prepare(v) for v in value]
    if isinstance(value, str):
        if _literal_ok(value):
            return LiteralScalarString(value)
        if _needs_quotes(value) or "\n" in value:
            return DoubleQuotedScalarString(value)
    return value


def _yaml() -> YAML:
    yaml = YAML(typ="rt", pure=True)
    yaml.default_flow_style = False
    yaml.width = 1_000_000
    yaml.indent(mapping=2, sequence=2, offset=0)
    yaml.allow_unicode = True
    yaml.representer.ignore_aliases = lambda *_: True
    return yaml


def dump(value: Any) -> str:
    stream = io.StringIO()
    _yaml().dump(prepare(value), stream)
    return stream.getvalue()


def dump_all(values: list[Any]) -> str:
    return "".join(f"---\n{dump(v)}" for v in values)
