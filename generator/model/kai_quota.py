"""KAI Scheduler's queues in its own units: what one node offers a Queue (CPU in millicores, memory in megabytes of
10^6 bytes, GPUs in devices), a queue's quota and limit from its nodes, and a job's demand in the same units, so
`validate` refuses a job its queue can never run with the very numbers the infra chart's Queues carry.

KAI's quotas are cluster-wide (a Queue has one `quota` per resource, whatever the pool): a queue's quota is the sum
over the pools it covers of its nodes times what one node offers (kai-scheduler/KAI-Scheduler
docs/queues/README.md @ d5bc503a146317e51037d89775d77172c6d12f71).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from mpigen.model.admission import CPU, MEMORY, QueueDecl
from mpigen.model.cluster import KaiResource
from mpigen.vocabulary import kai
from mpigen.vocabulary.kubernetes import exact

GPU = "gpu"
RESOURCES = (CPU, MEMORY, GPU)
"""The resources of a KAI Queue's `spec.resources`, in the order it writes them."""
UNITS = {CPU: "millicores", MEMORY: "MB", GPU: "GPUs"}
"""How `plan` and messages name each resource's unit."""
BYTES_PER_GIB = 2**30


def node_offer(resources: Iterable[tuple[str, int, str]], gpu_resource: str | None) -> dict[str, int]:
    """What one node offers a KAI Queue, from `admission.node_offer`'s resources (CPUs, GiB of memory, the GPU
    resource `gpu_resource`): millicores, whole megabytes (rounded down: a quota never promises a byte the node does
    not have) and GPUs. A resource the node does not say (CPUs of hardware without `coresPerSocket`) is left out."""
    offer: dict[str, int] = {}
    for resource, count, _ in resources:
        if resource == CPU:
            offer[CPU] = count * kai.MILLICORES_PER_CPU
        elif resource == MEMORY:
            offer[MEMORY] = count * BYTES_PER_GIB // kai.BYTES_PER_MEMORY_UNIT
        elif resource == gpu_resource:
            offer[GPU] = count
    offer.setdefault(GPU, 0)
    return offer


def queue_resources(queue: QueueDecl, offers: Mapping[str, Mapping[str, int]]) -> tuple[KaiResource, ...]:
    """A leaf queue's resources: its nodes of each pool it covers times what a node of the pool offers (`offers`, by
    pool), summed; its limit likewise with the nodes it may borrow (`borrowNodes`) added, or unlimited where it
    declares none."""
    borrows = bool(queue.borrow_nodes)
    found = []
    for resource in RESOURCES:
        quota = sum(offers[pool].get(resource, 0) * nodes for pool, nodes in queue.nodes)
        limit = sum(offers[pool].get(resource, 0) * (nodes + (queue.borrowable(pool) or 0))
                    for pool, nodes in queue.nodes) if borrows else kai.UNLIMITED
        found.append(KaiResource(resource, quota, limit))
    return tuple(found)


def parent_resources(children: Iterable[tuple[KaiResource, ...]]) -> tuple[KaiResource, ...]:
    """A cohort's parent queue: its children's quotas summed, no limit of its own."""
    totals = dict.fromkeys(RESOURCES, 0)
    for resources in children:
        for entry in resources:
            totals[entry.resource] += entry.quota
    return tuple(KaiResource(resource, totals[resource], kai.UNLIMITED) for resource in RESOURCES)


@exact
def demand(asked: Mapping[str, Decimal], gpu_resource: str | None) -> dict[str, Decimal]:
    """A demand in `admission.worker_demand`'s units (CPUs, GiB, the GPU resource) in KAI's: millicores, megabytes,
    GPUs; resources a KAI Queue does not count (rail devices) are left out."""
    found: dict[str, Decimal] = {}
    for resource, amount in asked.items():
        if resource == CPU:
            found[CPU] = amount * kai.MILLICORES_PER_CPU
        elif resource == MEMORY:
            found[MEMORY] = amount * BYTES_PER_GIB / kai.BYTES_PER_MEMORY_UNIT
        elif resource == gpu_resource:
            found[GPU] = amount
    return found


@dataclass(frozen=True)
class KaiShortfall:
    """Why KAI never runs a job in its queue: `resource` asked beyond the queue's `limit`, or (`within_quota`) beyond
    its `quota` while the job's priority is non-preemptible, which KAI runs only within quota."""

    resource: str
    asked: Decimal
    bound: int
    within_quota: bool


def non_preemptible(priority: int) -> bool:
    """A PodGroup of at least this priority is not preemptible, and KAI runs it only within its queue's quota
    (kai-scheduler/KAI-Scheduler pkg/common/podgroup/preemptible.go @ d5bc503a146317e51037d89775d77172c6d12f71)."""
    return priority >= kai.NON_PREEMPTIBLE_FROM


@exact
def shortfall(resources: Iterable[KaiResource], asked: Mapping[str, Decimal], priority: int) -> KaiShortfall | None:
    """The first resource of `asked` (the job's pods together, in KAI's units) above its queue's limit, or above its
    quota for a non-preemptible job; None where KAI can run the job."""
    for entry in resources:
        amount = asked.get(entry.resource, Decimal(0))
        if entry.limited and amount > entry.limit:
            return KaiShortfall(entry.resource, amount, entry.limit, False)
        if non_preemptible(priority) and amount > entry.quota:
            return KaiShortfall(entry.resource, amount, entry.quota, True)
    return None


def priority_value(name: str | None, declared: Mapping[str, int]) -> int:
    """The value of a job's priority class under KAI: a declared class's, else KAI's default class of that name, else
    (no class) the MPIJob default `train`."""
    defaults = dict(kai.DEFAULT_PRIORITY_CLASSES)
    chosen = name if name is not None else kai.DEFAULT_PRIORITY_CLASS
    return declared.get(chosen, defaults.get(chosen, defaults[kai.DEFAULT_PRIORITY_CLASS]))
