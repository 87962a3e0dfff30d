"""Which live nodes a pool's selector picks, and what they hold for a job's workers: what `check --context` and
`plan --context` both read, so that they count a pool's live nodes the same way.

A pool's selector is its hardware's `nodeLabels` plus its own (`NodePool.node_selector`); the workers carry it as
their nodeSelector and the tolerations of the pool's taints, and ask for GPUs and each rail's device
(`extended_ask`). A node holds a worker when the selector picks it, every NoSchedule/NoExecute taint of it is
tolerated, and it offers every extended resource asked in the amount asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from mpigen.inventory.nodes import LiveNode, read_node, selects, untolerated
from mpigen.model import Cluster, Job, stated
from mpigen.providers import pod_network

NODE_NAME_FIELD = "metadata.name"
"""The one field a nodeSelectorTerm's matchFields may name (Kubernetes' NodeSelectorRequirement)."""


def live_nodes(objects: Iterable[tuple[Mapping[str, Any], str]]) -> list[LiveNode]:
    """The Nodes among exported objects, each with the file it came from; each name once (the first export wins)."""
    found: dict[str, LiveNode] = {}
    for obj, source in objects:
        node = read_node(obj, source)
        if node is not None:
            found.setdefault(node.name, node)
    return list(found.values())


def picked(selector: Mapping[str, str], nodes: Iterable[LiveNode]) -> tuple[LiveNode, ...]:
    """The nodes a nodeSelector picks."""
    return tuple(node for node in nodes if selects(selector, node.labels))


def may_be_of(cluster: Cluster, nodes: Iterable[LiveNode]) -> bool:
    """Whether Nodes of unknown origin may be the cluster's: some pool of it picks one, or would but for one label
    (the drift `keeping_out` names). An export is of one cluster (kubectl's current context), so in a fleet of
    several a cluster whose pools are nowhere near any node exported is not the one exported: it is neither judged
    nor counted against them (`--cluster NAME=PATH` says it outright)."""
    selectors = [dict(pool.node_selector) for pool in cluster.pools]
    return any(nearly_selects(selector, node) for node in nodes for selector in selectors)


def nearly_selects(selector: Mapping[str, str], node: LiveNode) -> bool:
    """Whether a nodeSelector picks the node, or would but for one label: the node is of the cluster the selector
    was written for, whatever drifted."""
    return sum(node.labels.get(key) != value for key, value in selector.items()) <= 1


def selector_text(selector: Mapping[str, str]) -> str:
    """`key=value, ...` in key order, as messages name a selector."""
    return ", ".join(f"{key}={value}" for key, value in sorted(selector.items())) or "no labels"


def keeping_out(selector: Mapping[str, str], nodes: Iterable[LiveNode]) -> tuple[str, str] | None:
    """The one label of a selector that keeps nodes out of the pool, where one does: the label no node carries when
    the selector picks none, or the one a node the selector leaves out lacks while it carries every other label of
    it. None where no single label accounts for it (the nodes are simply not there). `nodes`: those no other pool
    picks, so that a node of a neighbouring pool that differs by one label is not taken for this pool's."""
    nodes = tuple(nodes)
    suspects: set[tuple[str, str]] = set()
    if len(selector) > 1:
        for node in nodes:
            lacking = [(key, value) for key, value in selector.items() if node.labels.get(key) != value]
            if len(lacking) == 1:
                suspects.add(lacking[0])
    if not picked(selector, nodes):
        suspects |= {(key, value) for key, value in selector.items()
                     if not any(node.labels.get(key) == value for node in nodes)}
    return next(iter(suspects)) if len(suspects) == 1 else None


def extended_ask(job: Job) -> dict[str, int]:
    """The extended resources one worker of a job asks for: its GPUs and its provider's device of each rail. Not the
    devices it claims through DRA (`job.devices`): nodes do not offer those as extended resources."""
    asked: dict[str, int] = {}
    if job.uses_gpus and job.devices is None:
        asked[stated(job.pool.hardware.gpu).resource] = job.gpus_per_worker
    for resource, count in pod_network(job, job.name).limits:
        asked[resource] = asked.get(resource, 0) + count
    return asked


def workers_held(node: LiveNode, ask: Mapping[str, int], tolerations: Iterable[Mapping[str, Any]], most: int) -> int:
    """How many workers asking `ask` a node holds, at most `most`: none where a taint of it is not tolerated or it
    lacks a resource asked. Counted as the node is meant to be: a cordoned or failing node's state is not what
    check judges (plan counts only the nodes that take pods now)."""
    if untolerated(tolerations, node.placement_taints):
        return 0
    held = most
    for resource, amount in ask.items():
        if amount <= 0:
            continue
        offered = node.offers(resource) or 0
        held = min(held, offered // amount)
    return max(held, 0)


def short_of(node: LiveNode, ask: Mapping[str, int]) -> list[str]:
    """The resources asked that a node does not offer in the amount asked, as `name (asks N, offers M)`."""
    return [f"{resource} (asks {amount}, offers {node.offers(resource) or 0})" for resource, amount in sorted(ask.items())
            if amount > 0 and (node.offers(resource) or 0) < amount]


def affinity_selects(node_affinity: Any, node: LiveNode) -> bool:
    """Whether a pod's required node affinity admits a node: any of its nodeSelectorTerms, each all of its
    matchExpressions (on the node's labels: In, NotIn, Exists, DoesNotExist, Gt, Lt) and matchFields (on its
    `metadata.name`); an empty term admits no node (Kubernetes' NodeSelectorTerm), no such affinity every node."""
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") \
        if isinstance(node_affinity, Mapping) else None
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    if not isinstance(terms, list) or not terms:
        return True
    return any(_term(term, node) for term in terms)


def _term(term: Any, node: LiveNode) -> bool:
    if not isinstance(term, Mapping):
        return False
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not isinstance(expressions, list) or not isinstance(fields, list) or (not expressions and not fields):
        return False
    return all(_expression(expression, node.labels) for expression in expressions) \
        and all(_expression(expression, {NODE_NAME_FIELD: node.name}) for expression in fields)


def _expression(expression: Any, labels: Mapping[str, str]) -> bool:
    if not isinstance(expression, Mapping):
        return False
    key, operator = expression.get("key"), expression.get("operator")
    values = [str(v) for v in expression.get("values") or []]
    if not isinstance(key, str):
        return False
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(values) == 1:
        have, bound = _integer(labels[key]), _integer(values[0])
        if have is not None and bound is not None:
            return have > bound if operator == "Gt" else have < bound
    return False


_INTEGER = re.compile(r"[+-]?[0-9]+")


def _integer(text: str) -> int | None:
    """A decimal integer as Kubernetes parses a Gt/Lt operand (Go's ParseInt, base 10), or None."""
    return int(text) if _INTEGER.fullmatch(text) else None
