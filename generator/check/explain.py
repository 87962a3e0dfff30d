"""`mpigen check --explain-rules`: every rule of check's registry, and every CEL rule of the CRD schemas it judges
custom resources by (those shipped, and those of `--crds`), each with its status, as data and as text or JSON."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from mpigen.check.cel.catalog import UNSUPPORTED, RuleListing, list_rules
from mpigen.check.report import RULE_DESCRIPTIONS
from mpigen.check.schemas import SchemaSet, bundled_kube_versions
from mpigen.support.diagnostics import one_line


@dataclass(frozen=True)
class RuleExplanation:
    check_rules: tuple[tuple[str, str], ...]
    """(ID, what it holds) of each rule of `mpigen check`."""
    crd_rules: tuple[RuleListing, ...]
    problems: tuple[str, ...] = ()
    """What could not be read of the --crds."""


def explain_rules(crds: tuple[Path, ...] = ()) -> RuleExplanation:
    """The rules, with the CEL rules of mpigen's own CRD schemas and of the CRDs in `crds` (which replace mpigen's
    schema of the same apiVersion and kind, as in a check)."""
    schema_set = SchemaSet(bundled_kube_versions()[-1])
    problems = schema_set.add_crds(list(crds))
    return RuleExplanation(tuple(RULE_DESCRIPTIONS.items()), tuple(list_rules(schema_set.custom_schemas)),
                           tuple(problems))


def explanation_text(explanation: RuleExplanation) -> str:
    lines = ["Rules of mpigen check (the `rule` of each finding):"]
    lines += [f"  {rule}: {description}" for rule, description in explanation.check_rules]
    counts = Counter(listing.status for listing in explanation.crd_rules)
    lines.append(f"CEL rules (x-kubernetes-validations) of the CRD schemas, judged by rule crd-rules: "
                 f"{len(explanation.crd_rules)}, " + ", ".join(f"{count} {status}" for status, count in counts.items()))
    for listing in explanation.crd_rules:
        status = f"{UNSUPPORTED}: {listing.reason}" if listing.status == UNSUPPORTED else listing.status
        what = f"'{listing.message}' ({listing.rule})" if listing.message else listing.rule
        lines.append(one_line(f"  {listing.kind} {listing.api_version} {listing.path or '(root)'}: {what}: {status}"))
    lines += [one_line(f"not read: {problem}") for problem in explanation.problems]
    return "\n".join(lines) + "\n"


def explanation_json(explanation: RuleExplanation) -> str:
    return json.dumps({"rules": [{"rule": rule, "description": description}
                                 for rule, description in explanation.check_rules],
                       "crdRules": [{"apiVersion": listing.api_version, "kind": listing.kind, "path": listing.path,
                                     "rule": listing.rule, "message": listing.message, "status": listing.status,
                                     "reason": listing.reason} for listing in explanation.crd_rules],
                       "problems": list(explanation.problems)}, indent=2) + "\n"

