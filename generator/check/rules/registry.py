"""The table of `mpigen check`'s rules (`RULES`, in the order their findings are reported) and the loop that runs
them, so that a rule failing on input it should have skipped costs only its own findings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mpigen.check.cel.crd_rules import RULE_CRD_RULES, check_crd_rules
from mpigen.check.rules.capacity import RULE_CAPACITY, check_capacity
from mpigen.check.rules.devices import RULE_DEVICES, check_devices
from mpigen.check.rules.immutable import RULE_IMMUTABLE, check_immutable
from mpigen.check.rules.kai_scheduler import check_kai
from mpigen.check.rules.mpi_operator import RULE_MPI_OPERATOR, check_mpijobs
from mpigen.check.rules.names import RULE_NAMES, check_job_namespaces, check_object_names, check_reserved_names
from mpigen.check.rules.network import RULE_NETWORK, check_networks
from mpigen.check.rules.pod_security import RULE_POD_SECURITY, check_pod_security
from mpigen.check.rules.pod_spec import RULE_POD_SPEC, check_pod_specs
from mpigen.check.rules.pods import templates_kept
from mpigen.check.rules.quantities import RULE_QUANTITIES, check_quantities
from mpigen.check.rules.resources import RULE_RESOURCES, check_extended_resources
from mpigen.check.rules.scheduling import RULE_SCHEDULING, check_scheduling
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, RuleOutcome

RuleCheck = Callable[[list[RenderedObject], CheckContext], list[Finding] | RuleOutcome]


@dataclass(frozen=True)
class Rule:
    """One rule: its name (the `rule` of its findings), its check, and whether it runs once per document, so
    that a document it fails on costs only that document's findings."""

    name: str
    check: RuleCheck
    per_document: bool = False


# Each check is called through its name in this module when it runs, so replacing `registry.check_capacity`
# replaces the rule (the tests do, to show that a failing rule is reported).
RULES: tuple[Rule, ...] = (
    Rule(RULE_MPI_OPERATOR, lambda documents, context: check_mpijobs(documents, context), per_document=True),
    Rule(RULE_NETWORK, lambda documents, context: check_networks(documents, context)),
    Rule(RULE_CAPACITY, lambda documents, context: check_capacity(documents, context)),
    Rule(RULE_RESOURCES, lambda documents, context: check_extended_resources(documents, context)),
    Rule(RULE_QUANTITIES, lambda documents, context: check_quantities(documents, context), per_document=True),
    Rule(RULE_POD_SPEC, lambda documents, context: check_pod_specs(documents, context), per_document=True),
    Rule(RULE_DEVICES, lambda documents, context: check_devices(documents, context)),
    Rule(RULE_NAMES, lambda documents, context: check_object_names(documents, context)),
    Rule(RULE_NAMES, lambda documents, context: check_reserved_names(documents, context)),
    Rule(RULE_NAMES, lambda documents, context: check_job_namespaces(documents, context)),
    Rule(RULE_IMMUTABLE, lambda documents, context: check_immutable(documents, context)),
    Rule(RULE_POD_SECURITY, lambda documents, context: check_pod_security(documents, context)),
    Rule(RULE_SCHEDULING, lambda documents, context: check_scheduling(documents, context)),
    Rule(RULE_SCHEDULING, lambda documents, context: check_kai(documents, context)),
    Rule(RULE_CRD_RULES, lambda documents, context: check_crd_rules(documents, context)),
)


def run_rules(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    """Every rule over every document: their findings."""
    return list(apply_rules(documents, context).findings)


def apply_rules(documents: list[RenderedObject], context: CheckContext) -> RuleOutcome:
    """Every rule over every document: their findings and notes. A rule that fails on input it should have skipped
    is reported, not raised."""
    findings: list[Finding] = []
    notes: list[str] = []
    with templates_kept():  # a dozen rules read each document's pod templates
        for rule in RULES:
            batches = [[document] for document in documents] if rule.per_document else [documents]
            for batch in batches:
                try:
                    found = rule.check(batch, context)
                except Exception as exc:  # a bug in a rule must not hide the other findings
                    findings.append(Finding("", "", "", f"internal error in rule {rule.name}: {exc!r}; please "
                                            "report it", rule.name))
                    continue
                if isinstance(found, RuleOutcome):
                    findings += found.findings
                    notes += found.notes
                else:
                    findings += found
    return RuleOutcome(tuple(findings), tuple(notes))
