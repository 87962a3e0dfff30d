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

from mpigen.check.crdschema import unwrap_nullable

_OLD_SELF = re.compile(r"\boldSelf\b")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


@dataclass(frozen=True)
class CrdRule:
    """One entry of `x-kubernetes-validations`."""

    text: str
    message: str = ""
    message_expression: str = ""
    reason: str = ""
    field_path: str = ""
    optional_old_self: bool = False

    @cached_property
    def transition(self) -> bool:
        """Whether it compares with the old object (`oldSelf` outside string literals): the server evaluates it on
        an update only."""
        return bool(_OLD_SELF.search(_STRING.sub("''", self.text)))

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
    return tuple(CrdRule(str(entry.get("rule", "")), str(entry.get("message") or ""),
                         str(entry.get("messageExpression") or ""), str(entry.get("reason") or ""),
                         str(entry.get("fieldPath") or ""), bool(entry.get("optionalOldSelf")))
                 for entry in node.get("x-kubernetes-validations") or () if isinstance(entry, Mapping))


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
