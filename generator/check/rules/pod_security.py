"""Pod Security admission: a pod that needs more than its namespace enforces is refused, and the MPIJob,
itself accepted, never starts; the level each workload needs is also what the report lists."""

from __future__ import annotations

from mpigen.check.rules.pods import pod_templates
from mpigen.check.rules.reading import as_dict, path_of
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.vocabulary.podsecurity import ENFORCE_LABEL, Level, PodSecurity, combine, evaluate

RULE_POD_SECURITY = "pod-security"


def workload_pod_security(document: RenderedObject) -> PodSecurity | None:
    """The Pod Security level the pods of a workload need; None for objects that make no pods."""
    templates = pod_templates(document)
    if not templates:
        return None
    return combine(evaluate(template.spec) for template in templates)


def _enforced(enforced: dict[tuple[str, str], Level], cluster: str, namespace: str) -> Level | None:
    """The level a namespace enforces for a workload of `cluster`: its own cluster's, else one of unknown origin;
    for a workload of unknown origin, which may be of any cluster, the least strict any cluster enforces there."""
    if cluster:
        return enforced.get((cluster, namespace), enforced.get(("", namespace)))
    levels = [level for (_, name), level in enforced.items() if name == namespace]
    return enforced.get(("", namespace)) or (max(levels) if levels else None)


def check_pod_security(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    """Pod Security admission refuses a pod that needs more than its namespace's `enforce` label allows.

    The MPIJob itself is accepted: only the operator's pods are refused, so the job just never starts.
    """
    findings: list[Finding] = []
    enforced: dict[tuple[str, str], Level] = {}  # (cluster or '', namespace)
    levels = [level.label for level in Level]
    for document in (*documents, *context.extra):
        if document.kind != "Namespace" or document.api_version != "v1":
            continue
        labels = as_dict((as_dict(document.obj.get("metadata")) or {}).get("labels")) or {}
        if ENFORCE_LABEL not in labels:
            continue
        value = labels[ENFORCE_LABEL]
        if value not in levels:
            if document in documents:
                findings.append(finding(document, path_of(("metadata", "labels", ENFORCE_LABEL)),
                                        f"{value!r} is not a Pod Security level; the API server refuses it: "
                                        f"write one of {', '.join(levels)}", RULE_POD_SECURITY))
            continue
        enforced[(context.cluster_of(document), document.name)] = Level[value.upper()]
    for document in documents:
        security = workload_pod_security(document)
        allowed = _enforced(enforced, context.cluster_of(document), document.namespace)
        if security is None or allowed is None or security.level <= allowed:
            continue
        findings.append(finding(
            document, "", f"namespace {document.namespace} enforces Pod Security level {allowed.label}, but these "
            f"pods need {security.level.label} ({'; '.join(security.reasons)}): the API server will refuse to create "
            f"them and the job never starts; raise the namespace's {ENFORCE_LABEL} label to {security.level.label} "
            "(the infra chart mpigen compiles for the cluster does), or ask for less", RULE_POD_SECURITY))
    return findings
