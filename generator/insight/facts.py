"""The words `mpigen explain` says each value with: where a profile sets it (`path:line`), or mpigen's own default
or rule, as a Fact of the explanation."""

from __future__ import annotations

from mpigen.insight.explanation import DEFAULT, PROFILE, RULE, Fact, Said
from mpigen.load import ProfileFile


class Where:
    """`path:line` of a key in a profile, or None where the profile does not set it."""

    def __init__(self, document: ProfileFile | None) -> None:
        self.document = document

    def __call__(self, *keys: str | int) -> str | None:
        if self.document is None:
            return None
        node = self.document.data
        for key in keys:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                return None
        where = self.document.location(*keys)
        return f"{where.path}:{where.line}"


def said(where: str | None, what: str, otherwise: Said | str) -> Said:
    """`<where>: <what>` where the profile sets it, else `otherwise` (a string: `default: ...` or a rule)."""
    if where:
        return Said(f"{where}: {what}", PROFILE)
    return otherwise if isinstance(otherwise, Said) else own(otherwise)


def own(text: str) -> Said:
    """mpigen's own words: a default (they start `default:`) or a rule."""
    return Said(text, DEFAULT if text.startswith("default") else RULE)


def fact(section: str, name: str, value: str, origin: Said | str) -> Fact:
    said = origin if isinstance(origin, Said) else own(origin)
    return Fact(section, name, value, said.text, said.kind)
