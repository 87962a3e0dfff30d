"""Gang scheduling and queue admission, computed the same way for validation and for the model.

Pure functions over plain profile data (already schema-valid), like `derive`: what one node of a pool offers
(the unit of every queue's quota), the queues a cluster declares with their defaults, and the pods, resources
and minimum gang of a job, so `validate` can refuse a job no queue can ever admit with the very numbers the
infra chart's Volcano Queues and Kueue ClusterQueues carry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mpigen.model import claimed, defaults, derive, names
from mpigen.model.cluster import Dra
from mpigen.vocabulary import dra, kai, mpi_operator
from mpigen.vocabulary.kubernetes import exact, quantity

NONE = "none"
VOLCANO = "volcano"
COSCHEDULING = "coscheduling"
KUEUE = "kueue"
KAI = "kai"
GANG_SCHEDULERS = (VOLCANO, COSCHEDULING)
"""Schedulers mpi-operator gangs through a PodGroup it creates (`--gang-scheduling`), with
`runPolicy.schedulingPolicy`."""
QUEUED = (VOLCANO, KUEUE, KAI)
"""Schedulers with queues."""
MIN_AVAILABLE_READERS = (VOLCANO, COSCHEDULING, KAI)
"""Schedulers whose PodGroup takes `runPolicy.schedulingPolicy.minAvailable`: mpi-operator's (volcano,
coscheduling), or KAI's podgrouper, which reads it off the MPIJob."""
DEFAULT_COSCHEDULING_SCHEDULER = "scheduler-plugins-scheduler"

CPU = "cpu"
MEMORY = "memory"

# How many containers of a node may share one rail's HCA under rdma-shared-dev-plugin (its own example's
# `rdmaHcaMax`): the quota of a shared rail device is this many per node.
SHARED_RAIL_DEVICES = 1000


def scheduler_of(cluster: dict[str, Any]) -> str:
    return str(cluster.get("scheduling", {}).get("scheduler", NONE))


def coscheduling_scheduler(cluster: dict[str, Any]) -> str:
    return str(cluster.get("scheduling", {}).get("schedulerName", DEFAULT_COSCHEDULING_SCHEDULER))


def kai_scheduler(cluster: dict[str, Any]) -> str:
    """The `schedulerName` of a kai cluster's pods: the profile's, else KAI's default."""
    return str(cluster.get("scheduling", {}).get("schedulerName", kai.SCHEDULER_NAME))


def vfs_per_node(num_vfs: int | None, gpus: int) -> int:
    """VFs on each rail's PF: the profile's `numVfs`, else one per GPU of the node, at least one (what the
    sriov-network-operator policies create, and the count a sriov-device-plugin cluster is assumed to have made)."""
    return num_vfs if num_vfs is not None else max(gpus, 1)


def rail_devices_per_node(exclusive_devices: bool, network: dict[str, Any], gpus: int) -> int:
    """Devices of one rail a node offers: its VFs, or, for a device shared by the node's pods, the plugin's
    sharing limit."""
    if not exclusive_devices:
        return SHARED_RAIL_DEVICES
    return vfs_per_node(network.get("numVfs"), gpus)


@dataclass(frozen=True)
class NodeOffer:
    """What one node of a pool offers to queues: each resource, as an int in its unit (`unit`: '' or 'Gi')."""

    resources: tuple[tuple[str, int, str], ...]
    """cpu only where the hardware says its cores (validate refuses a queued pool whose hardware does not)."""
    claimed: tuple[str, ...] = ()
    """The resources of `resources` that pods claim through DRA rather than request (model/claimed.py)."""

    def amount(self, resource: str) -> int | None:
        return next((count for name, count, _ in self.resources if name == resource), None)


def node_offer(hardware: dict[str, Any], rail_resources: list[str], exclusive_devices: bool,
               network: dict[str, Any], claims: Dra | None = None, nics_claimed: bool = False) -> NodeOffer:
    """CPUs (logical), memory (GiB), the GPU resource and one device pool per rail the pool carries, in that
    order. `rail_resources`: the full resource names of the rails whose NIC the hardware has. On a cluster that
    allocates through DRA (`claims`), the GPUs, the rails' NICs where they are claimed too (`nics_claimed`: the
    dranet provider) and the ComputeDomain channel are offered under the logical resources Kueue counts claims by."""
    resources: list[tuple[str, int, str]] = []
    if "coresPerSocket" in hardware["cpu"]:
        resources.append((CPU, derive.logical_cpus(hardware), ""))
    resources.append((MEMORY, int(hardware["memoryGiB"]), "Gi"))
    gpus = derive.gpu_count(hardware)
    if claims is None:
        devices: tuple[tuple[str, int], ...] = ()
        if gpus:
            resources.append((hardware["gpu"].get("resource", derive.DEFAULT_GPU_RESOURCE), gpus, ""))
    else:
        devices = claimed.node_devices(claims, hardware, len(rail_resources) if nics_claimed else 0)
        resources += [(name, count, "") for name, count in devices if name == dra.KUEUE_GPU_RESOURCE]
    if not (claims and nics_claimed):
        resources += [(rail, rail_devices_per_node(exclusive_devices, network, gpus), "") for rail in rail_resources]
    resources += [(name, count, "") for name, count in devices if name != dra.KUEUE_GPU_RESOURCE]
    return NodeOffer(tuple(resources), tuple(name for name, _ in devices))


def pool_offer(cluster: dict[str, Any], hardware: dict[str, Any], prefix: str, exclusive_devices: bool,
               nics_claimed: bool) -> NodeOffer:
    """`node_offer` of one node of a pool of `hardware` in `cluster`: its rails, network and `dra`."""
    return node_offer(hardware, rail_resource_names(cluster, hardware, prefix), exclusive_devices,
                      cluster.get("network", {}), claimed.dra_of(cluster), nics_claimed)


def counted(resources: tuple[tuple[str, int, str], ...], claimed_resources: tuple[str, ...],
            scheduler: str) -> tuple[tuple[str, int, str], ...]:
    """What a scheduler's queues count of a node's offer: Kueue counts the devices pods claim through DRA (by its
    deviceClassMappings); Volcano's queues count only what pods request, and a claim is no request
    (volcano-sh/volcano #4400), so a capability holding the claimed GPUs would state a limit Volcano never applies."""
    if scheduler == KUEUE:
        return resources
    return tuple(entry for entry in resources if entry[0] not in claimed_resources)


@dataclass(frozen=True)
class QueueDecl:
    """A queue as the cluster declares it, defaults filled in."""

    name: str
    namespaces: tuple[str, ...]
    nodes: tuple[tuple[str, int], ...]
    """(pool, nodes of it in the queue's quota), in the cluster's pool order; pools left out are not covered."""
    borrow_nodes: tuple[tuple[str, int], ...]
    cohort: str | None
    weight: int | None
    path: tuple[str | int, ...]
    priority: int | None = None
    """kai: the Queue's `spec.priority` (over-quota resources go first to higher ones); None: KAI's default."""
    """Where the profile declares it (() for the implicit queue)."""

    def covers(self, pool: str) -> bool:
        return any(name == pool for name, _ in self.nodes)

    def nodes_of(self, pool: str) -> int:
        return dict(self.nodes).get(pool, 0)

    def borrowable(self, pool: str) -> int | None:
        """Nodes of `pool` the queue may borrow; None: no limit of its own."""
        return dict(self.borrow_nodes).get(pool)


def queues(cluster: dict[str, Any]) -> list[QueueDecl]:
    """The queues of a volcano, kueue or kai cluster. A kueue or kai cluster that declares none gets one, named after
    the cluster, covering every pool and namespace; a volcano cluster's jobs then go to Volcano's own `default`."""
    scheduling = cluster.get("scheduling", {})
    scheduler = scheduler_of(cluster)
    pools = [(pool["name"], int(pool["nodes"])) for pool in cluster["nodePools"]]
    declared = scheduling.get("queues")
    if not declared:
        if scheduler in (KUEUE, KAI):
            return [QueueDecl(cluster["name"], tuple(cluster["namespaces"]), tuple(pools), (), None, None, ())]
        return []
    found = []
    for i, queue in enumerate(declared):
        given = queue.get("nodes")
        nodes = tuple((name, int(given[name])) for name, _ in pools if name in given) if given is not None \
            else tuple(pools)
        borrow = queue.get("borrowNodes", {})
        found.append(QueueDecl(queue["name"], tuple(queue.get("namespaces", cluster["namespaces"])), nodes,
                               tuple((name, int(borrow[name])) for name, _ in pools if name in borrow),
                               queue.get("cohort"), queue.get("weight"), ("scheduling", "queues", i),
                               queue.get("priority")))
    return found


@dataclass(frozen=True)
class ClusterQueues:
    """A cluster's queues (`queues`) and what each may borrow, worked out once for the whole cluster: every job of
    the cluster asks which queue is its own and what that queue can reach, and a cluster of 2,000 queues, declared
    and summed anew for each of 1,000 jobs, took 94 s to validate. Build it with `cluster_queues`."""

    declared: tuple[QueueDecl, ...]
    named: Mapping[str, QueueDecl]
    """The first queue of each name."""
    serving: Mapping[str, QueueDecl]
    """The first queue serving each namespace."""
    cohort_nodes: Mapping[tuple[str, str], int]
    """(cohort, pool) -> the nodes of the pool all the cohort's queues hold."""
    same_name_nodes: Mapping[tuple[str, str, str], int]
    """(cohort, queue name, pool) -> the nodes of the pool the cohort's queues of that name hold (one, unless a name
    is declared twice, which validation reports)."""

    def queue_for(self, namespace: str, named: str | None) -> QueueDecl | None:
        """The queue a job uses: the one it names, else the first serving its namespace; None where there is none."""
        return self.named.get(named) if named is not None else self.serving.get(namespace)

    def borrowable_nodes(self, queue: QueueDecl, pool: str) -> int:
        """Nodes of `pool` a kueue queue can get beyond its own: what the other queues of its cohort have of the
        pool, capped by its borrowing limit."""
        if queue.cohort is None:
            return 0
        others = (self.cohort_nodes.get((queue.cohort, pool), 0)
                  - self.same_name_nodes.get((queue.cohort, queue.name, pool), 0))
        limit = queue.borrowable(pool)
        return others if limit is None else min(others, limit)


def cluster_queues(cluster: dict[str, Any]) -> ClusterQueues:
    """The cluster's queues and their cohorts' sums, in one pass over them."""
    declared = tuple(queues(cluster))
    named: dict[str, QueueDecl] = {}
    serving: dict[str, QueueDecl] = {}
    cohort_nodes: dict[tuple[str, str], int] = {}
    same_name_nodes: dict[tuple[str, str, str], int] = {}
    for queue in declared:
        named.setdefault(queue.name, queue)
        for namespace in queue.namespaces:
            serving.setdefault(namespace, queue)
        if queue.cohort is not None:
            for pool, nodes in dict(queue.nodes).items():  # as `nodes_of` reads them
                cohort_nodes[(queue.cohort, pool)] = cohort_nodes.get((queue.cohort, pool), 0) + nodes
                key = (queue.cohort, queue.name, pool)
                same_name_nodes[key] = same_name_nodes.get(key, 0) + nodes
    return ClusterQueues(declared, named, serving, cohort_nodes, same_name_nodes)


def launcher_in_gang(launcher_creation_policy: str) -> int:
    """1 where the launcher exists while the gang forms (`AtStartup`), 0 under `WaitForWorkersReady`, where it is
    created only once every worker runs, so a gang that counts it deadlocks (mpi-operator #608)."""
    return 0 if launcher_creation_policy == mpi_operator.WAIT_FOR_WORKERS_READY else 1


def min_available_limit(worker_count: int, launcher_creation_policy: str) -> int:
    """The largest minAvailable that can ever be met: every pod that exists before the gang is complete, and mpigen's
    default minAvailable."""
    return worker_count + launcher_in_gang(launcher_creation_policy)


@exact
def worker_demand(job: dict[str, Any], offer: NodeOffer, gpus_per_worker: int, worker_count: int,
                  rail_resources: list[str], pool_rails: Sequence[str] = ()) -> dict[str, Decimal]:
    """What a job's workers ask of their pool together, in the units of `node_offer`: GPUs, one device of each
    rail per worker, and the CPUs and GiB of memory of `resources` where the job sets them. Under DRA what each
    worker claims instead (`claimed.worker_claims`): its GPUs, the NIC of each rail it attaches where NICs are
    claimed, and a ComputeDomain channel where the pool offers one. `rail_resources`: the rails the job attaches;
    `pool_rails`: every rail resource of the pool, of which a job that attaches only some asks nothing of the rest."""
    demand: dict[str, Decimal] = {}
    devices = set(offer.claimed)
    rails = set(rail_resources) | set(pool_rails)
    for resource, _, _ in offer.resources:
        if resource not in (CPU, MEMORY) and resource not in rails and resource not in devices:
            demand[resource] = Decimal(gpus_per_worker * worker_count)
    nics_claimed = dra.KUEUE_NIC_RESOURCE in devices
    if not nics_claimed:
        demand.update((rail, Decimal(worker_count)) for rail in rail_resources)
    claims = claimed.worker_claims(gpus_per_worker if dra.KUEUE_GPU_RESOURCE in devices else 0,
                                   len(rail_resources) if nics_claimed else 0,
                                   dra.KUEUE_CHANNEL_RESOURCE in devices and gpus_per_worker > 0)
    demand.update((resource, Decimal(count * worker_count)) for resource, count in claims.items())
    demand.update((resource, amount * worker_count) for resource, amount in cpu_memory(job.get("resources", {})).items())
    return {resource: amount for resource, amount in demand.items() if amount}


def launcher_demand(job: dict[str, Any]) -> dict[str, Decimal]:
    """What the launcher asks for (CPUs and GiB of memory): Kueue admits it with the workers, and a Volcano
    queue's capability counts it too."""
    given = job.get("launcher", {}).get("resources")
    return cpu_memory(given if given is not None else {CPU: defaults.LAUNCHER_CPU, MEMORY: defaults.LAUNCHER_MEMORY})


@exact
def added(first: Mapping[str, Decimal], second: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """Two demands together, resource by resource."""
    return {resource: first.get(resource, Decimal(0)) + second.get(resource, Decimal(0))
            for resource in {**first, **second}}


@exact
def cpu_memory(resources: dict[str, str]) -> dict[str, Decimal]:
    """CPUs and GiB of memory, exactly (a byte is 2^-30 GiB: 30 decimal places)."""
    amounts = {}
    if CPU in resources:
        amounts[CPU] = quantity(resources[CPU])
    if MEMORY in resources:
        amounts[MEMORY] = quantity(resources[MEMORY]) / 1024 ** 3
    return amounts


def amount_text(amount: Decimal, unit: str) -> str:
    """An amount in a message: `48`, `0.5`, `1024Gi`."""
    text = format(amount.normalize(), "f") if amount != amount.to_integral_value() else str(int(amount))
    return f"{text}{unit}"


def rail_resource_names(cluster: dict[str, Any], hardware: dict[str, Any], prefix: str,
                        rail_names: list[str] | None = None) -> list[str]:
    """The full resource names of the rails a pool of `hardware` carries (those named, where given)."""
    return [names.rail_resource(prefix, rail.get("resourceName", names.default_rail_resource_name(rail["name"])))
            for rail in derive.pool_rails(cluster, hardware) if rail_names is None or rail["name"] in rail_names]


# --- what a queue can ever admit: validate refuses a job beyond it, and the chart's `workers` maximum is it ---------

@dataclass(frozen=True)
class Shortfall:
    """Why a queue can never admit a job's pods: `resource` is asked beyond `limit` (`launcher` False: by the workers
    on their pool under Kueue, or by all the pods against a Volcano queue's capability), or (`launcher` True) the
    launcher fits no pool of the Kueue queue beside the workers, `pinned` to the cluster's `launcherPool` if so."""

    resource: str = ""
    asked: Decimal = Decimal(0)
    limit: int = 0
    launcher: bool = False
    pinned: str | None = None


Reach = Mapping[str, Mapping[str, int]]
"""pool -> resource -> the most of it a queue can ever use there, in `node_offer`'s units, for each pool the queue
covers: Kueue, its own nodes plus what it may borrow (`ClusterQueues.borrowable_nodes`); the model's `Quota.reach`."""


@exact
def kueue_shortfall(reach: Reach, pool: str, workers: Mapping[str, Decimal], launcher: Mapping[str, Decimal],
                    launcher_pool: str | None) -> Shortfall | None:
    """The workers fit the queue's reach on their pool, and the launcher what is left of it, or the reach of another
    pool the queue covers (Kueue places it on any flavor); a launcher pinned to the cluster's `launcherPool` only
    there (`launcher_pool`: None, or a pool the queue covers)."""
    for resource, limit in reach[pool].items():
        asked = workers.get(resource, Decimal(0))
        if asked > limit:
            return Shortfall(resource, asked, limit)
    pinned = launcher_pool if launcher_pool in reach else None
    places = [(pinned, workers if pinned == pool else {})] if pinned is not None else \
        [(pool, workers)] + [(name, {}) for name in reach if name != pool]
    for name, taken in places:
        if all(taken.get(r, Decimal(0)) + launcher[r] <= reach[name].get(r, 0) for r in launcher):
            return None
    return Shortfall(launcher=True, pinned=pinned)


@exact
def volcano_shortfall(capability: Mapping[str, int], workers: Mapping[str, Decimal],
                      launcher: Mapping[str, Decimal]) -> Shortfall | None:
    """A Volcano queue's capability is one cluster-wide limit per resource it names (its pools' nodes summed): the
    job's pods, launcher included, must fit it together."""
    for resource, limit in capability.items():
        asked = workers.get(resource, Decimal(0)) + launcher.get(resource, Decimal(0))
        if asked > limit:
            return Shortfall(resource, asked, limit)
    return None


@exact
def most_admitted(per_worker: Mapping[str, Decimal], most: int, fits: Callable[[dict[str, Decimal]], bool]) -> int:
    """The most workers, up to `most`, whose demand (`per_worker` times their count) `fits` the job's queue (one of
    the shortfalls above being None); 0 if not even one. A queue that admits n workers admits fewer, so a bisection
    finds it."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if fits({resource: amount * middle for resource, amount in per_worker.items()}):
            low = middle
        else:
            high = middle - 1
    return low
