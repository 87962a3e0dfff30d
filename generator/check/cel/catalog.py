"""The status of each CEL rule of a set of CRD schemas: evaluated, judged only against a live object, or unsupported
and why; `check --explain-rules` lists it, and the crd-rules check notes what it could not evaluate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpigen.check.cel.environment import Unsupported, compile_rule
from mpigen.check.cel.tree import CrdRule, RuleNode, rule_tree, walk

EVALUATED = "evaluated"
LIVE_ONLY = "judged only against a live object (oldSelf)"
UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class RuleListing:
    """One rule of one served version of a CRD, as `--explain-rules` lists it."""

    api_version: str
    kind: str
    path: str
    """Where it sits, as `.spec.resourceGroups[*]`; '' for the root."""
    rule: str
    message: str
    status: str
    reason: str = ""
    """Why it is unsupported ('' otherwise)."""


def rule_status(rule: CrdRule, stranded: str = "") -> tuple[str, str]:
    """(status, reason) of one rule; `stranded`: where in a junctor branch it sits, when it does."""
    if stranded:
        return UNSUPPORTED, (f"sits in {stranded}: mpigen evaluates the rules of a node and of its allOf branches' "
                             "roots only (the API server does not evaluate anyOf/oneOf rules)")
    compiled = compile_rule(rule.text)
    if isinstance(compiled, Unsupported):
        return UNSUPPORTED, compiled.reason
    if rule.optional_old_self:
        return UNSUPPORTED, "optionalOldSelf: the CEL bindings cannot give oldSelf as an optional value"
    if rule.reads_typed:
        return UNSUPPORTED, (f"reads {rule.reads_typed}, which the API server gives CEL as that type: the CEL bindings "
                             "take no duration, timestamp or bytes value as input")
    return (LIVE_ONLY, "") if rule.transition else (EVALUATED, "")


def unsupported_rules(tree: RuleNode) -> list[tuple[CrdRule, str]]:
    """The rules of a tree mpigen does not evaluate, each with the reason."""
    found = []
    for _, rule, stranded in walk(tree):
        status, reason = rule_status(rule, stranded)
        if status == UNSUPPORTED:
            found.append((rule, reason))
    return found


_UNSUPPORTED: dict[int, tuple[RuleNode, list[tuple[CrdRule, str]]]] = {}


def unsupported_rules_of(tree: RuleNode) -> list[tuple[CrdRule, str]]:
    """`unsupported_rules`, once per tree for the process (a tree is built once per schema and never changed)."""
    known = _UNSUPPORTED.get(id(tree))
    if known is None or known[0] is not tree:
        known = (tree, unsupported_rules(tree))
        _UNSUPPORTED[id(tree)] = known
    return known[1]


def list_rules(schemas: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[RuleListing]:
    """Every CEL rule of these schemas (by (apiVersion, kind)), sorted by kind, apiVersion and place."""
    listings = []
    for (api_version, kind), schema in sorted(schemas.items(), key=lambda item: (item[0][1], item[0][0])):
        tree = rule_tree(schema)
        if tree is None:
            continue
        for path, rule, stranded in walk(tree):
            status, reason = rule_status(rule, stranded)
            listings.append(RuleListing(api_version, kind, path, rule.text.strip(), rule.message.strip(), status,
                                        reason))
    return listings
