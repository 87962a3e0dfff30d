"""`check --context` with live Nodes, for what no profile describes: the pods of hand-written charts and manifests
(their nodeSelector and required node affinity, tolerations and extended resource requests) and every
NetworkAttachmentDefinition's device resource, judged against the nodes of their cluster and reported at the
chart line, as check reports any rendered object."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mpigen.check.drift import RULE_DRIFT
from mpigen.check.rules.pods import PodTemplate, is_extended_resource, pod_requests, pod_templates
from mpigen.check.rules.reading import as_dict, as_int, path_of
from mpigen.inventory import LiveNode, untolerated
from mpigen.inventory.pools import affinity_selects, nearly_selects, picked, selector_text, workers_held
from mpigen.readback.findings import Finding, RenderedObject, finding
from mpigen.support.diagnostics import names_text
from mpigen.vocabulary.multus import NAD_KIND, RESOURCE_NAME_ANNOTATION

NodesOf = Callable[[RenderedObject], list[LiveNode]]
"""The live nodes of a document's cluster."""


def judge_pods(documents: Iterable[RenderedObject], nodes_of: NodesOf, reported: set[str],
               surely_of: Callable[[RenderedObject], bool] = lambda _: True) -> list[Finding]:
    """Each pod template: some node takes it (selector, affinity, taints), offers what it asks, and its replicas fit.
    `reported`: resources found missing, added to (a NAD needing one is the same root cause). `surely_of`: whether
    the nodes are surely of the document's cluster; where not (several clusters, the nodes said to be of none), a
    pod whose nodeSelector no node nearly matches is of a cluster not exported, and not judged."""
    findings: list[Finding] = []
    for document in documents:
        templates = pod_templates(document)
        nodes = nodes_of(document) if templates else []
        for template in templates if nodes else ():
            findings += _judge_template(template, nodes, reported, surely_of(document))
    return findings


def _judge_template(template: PodTemplate, nodes: list[LiveNode], reported: set[str], sure: bool) -> list[Finding]:
    document, spec = template.document, template.spec
    selector = {k: v for k, v in (as_dict(spec.get("nodeSelector")) or {}).items() if isinstance(v, str)}
    affinity = (as_dict(as_dict(spec.get("affinity")) or {}) or {}).get("nodeAffinity")
    chosen = [node for node in picked(selector, nodes) if affinity_selects(affinity, node)]
    if not chosen and not sure and not any(nearly_selects(selector, node) for node in nodes):
        return []
    if not chosen:
        return [finding(document, path_of((*template.path, "spec", "nodeSelector" if selector else "affinity")),
                        f"no live node matches the pod's nodeSelector ({selector_text(selector)})"
                        + (" and required node affinity" if affinity else "") + "; its pods never schedule",
                        RULE_DRIFT)]
    raw = spec.get("tolerations")
    given = [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
    open_nodes = [node for node in chosen if not untolerated(given, node.placement_taints)]
    if not open_nodes:
        taints = sorted({f"{t.key}:{t.effect}" for node in chosen for t in untolerated(given, node.placement_taints)})
        return [finding(document, path_of((*template.path, "spec", "tolerations" if given else "nodeSelector")),
                        f"every node the pod may run on ({names_text([n.name for n in chosen])}) carries a taint it "
                        f"does not tolerate ({', '.join(taints)}); its pods never schedule", RULE_DRIFT)]
    asks: dict[str, int] = {}
    findings = []
    for resource, asked in sorted(pod_requests(template).items()):
        if not is_extended_resource(resource) or not asked.total:
            continue
        asks[resource] = asked.total
        if not any(node.offers(resource) for node in open_nodes):
            reported.add(resource)
            findings.append(finding(document, path_of(asked.paths[0]), (
                f"the pod requests {resource}, which none of the live nodes it may run on "
                f"({names_text([n.name for n in open_nodes])}) advertises; its pods stay Pending"), RULE_DRIFT))
    replicas = _replicas(template)
    held = sum(workers_held(node, asks, given, replicas) for node in open_nodes)
    if not findings and held < replicas:
        findings.append(finding(document, path_of(template.path), (
            f"{replicas} pods asking {selector_text({k: str(v) for k, v in asks.items()})} fit {held} at once on the live "
            f"nodes they may run on ({names_text([n.name for n in open_nodes])})"), RULE_DRIFT))
    return findings


def _replicas(template: PodTemplate) -> int:
    """The pods a template makes: the `replicas` beside it (an MPIJob's replica spec, a Volcano task, a workload's
    spec), else one."""
    held: Any = template.document.obj
    for part in template.path[:-1]:
        if isinstance(held, dict):
            held = held.get(part)
        else:
            held = held[part] if isinstance(held, list) and isinstance(part, int) and part < len(held) else None
    count = as_int(held.get("replicas")) if isinstance(held, dict) and template.path else None
    return count if count is not None and count >= 0 else 1


def judge_nads(documents: Iterable[RenderedObject], nodes_of: NodesOf, reported: set[str]) -> list[Finding]:
    """Each NetworkAttachmentDefinition's `resourceName` is advertised by some live node of its cluster (one whose
    resource is already reported missing is that finding's)."""
    findings = []
    for document in documents:
        if document.kind != NAD_KIND:
            continue
        resource = (as_dict((as_dict(document.obj.get("metadata")) or {}).get("annotations")) or {}).get(
            RESOURCE_NAME_ANNOTATION)
        nodes = nodes_of(document)
        if not isinstance(resource, str) or not resource or resource in reported or not nodes:
            continue
        if not any(node.offers(resource) for node in nodes):
            reported.add(resource)
            findings.append(finding(document, path_of(("metadata", "annotations", RESOURCE_NAME_ANNOTATION)), (
                f"the network needs {resource}, which no live node advertises; pods attaching it stay Pending"),
                RULE_DRIFT))
    return findings
