"""Semantic rules of `mpigen check`: what no schema holds, judged over rendered documents.

Every rule has one signature, `(documents, context) -> findings`, and none of them raises on a malformed
document: a broken document is the schema check's to report, the rules skip whatever they cannot read.
`RULES` lists them in the order their findings are reported:

- "mpi-operator": mpi-operator's own MPIJob validation, with the operator's wording (mpi_operator.py).
- "network": Multus networks a pod names exist as NetworkAttachmentDefinitions, their CNI config is
  readable, and the pod requests the device-plugin resource each NAD needs (network.py).
- "capacity": the extended resources a worker requests fit one node of the pool its chart targets.
- "resources": extended resources are whole numbers, with a limit, and requests equal to it.
- "names": every object's name, namespace, labels and annotation keys and every container's name are what the
  API server takes (`check_object_names`), nothing beside a job takes a name its controller creates for it, and no
  job runs in a namespace of Kubernetes or a controller (`check_job_namespaces`).
- "pod-security": no workload needs a higher Pod Security level than its namespace enforces.
- "scheduling": a gang can complete (mpi-operator #608), a Kueue job's LocalQueue exists and its ClusterQueue
  covers what the job requests, and no job runs at a `system-` priority class (scheduling.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generator.check.rules.capacity import RULE_CAPACITY, check_capacity
from generator.check.rules.goerrors import go_json_string, go_quote
from generator.check.rules.mpi_operator import RULE_MPI_OPERATOR, check_mpijob, check_mpijobs
from generator.check.rules.names import RULE_NAMES, check_job_namespaces, check_object_names, check_reserved_names
from generator.check.rules.network import RULE_NETWORK, check_networks
from generator.check.rules.pod_security import RULE_POD_SECURITY, check_pod_security, workload_pod_security
from generator.check.rules.resources import RULE_RESOURCES, check_extended_resources
from generator.check.rules.scheduling import RULE_SCHEDULING, check_scheduling
from generator.readback.findings import CheckContext, Finding, RenderedObject

__all__ = [
    "RULES",
    "Finding",
    "Rule",
    "check_capacity",
    "check_extended_resources",
    "check_job_namespaces",
    "check_mpijob",
    "check_networks",
    "check_object_names",
    "check_pod_security",
    "check_reserved_names",
    "check_scheduling",
    "go_json_string",
    "go_quote",
    "run_rules",
    "workload_pod_security",
]

RuleCheck = Callable[[list[RenderedObject], CheckContext], list[Finding]]


@dataclass(frozen=True)
class Rule:
    """One rule: its name (the `rule` of its findings), its check, and whether it runs once per document, so
    that a document it fails on costs only that document's findings."""

    name: str
    check: RuleCheck
    per_document: bool = False


# Each check is called through its name in this package when it runs, so replacing `rules.check_capacity`
# replaces the rule (the tests do, to show that a failing rule is reported).
RULES: tuple[Rule, ...] = (
    Rule(RULE_MPI_OPERATOR, lambda documents, context: check_mpijobs(documents, context), per_document=True),
    Rule(RULE_NETWORK, lambda documents, context: check_networks(documents, context)),
    Rule(RULE_CAPACITY, lambda documents, context: check_capacity(documents, context)),
    Rule(RULE_RESOURCES, lambda documents, context: check_extended_resources(documents, context)),
    Rule(RULE_NAMES, lambda documents, context: check_object_names(documents, context)),
    Rule(RULE_NAMES, lambda documents, context: check_reserved_names(documents, context)),
    Rule(RULE_NAMES, lambda documents, context: check_job_namespaces(documents, context)),
    Rule(RULE_POD_SECURITY, lambda documents, context: check_pod_security(documents, context)),
    Rule(RULE_SCHEDULING, lambda documents, context: check_scheduling(documents, context)),
)


def run_rules(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    """Every rule over every document. A rule that fails on input it should have skipped is reported, not raised."""
    findings: list[Finding] = []
    for rule in RULES:
        batches = [[document] for document in documents] if rule.per_document else [documents]
        for batch in batches:
            try:
                findings += rule.check(batch, context)
            except Exception as exc:  # a bug in a rule must not hide the other findings
                findings.append(Finding("", "", "", f"internal error in rule {rule.name}: {exc!r}; please report it",
                                        rule.name))
    return findings
