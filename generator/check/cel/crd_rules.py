"""The `crd-rules` rule of `mpigen check`: every custom resource judged by the CEL rules (`x-kubernetes-validations`)
of its CRD's schema, as the API server judges it; a transition rule (oldSelf) against the live object of the same
API group, kind, namespace and name given with `--context`, else said in a note, as is every rule mpigen cannot
evaluate."""

from __future__ import annotations

from collections import Counter

from mpigen.check.cel.catalog import unsupported_rules_of
from mpigen.check.cel.environment import bindings_problem
from mpigen.check.cel.rules import judge_object
from mpigen.check.cel.tree import RuleNode, rule_tree
from mpigen.check.live_objects import LiveObjects
from mpigen.check.rules.reading import path_of
from mpigen.readback.findings import CheckContext, RenderedObject, RuleOutcome, finding

RULE_CRD_RULES = "crd-rules"

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
        old = live.old_of(document)
        judgement = judge_object(tree, obj, old.obj if old is not None else None, old is not None)
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
