"""NVIDIA KAI Scheduler: a workload it schedules whose queue, topology or gang KAI cannot honour is taken by the API
server and then waits, Pending, without an error anywhere `kubectl apply` shows one. Under the rule `scheduling`:

- The queue a KAI workload names (`kai.scheduler/queue`, on the workload or else its pods: KAI's podgrouper reads the
  top owner first) is a Queue among the checked objects or `--context`, and a leaf: KAI schedules only in queues no
  other queue names as its `parentQueue`. A Queue's `parentQueue` exists; a Queue has `resources` (KAI's webhook
  refuses one without).
- Its topology annotations name a Topology that exists, and a level of it (a node label or an alias).
- What its pods ask for together (CPU in millicores, memory in megabytes of 10^6 bytes, GPUs: KAI's units) is within
  its queue's and every ancestor's `limit` (-1: none; unset: 0), and, where the job is not preemptible (priority
  value at least 100, or the preemptibility label), within their `quota`: KAI runs such a job only within quota.
- An MPIJob's gang: KAI's podgrouper, not mpi-operator, reads `runPolicy.schedulingPolicy.minAvailable` (else it
  counts every replica) and, under `WaitForWorkersReady`, subtracts the launcher until it exists.
- A Volcano Job has no grouper in KAI: its pods are never one gang.
- No chart creates KAI's own queues or priority classes: KAI's chart does.

Sources: kai-scheduler/KAI-Scheduler @ d5bc503a146317e51037d89775d77172c6d12f71 (generator/vocabulary/kai.py names the
files), pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go (queue, priority class and topology
annotations), pkg/podgrouper/podgrouper/plugins/kubeflow/distributed_common.go and kubeflow/mpi/mpi-grouper.go (the
MPIJob gang), pkg/scheduler/plugins/proportion/capacity_policy/ (max_allowed_check.go, quota_check.go: a job against
its queue and every ancestor), pkg/scheduler/plugins/topology/job_filtering.go ("Requested topology %s does not
exist") and docs/queues/README.md ("Only leaf queues (queues with no children) can be used for scheduling jobs").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mpigen.check.rules.pods import is_kai_workload, is_volcano_job, pod_templates
from mpigen.check.rules.reading import as_dict, as_int, as_str, metadata_name, path_of
from mpigen.check.rules.scheduling import RULE_SCHEDULING
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.support.diagnostics import Severity
from mpigen.vocabulary import kai, mpi_operator
from mpigen.vocabulary import scheduling as vocabulary
from mpigen.vocabulary.dra import GPU_EXTENDED_RESOURCE
from mpigen.vocabulary.mpi_operator import RunPolicyField, SchedulingPolicyField, SpecField
from mpigen.vocabulary.server_values import parse_quantity

QUEUE_GROUP = kai.QUEUE_API_VERSION.split("/")[0]
TOPOLOGY_GROUP = kai.TOPOLOGY_API_VERSION.split("/")[0]
PRIORITY_CLASS_GROUP = vocabulary.PRIORITY_CLASS_API_VERSION.split("/")[0]
OWN_QUEUES = (kai.DEFAULT_QUEUE, kai.DEFAULT_PARENT_QUEUE)
DEFAULT_PRIORITIES = dict(kai.DEFAULT_PRIORITY_CLASSES)
UNITS = {"cpu": "millicores", "memory": "megabytes", "gpu": "GPUs"}


def _group(document: RenderedObject) -> str:
    return document.api_version.rpartition("/")[0]


class _KaiObjects:
    """KAI's Queues and Topologies and the PriorityClasses among the checked and context objects, by name."""

    def __init__(self, documents: list[RenderedObject]) -> None:
        self.queues: dict[str, list[RenderedObject]] = {}
        self.topologies: dict[str, list[RenderedObject]] = {}
        self.priority_classes: dict[str, list[RenderedObject]] = {}
        for document in documents:
            held = {(QUEUE_GROUP, kai.QUEUE): self.queues, (TOPOLOGY_GROUP, kai.TOPOLOGY): self.topologies,
                    (PRIORITY_CLASS_GROUP, vocabulary.PRIORITY_CLASS): self.priority_classes}.get(
                (_group(document), document.kind))
            if held is not None:
                held.setdefault(metadata_name(document), []).append(document)

    @staticmethod
    def seen(found: dict[str, list[RenderedObject]], name: str, document: RenderedObject,
             context: CheckContext) -> RenderedObject | None:
        return next((other for other in found.get(name, ()) if context.same_cluster(document, other)), None)

    def children(self, name: str, document: RenderedObject, context: CheckContext) -> list[str]:
        return sorted(child for child, queues in self.queues.items() for queue in queues
                      if _spec(queue).get("parentQueue") == name and context.same_cluster(document, queue))


def _spec(document: RenderedObject) -> dict[str, Any]:
    return as_dict(document.obj.get("spec")) or {}


def _meta(obj: dict[str, Any], key: str) -> dict[str, Any]:
    return as_dict((as_dict(obj.get("metadata")) or {}).get(key)) or {}


def check_kai(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    known = _KaiObjects([*documents, *context.extra])
    kai_objects = [*(d for found in (known.queues, known.topologies) for ds in found.values() for d in ds),
                   *(d for d in documents if is_kai_workload(d))]
    findings: list[Finding] = []
    for document in documents:
        findings += _check_own_names(document, any(context.same_cluster(document, o) for o in kai_objects))
        if (_group(document), document.kind) == (QUEUE_GROUP, kai.QUEUE):
            findings += _check_queue_object(document, known, context)
        if not is_kai_workload(document):
            continue
        if is_volcano_job(document):
            findings.append(finding(document, path_of(("spec",)), (
                "KAI Scheduler has no grouper for Volcano's Job: it puts the job's pods in one PodGroup of minAvailable "
                "1, so they start one by one, never as a gang; run the MPI job as an MPIJob under KAI"),
                RULE_SCHEDULING, Severity.WARNING))
        findings += _check_topology(document, known, context)
        findings += _check_gang(document)
        findings += _check_queue_of(document, known, context)
    return findings


def _check_own_names(document: RenderedObject, under_kai: bool) -> list[Finding]:
    """KAI's chart creates `default-queue`, `default-parent-queue` and its four priority classes: a chart that does
    too fails on install (`already exists`) or, applied over them, changes what every KAI workload defaults to. A
    PriorityClass of such a name is KAI's only in a cluster where KAI objects or workloads are (`under_kai`)."""
    name = metadata_name(document)
    if (_group(document), document.kind) == (QUEUE_GROUP, kai.QUEUE) and name in OWN_QUEUES:
        what = "Queue"
    elif under_kai and (_group(document), document.kind) == (PRIORITY_CLASS_GROUP, vocabulary.PRIORITY_CLASS) and \
            name in DEFAULT_PRIORITIES:
        what = "PriorityClass"
    else:
        return []
    return [finding(document, path_of(("metadata", "name")), (
        f"{what} {name} is KAI Scheduler's own (its chart creates it): a chart that creates it too fails with "
        f"'{document.kind.lower()}s \"{name}\" already exists' or replaces KAI's; name yours otherwise, or use "
        "KAI's"), RULE_SCHEDULING)]


def _check_queue_object(document: RenderedObject, known: _KaiObjects, context: CheckContext) -> list[Finding]:
    spec = _spec(document)
    findings: list[Finding] = []
    if as_dict(spec.get("resources")) is None:
        findings.append(finding(document, path_of(("spec",)), (
            f"KAI's admission webhook refuses the Queue: {kai.MISSING_RESOURCES}; give it spec.resources (cpu, memory, "
            "gpu, each with quota, limit and overQuotaWeight)"), RULE_SCHEDULING))
    parent = as_str(spec.get("parentQueue"))
    if parent and known.seen(known.queues, parent, document, context) is None and parent != kai.DEFAULT_PARENT_QUEUE:
        findings.append(finding(document, path_of(("spec", "parentQueue")), (
            f"no KAI Queue {parent} (its parentQueue) in this render or the extra manifests (--context); KAI schedules "
            "nothing in a queue whose parent is missing, so its jobs stay Pending; create the parent queue or drop "
            "parentQueue"), RULE_SCHEDULING))
    return findings


def _queue_label(document: RenderedObject) -> tuple[str | None, tuple[str | int, ...]]:
    """The queue KAI reads: the workload's own label, else its pods' (the first template that has one)."""
    label = _meta(document.obj, "labels").get(kai.QUEUE_LABEL)
    if isinstance(label, str):
        return label, ("metadata", "labels", kai.QUEUE_LABEL)
    for template in pod_templates(document):
        label = (as_dict(template.metadata.get("labels")) or {}).get(kai.QUEUE_LABEL)
        if isinstance(label, str):
            return label, (*template.path, "metadata", "labels", kai.QUEUE_LABEL)
    return None, ()


def _check_queue_of(document: RenderedObject, known: _KaiObjects, context: CheckContext) -> list[Finding]:
    name, where = _queue_label(document)
    if name is None:
        return [finding(document, path_of(("metadata", "labels")), (
            f"no {kai.QUEUE_LABEL} label on the {document.kind} or its pods: KAI Scheduler puts it in "
            f"{kai.DEFAULT_QUEUE}, whose quota is 0; label it with the queue it should run in"),
            RULE_SCHEDULING, Severity.WARNING)]
    queue = known.seen(known.queues, name, document, context)
    if queue is None:
        if name == kai.DEFAULT_QUEUE:
            return []  # KAI's chart creates it
        return [finding(document, path_of(where), (
            f"no KAI Queue {name} in this render or the extra manifests (--context): KAI never schedules the job and "
            f"its pods stay Pending; create the Queue or name one that exists"), RULE_SCHEDULING)]
    children = known.children(name, document, context)
    if children or name == kai.DEFAULT_PARENT_QUEUE:
        return [finding(document, path_of(where), (
            f"Queue {name} is a parent queue (of {', '.join(children) or kai.DEFAULT_QUEUE}): KAI schedules only in "
            f"leaf queues, so the job's pods stay Pending; name one of its child queues"), RULE_SCHEDULING)]
    return _check_demand(document, where, queue, known, context)


@dataclass(frozen=True)
class _Demand:
    """What a workload's pods ask for together, in KAI's units, and how many pods that is."""

    amounts: dict[str, Decimal]
    pods: int


def _container_amount(container: dict[str, Any], resource: str) -> Decimal:
    """A container's request of a resource (its limit where it gives no request: the API server copies it)."""
    resources = as_dict(container.get("resources")) or {}
    for section in ("requests", "limits"):
        value = (as_dict(resources.get(section)) or {}).get(resource)
        if value is not None:
            return parse_quantity(value) or Decimal(0)
    return Decimal(0)


def _pod_amounts(template: Any) -> dict[str, Decimal]:
    """One pod's cpu, memory and GPUs in KAI's units: its containers together, or its largest init container."""
    out: dict[str, Decimal] = {}
    for queue_resource, resource, scale in (("cpu", "cpu", Decimal(kai.MILLICORES_PER_CPU)),
                                            ("memory", "memory", Decimal(1) / kai.BYTES_PER_MEMORY_UNIT),
                                            ("gpu", GPU_EXTENDED_RESOURCE, Decimal(1))):
        running = sum((_container_amount(c, resource) for _, c in template.containers), Decimal(0))
        first = max((_container_amount(c, resource) for _, c in template.init_containers), default=Decimal(0))
        out[queue_resource] = max(running, first) * scale
    return out


def _demand(document: RenderedObject) -> _Demand | None:
    """An MPIJob's every pod (the program starts only once all run); any other workload's largest pod."""
    templates = pod_templates(document)
    if not templates:
        return None
    if document.kind != mpi_operator.KIND:
        largest = max((_pod_amounts(t) for t in templates), key=lambda a: (a["gpu"], a["cpu"], a["memory"]))
        return _Demand(largest, 1)
    replicas = as_dict(_spec(document).get(SpecField.MPI_REPLICA_SPECS)) or {}
    total = {resource: Decimal(0) for resource in kai.QUEUE_RESOURCES}
    pods = 0
    for template in templates:
        count = as_int((as_dict(replicas.get(template.role)) or {}).get("replicas"))
        count = mpi_operator.DEFAULT_REPLICAS.get(template.role, 1) if count is None else count
        pods += count
        for resource, amount in _pod_amounts(template).items():
            total[resource] += amount * count
    return _Demand(total, pods)


def _priority(document: RenderedObject, known: _KaiObjects, context: CheckContext) -> tuple[str, int | None]:
    """The PriorityClass KAI gives the workload's PodGroup and its value (None: not known here): the workload's
    `priorityClassName` label, its pods' label, their `priorityClassName`, else its kind's default (`train`, but
    `inference` for a Deployment)."""
    named = _meta(document.obj, "labels").get(kai.PRIORITY_LABEL)
    for template in pod_templates(document):
        if isinstance(named, str):
            break
        named = (as_dict(template.metadata.get("labels")) or {}).get(kai.PRIORITY_LABEL) or \
            template.spec.get("priorityClassName")
    default = kai.INFERENCE_PRIORITY_CLASS if (_group(document), document.kind) in kai.INFERENCE_KINDS else \
        kai.DEFAULT_PRIORITY_CLASS
    name = named if isinstance(named, str) else default
    found = known.seen(known.priority_classes, name, document, context)
    value = as_int(found.obj.get("value")) if found is not None else DEFAULT_PRIORITIES.get(name)
    return name, value


def _non_preemptible(document: RenderedObject, value: int | None) -> bool | None:
    label = _meta(document.obj, "labels").get(kai.PREEMPTIBILITY_LABEL)
    if label in (kai.PREEMPTIBLE, kai.NON_PREEMPTIBLE):
        return label == kai.NON_PREEMPTIBLE
    return None if value is None else value >= kai.NON_PREEMPTIBLE_FROM


def _bound(queue: RenderedObject, resource: str, field: str) -> Decimal | None:
    """A Queue's quota or limit of a resource in KAI's units; None for -1 (unbounded) or a value not a number."""
    entry = as_dict((as_dict(_spec(queue).get("resources")) or {}).get(resource)) or {}
    value = entry.get(field, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value == kai.UNLIMITED:
        return None
    return Decimal(str(value))


def _check_demand(document: RenderedObject, where: tuple[str | int, ...], queue: RenderedObject, known: _KaiObjects,
                  context: CheckContext) -> list[Finding]:
    """The job against its queue and each ancestor: above a `limit` KAI never schedules it (OverLimit); not
    preemptible and above a `quota`, never either (NonPreemptibleOverQuota)."""
    demand = _demand(document)
    if demand is None or as_dict(_spec(queue).get("resources")) is None:
        return []
    priority, value = _priority(document, known, context)
    strict = _non_preemptible(document, value)
    chain: list[RenderedObject] = []
    held: RenderedObject | None = queue
    while held is not None and held not in chain:  # a cycle of parents ends where it comes round
        chain.append(held)
        parent = as_str(_spec(held).get("parentQueue"))
        held = known.seen(known.queues, parent, document, context) if parent else None
    asked = f"its {demand.pods} pods together ask for" if demand.pods > 1 else "its pod asks for"
    findings: list[Finding] = []
    for bounding in chain:
        name = metadata_name(bounding)
        for resource in kai.QUEUE_RESOURCES:
            amount = demand.amounts[resource]
            if amount <= 0:
                continue
            shown = math.ceil(amount)
            limit = _bound(bounding, resource, "limit")
            quota = _bound(bounding, resource, "quota")
            if limit is not None and amount > limit:
                entry = as_dict((as_dict(_spec(bounding).get("resources")) or {}).get(resource)) or {}
                unset = "" if "limit" in entry else " (unset counts as 0)"
                findings.append(finding(document, path_of(where), (
                    f"{asked} {shown} {UNITS[resource]} of {resource}, above the limit {limit}{unset} of KAI Queue "
                    f"{name}: KAI never schedules the job (OverLimit) and its pods stay Pending; raise the queue's "
                    "limit (-1: none) or make the job smaller"), RULE_SCHEDULING))
            elif strict and quota is not None and amount > quota:
                findings.append(finding(document, path_of(where), (
                    f"{asked} {shown} {UNITS[resource]} of {resource}, above the quota {quota} of KAI Queue {name}, "
                    f"and priority class {priority} ({value}) makes it non-preemptible, which KAI runs only within "
                    "quota (NonPreemptibleOverQuota): its pods stay Pending; raise the quota or give the job a "
                    f"preemptible priority class (value below {kai.NON_PREEMPTIBLE_FROM}, such as "
                    f"{kai.DEFAULT_PRIORITY_CLASS})"), RULE_SCHEDULING))
    return findings


def _check_topology(document: RenderedObject, known: _KaiObjects, context: CheckContext) -> list[Finding]:
    """KAI reads the topology annotations of the workload (the top owner) only."""
    annotations = _meta(document.obj, "annotations")
    placements = [(key, value) for key in (kai.REQUIRED_PLACEMENT, kai.PREFERRED_PLACEMENT)
                  if isinstance(value := annotations.get(key), str)]
    name = annotations.get(kai.TOPOLOGY_ANNOTATION)
    at = ("metadata", "annotations")
    if not isinstance(name, str):
        return [finding(document, path_of((*at, key)), (
            f"{key} without {kai.TOPOLOGY_ANNOTATION}: KAI places the job by no Topology and ignores the placement; "
            f"add {kai.TOPOLOGY_ANNOTATION} naming the Topology"), RULE_SCHEDULING, Severity.WARNING)
            for key, _ in placements]
    topology = known.seen(known.topologies, name, document, context)
    if topology is None:
        return [finding(document, path_of((*at, kai.TOPOLOGY_ANNOTATION)), (
            f"no KAI Topology {name} in this render or the extra manifests (--context): KAI says 'Requested topology "
            f"{name} does not exist' and the job's pods stay Pending; create the Topology or name one that exists"),
            RULE_SCHEDULING)]
    levels = [as_dict(level) or {} for level in _spec(topology).get("levels") or [] if isinstance(level, dict)]
    known_levels = {value for level in levels for value in (level.get("nodeLabel"), level.get("alias"))
                    if isinstance(value, str)}
    return [finding(document, path_of((*at, key)), (
        f"{value} is no level of KAI Topology {name} (its levels: "
        f"{', '.join(str(level.get('nodeLabel')) for level in levels)}): KAI finds no domain at it and the job's pods "
        "stay Pending; name one of its levels' node labels"), RULE_SCHEDULING)
        for key, value in placements if value not in known_levels]


def _check_gang(document: RenderedObject) -> list[Finding]:
    """An MPIJob's gang as KAI's podgrouper makes it: `minAvailable`, else every replica; under
    `WaitForWorkersReady`, less the launcher's replicas until the launcher exists."""
    if document.kind != mpi_operator.KIND:
        return []
    spec = _spec(document)
    replicas = as_dict(spec.get(SpecField.MPI_REPLICA_SPECS)) or {}
    counts = {role: as_int((as_dict(held) or {}).get("replicas")) for role, held in replicas.items()}
    workers, launchers = counts.get(mpi_operator.WORKER), counts.get(mpi_operator.LAUNCHER)
    if workers is None or launchers is None:
        return []
    policy = as_dict((as_dict(spec.get(SpecField.RUN_POLICY)) or {}).get(RunPolicyField.SCHEDULING_POLICY)) or {}
    given = as_int(policy.get(SchedulingPolicyField.MIN_AVAILABLE))
    pods = workers + launchers
    where = path_of((*mpi_operator.RUN_POLICY_PATH, RunPolicyField.SCHEDULING_POLICY,
                     SchedulingPolicyField.MIN_AVAILABLE))
    if given is not None and given > pods:
        return [finding(document, where, (
            f"minAvailable {given} is more than the job's {pods} pods ({workers} workers and the launcher): KAI's "
            "gang never completes and no pod starts; set it to the job's pods or leave it out"), RULE_SCHEDULING)]
    waits = spec.get(SpecField.LAUNCHER_CREATION_POLICY) == mpi_operator.WAIT_FOR_WORKERS_READY
    if waits and given is not None and given - launchers < workers:
        return [finding(document, where, (
            f"minAvailable {given}: under WaitForWorkersReady KAI subtracts the launcher until it exists, so its gang "
            f"is {given - launchers} of the {workers} workers, which may start while the rest wait, holding their "
            f"GPUs; set minAvailable to {pods} (workers and launcher) or leave it out"),
            RULE_SCHEDULING, Severity.WARNING)]
    return []
