"""The `x-kubernetes-validations` rules of one converted CRD schema, as a tree of only the nodes that carry rules or
lead to them: built once per schema, so a kind without rules costs nothing and a walk never enters a subtree
without any.

Upstream: apiextensions-apiserver pkg/apiserver/schema/cel/validation.go @ 00c30b354df7afc15258ecdbdd629555d200de5a
(validator(): rules per node under properties, items and additionalProperties, and those of `allOf` branches at the
same node; `anyOf`/`oneOf` branches carry none the server evaluates).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from mpigen.check.crdschema import CEL_TYPE, unwrap_nullable

_OLD_SELF = re.compile(r"\boldSelf\b")
_TYPED_DEPTH = 32
_PRESENCE = re.compile(r"\bhas\([^()]*\)")


def without_strings(text: str) -> str:
    """A rule's text with each string literal ('...' or "...", backslash escapes inside) left empty, so that a name is
    looked for in its code only; in one pass (a regular expression for it backtracks on an unclosed literal)."""
    out: list[str] = []
    quote = ""
    escaped = False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                out.append(quote * 2)
                quote = ""
        elif char in "'\"":
            quote = char
        else:
            out.append(char)
    return "".join(out)


@dataclass(frozen=True)
class CrdRule:
    """One entry of `x-kubernetes-validations`."""

    text: str
    message: str = ""
    message_expression: str = ""
    reason: str = ""
    field_path: str = ""
    optional_old_self: bool = False
    reads_typed: str = ""
    """A string field it reads that the server gives CEL as a duration, timestamp or bytes (`timeout`, a duration), or
    '': the CEL bindings take none of those types as input, so such a rule is not evaluated."""

    @cached_property
    def transition(self) -> bool:
        """Whether it compares with the old object (`oldSelf` outside string literals): the server evaluates it on
        an update only."""
        return bool(_OLD_SELF.search(without_strings(self.text)))

    @property
    def label(self) -> str:
        """The rule's message, else its text (the server's ruleErrorString)."""
        return self.message.strip() or self.text.strip()


@dataclass(frozen=True)
class RuleNode:
    """A schema node with rules at it or below it; `schema` is the converted node (nullable wrapping removed)."""

    schema: Mapping[str, Any]
    rules: tuple[CrdRule, ...] = ()
    properties: tuple[tuple[str, RuleNode], ...] = ()
    items: RuleNode | None = None
    values: RuleNode | None = None
    """additionalProperties: each map value."""
    stranded: tuple[tuple[str, CrdRule], ...] = ()
    """Rules in `anyOf`/`oneOf` branches, or below the root of an `allOf` branch, with where they sit: never
    evaluated (listed as unsupported)."""


def _rules_of(node: Mapping[str, Any]) -> tuple[CrdRule, ...]:
    entries = [entry for entry in node.get("x-kubernetes-validations") or () if isinstance(entry, Mapping)]
    typed = _typed_strings(node) if entries else {}
    return tuple(CrdRule(text, str(entry.get("message") or ""), str(entry.get("messageExpression") or ""),
                         str(entry.get("reason") or ""), str(entry.get("fieldPath") or ""),
                         bool(entry.get("optionalOldSelf")), _read_typed(text, typed))
                 for entry in entries for text in (str(entry.get("rule", "")),))


def _typed_strings(schema: Mapping[str, Any], depth: int = 0) -> dict[str, str]:
    """The string fields at and below a node that CEL sees as another type: their names ('' for the node itself) and
    CEL types (crdschema.CEL_TYPE)."""
    node = unwrap_nullable(schema)[1]
    found = {"": str(node[CEL_TYPE])} if CEL_TYPE in node else {}
    if depth > _TYPED_DEPTH:
        return found
    for name, sub in (node.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            found.update({below or name: kind for below, kind in _typed_strings(sub, depth + 1).items()})
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), Mapping):
            found.update({below: kind for below, kind in _typed_strings(node[key], depth + 1).items() if below})
    return found


def _read_typed(text: str, typed: dict[str, str]) -> str:
    """The first typed string field a rule's text reads (`self` itself where the node is one), as `name (a kind)`; a
    name only asked about by `has()` is not read."""
    if "" in typed:
        return f"self (a {typed['']})"
    code = _PRESENCE.sub("", without_strings(text))  # has(x.timeout) asks whether it is set, whatever its type
    return next((f"{name} (a {kind})" for name, kind in sorted(typed.items())
                 if re.search(rf"\b{re.escape(name)}\b", code)), "")


def build(schema: Mapping[str, Any] | None) -> RuleNode | None:
    """The rule tree of one converted schema node; None where neither it nor anything below it has a rule."""
    node = unwrap_nullable(schema)[1]
    rules = _rules_of(node)
    stranded: list[tuple[str, CrdRule]] = []
    for junctor in ("allOf", "anyOf", "oneOf"):
        for index, branch in enumerate(node.get(junctor) or ()):
            if not isinstance(branch, Mapping):
                continue
            if junctor == "allOf":
                rules += _rules_of(branch)
                below = [(f"{junctor}[{index}]{where}", rule) for where, rule in _all_rules(branch) if where]
            else:
                below = [(f"{junctor}[{index}]{where}", rule) for where, rule in _all_rules(branch)]
            stranded += below
    properties = tuple((name, child) for name, sub in (node.get("properties") or {}).items()
                       if isinstance(sub, Mapping) and (child := build(sub)) is not None)
    items = build(node["items"]) if isinstance(node.get("items"), Mapping) else None
    values = build(node["additionalProperties"]) if isinstance(node.get("additionalProperties"), Mapping) else None
    if not (rules or properties or items or values or stranded):
        return None
    return RuleNode(node, rules, properties, items, values, tuple(stranded))


def _all_rules(schema: Mapping[str, Any], where: str = "") -> Iterator[tuple[str, CrdRule]]:
    """Every rule in a schema, with its place below it ('' for the node itself)."""
    node = unwrap_nullable(schema)[1]
    for rule in _rules_of(node):
        yield where, rule
    for name, sub in (node.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            yield from _all_rules(sub, f"{where}.{name}")
    for key, suffix in (("items", "[*]"), ("additionalProperties", "[*]")):
        if isinstance(node.get(key), Mapping):
            yield from _all_rules(node[key], where + suffix)
    for junctor in ("allOf", "anyOf", "oneOf"):
        for index, branch in enumerate(node.get(junctor) or ()):
            if isinstance(branch, Mapping):
                yield from _all_rules(branch, f"{where}.{junctor}[{index}]")


def walk(tree: RuleNode, where: str = "") -> Iterator[tuple[str, CrdRule, str]]:
    """Every rule of a tree: (its place, as `.spec.resourceGroups[*]`, the rule, '' or where it is stranded)."""
    for rule in tree.rules:
        yield where, rule, ""
    for place, rule in tree.stranded:
        yield where, rule, place
    for name, child in tree.properties:
        yield from walk(child, f"{where}.{name}")
    if tree.items is not None:
        yield from walk(tree.items, f"{where}[*]")
    if tree.values is not None:
        yield from walk(tree.values, f"{where}[*]")


_TREES: dict[int, tuple[Mapping[str, Any], RuleNode | None]] = {}


def rule_tree(schema: Mapping[str, Any]) -> RuleNode | None:
    """`build`, once per schema object for the process (schemas are read once and never changed)."""
    known = _TREES.get(id(schema))
    if known is None or known[0] is not schema:
        known = (schema, build(schema))
        _TREES[id(schema)] = known
    return known[1]
