"""The `crd-rules` rule of `mpigen check`: every custom resource judged by the CEL rules (`x-kubernetes-validations`)
of its CRD's schema, as the API server judges it; a transition rule (oldSelf) against the live object of the same
API group, kind, namespace and name given with `--context`, else said in a note, as is every rule mpigen cannot
evaluate."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from mpigen.check.cel.catalog import unsupported_rules_of
from mpigen.check.cel.environment import bindings_problem
from mpigen.check.cel.rules import judge_object
from mpigen.check.cel.tree import RuleNode, rule_tree
from mpigen.check.live_objects import LiveObjects
from mpigen.check.rules.reading import path_of
from mpigen.readback.findings import CheckContext, RenderedObject, RuleOutcome, finding

RULE_CRD_RULES = "crd-rules"

# apiextensions-apiserver pkg/registry/customresource/strategy.go @ 1aa2717a5 (hasBlockingErr): after a NotSupported,
# Required, TooLong, TooMany or TypeInvalid error no rule is evaluated, and this is said (field.Invalid(nil, nil, ...)).
NOT_CHECKED = ("<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
               "correct the existing errors to complete validation")
_VALUES_SHOWN_FROM = (1, 35)
"""apiextensions-apiserver commit 5a4f85785 (kubernetes#132798, #133832, in 1.35): a failed rule's message shows
the value that failed (an object's or a list's omitted) where it showed the value's type."""
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")
_GENERATED_SUFFIX = "xxxxx"
"""Five characters of the alphabet the server draws a generated name's suffix from (apiserver
pkg/storage/names/generate.go: 63-character names, at most 58 of them the prefix)."""


def shows_values(kube_version: str) -> bool:
    """Whether the API server of this version shows a failed rule's value (1.35 on; '' is the newest)."""
    match = _VERSION.match(kube_version.strip())
    return match is None or (int(match[1]), int(match[2])) >= _VALUES_SHOWN_FROM


def _named(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as its rules see it on create: a `generateName` without a `name` has become a name (the server
    generates it before it validates)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("name") or not isinstance(metadata.get("generateName"), str):
        return obj
    return {**obj, "metadata": {**metadata, "name": metadata["generateName"][:58] + _GENERATED_SUFFIX}}


def _as_applied(new: Any, live: Any, top: bool = True) -> Any:
    """The object the server stores when `kubectl apply` sends `new` over `live`: a field `new` leaves out keeps its
    live value (as the immutable rule compares built-in kinds); lists are sent whole. The live status and metadata
    are not the update's (the status is another subresource's; metadata rules see only the name)."""
    if not isinstance(new, dict) or not isinstance(live, dict):
        return new
    merged = {key: value for key, value in live.items() if not top or key not in ("status", "metadata")}
    for key, value in new.items():
        merged[key] = _as_applied(value, live.get(key), top=False) if value is not None else value
    return merged


def check_crd_rules(documents: list[RenderedObject], context: CheckContext) -> RuleOutcome:
    """Findings of every evaluated rule; notes of the rules not evaluated (per kind and rule, with the count)."""
    if context.custom_schemas is not None:
        schemas = context.custom_schemas
    else:
        from mpigen.check.schemas import own_schemas

        schemas = own_schemas()
    live = LiveObjects(context)
    findings = []
    without_live: Counter[tuple[str, str]] = Counter()
    unsupported: Counter[tuple[str, str, str]] = Counter()
    not_installed: Counter[str] = Counter()
    for document in documents:
        obj = document.obj
        if not isinstance(obj, dict) or not isinstance(obj.get("apiVersion"), str) or not isinstance(obj.get("kind"), str):
            continue
        schema = schemas.get((obj["apiVersion"], obj["kind"]))
        tree: RuleNode | None = rule_tree(schema) if schema is not None else None
        if tree is None:
            continue
        if bindings_problem() is not None:
            not_installed[document.kind] += 1
            continue
        if (document.source, document.label) in context.schema_refused:
            findings.append(finding(document, "", NOT_CHECKED, RULE_CRD_RULES))
            continue
        old = live.old_of(document)
        applied = _as_applied(_named(obj), old.obj) if old is not None else _named(obj)
        judgement = judge_object(tree, applied, old.obj if old is not None else None, old is not None,
                                 shows_values=shows_values(context.kube_version_of(document)))
        findings += [finding(document, path_of(failure.path), failure.message, RULE_CRD_RULES)
                     for failure in judgement.failures]
        for rule in dict.fromkeys(judgement.without_old):
            without_live[(document.kind, rule.label)] += 1
        for rule, reason in unsupported_rules_of(tree):
            unsupported[(document.kind, rule.label, reason)] += 1
    notes = [f"{count} {kind}(s): rule '{label}' compares with the live object (oldSelf): not checked; give the "
             "live objects with --context" for (kind, label), count in without_live.items()]
    notes += [f"{count} {kind}(s): rule '{label}' is not checked: it {reason}"
              for (kind, label, reason), count in unsupported.items()]
    if not_installed:
        kinds = ", ".join(f"{count} {kind}(s)" for kind, count in not_installed.items())
        notes.append(f"the CEL rules of their CRDs are not checked for {kinds}: {bindings_problem()}")
    return RuleOutcome(tuple(findings), tuple(notes))
