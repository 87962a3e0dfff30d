"""Gang scheduling: a cluster's `scheduling` holds together, and every job on it can be admitted.

A job no queue can ever admit is the worst failure a gang scheduler has: it waits forever, without an error,
holding its place in the queue. So a job that asks for more than its queue's quota (and what the queue may
borrow), a queue, priority class or topology level the cluster does not declare, or a minimum its pods can
never meet (mpi-operator #608) is refused here, with the numbers the infra chart's queues are made of
(`generator.model.admission`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from generator.load import ProfileFile
from generator.model import WorkerSpread, admission, defaults, derive
from generator.providers import provider_of
from generator.support.diagnostics import NEVER_FITS, Diagnostic, Location, Severity, did_you_mean
from generator.validate.fields import duplicates
from generator.validate.network import Carriers, host_network
from generator.vocabulary import reserved
from generator.vocabulary import scheduling as vocabulary
from generator.vocabulary.kubernetes import MAX_COUNT, exact

# Settings of the cluster's `scheduling` and of its queues, and the schedulers that read them.
CLUSTER_SETTINGS = {
    "schedulerName": (admission.COSCHEDULING,),
    "scheduleTimeoutSeconds": (admission.COSCHEDULING,),  # mpi-operator does not pass it to a Volcano PodGroup
    "priorityClasses": (admission.NONE, admission.VOLCANO, admission.COSCHEDULING, admission.KUEUE),
    "topology": (admission.KUEUE,),
    "queues": admission.QUEUED,
}
QUEUE_SETTINGS = {"cohort": (admission.KUEUE,), "borrowNodes": (admission.KUEUE,), "weight": (admission.VOLCANO,)}
JOB_SETTINGS = {"queue": admission.QUEUED, "minAvailable": admission.GANG_SCHEDULERS, "topology": (admission.KUEUE,),
                "priorityClass": (admission.NONE, admission.VOLCANO, admission.COSCHEDULING, admission.KUEUE)}


def _readers(schedulers: tuple[str, ...]) -> str:
    return " and ".join(f"`{name}`" for name in schedulers)


# --- cluster -------------------------------------------------------------------------------------

def check_cluster_scheduling(document: ProfileFile, data: dict[str, Any], carriers: Carriers | None) -> list[Diagnostic]:
    scheduling = data.get("scheduling")
    if scheduling is None:
        return []
    scheduler = admission.scheduler_of(data)
    found: list[Diagnostic] = []
    for key, readers in CLUSTER_SETTINGS.items():
        if key in scheduling and scheduler not in readers:
            found.append(Diagnostic(document.location("scheduling", key, at_key=True),
                                    f"`scheduling.{key}` has no effect with scheduler `{scheduler}`: only "
                                    f"{_readers(readers)} read it", "remove it, or choose a scheduler that reads it"))
    found += duplicates(document, scheduling.get("priorityClasses", []), "name", ("scheduling", "priorityClasses"),
                        "priority class")
    for i, priority in enumerate(scheduling.get("priorityClasses", [])):
        found += _check_priority_class_name(document.location("scheduling", "priorityClasses", i, "name"),
                                            priority["name"])
    found += _check_topology(document, scheduling.get("topology", []))
    queues = scheduling.get("queues", [])
    found += duplicates(document, queues, "name", ("scheduling", "queues"), "queue")
    pools = {pool["name"]: int(pool["nodes"]) for pool in data["nodePools"]}
    for i, queue in enumerate(queues):
        found += _check_queue(document, data, scheduler, i, queue, pools)
    if scheduler in admission.QUEUED and carriers is not None:
        found += _check_known_cpus(document, data, carriers)
        found += _check_countable_memory(document, carriers)
    if scheduler == admission.KUEUE and carriers is not None:
        found += _check_flavor_labels(document, data, carriers)
    return found


def _check_topology(document: ProfileFile, levels: list[dict[str, Any]]) -> list[Diagnostic]:
    """Names and labels once each; `kubernetes.io/hostname` only as the lowest level (Kueue's Topology CRD)."""
    found = list(duplicates(document, levels, "name", ("scheduling", "topology"), "topology level"))
    found += duplicates(document, levels, "nodeLabel", ("scheduling", "topology"), "topology node label")
    for i, level in enumerate(levels[:-1]):
        if level["nodeLabel"] == vocabulary.HOSTNAME_LABEL:
            found.append(Diagnostic(document.location("scheduling", "topology", i, "nodeLabel"),
                                    f"{vocabulary.HOSTNAME_LABEL} can only be the lowest topology level (Kueue "
                                    "refuses the Topology otherwise)", "move it to the end of `topology`"))
    return found


def _check_queue(document: ProfileFile, data: dict[str, Any], scheduler: str, i: int, queue: dict[str, Any],
                 pools: dict[str, int]) -> list[Diagnostic]:
    path = ("scheduling", "queues", i)
    found: list[Diagnostic] = []
    for key, readers in QUEUE_SETTINGS.items():
        if key in queue and scheduler not in readers:
            found.append(Diagnostic(document.location(*path, key, at_key=True),
                                    f"`{key}` of a queue has no effect with scheduler `{scheduler}`: only "
                                    f"{_readers(readers)} read it", "remove it"))
    if scheduler == admission.VOLCANO and queue["name"] in vocabulary.VOLCANO_OWN_QUEUES:
        found.append(Diagnostic(document.location(*path, "name"),
                                f"Volcano creates the queue '{queue['name']}' itself; the infra chart must not own it",
                                "give the queue another name (jobs may still name Volcano's own queues)"))
    for j, namespace in enumerate(queue.get("namespaces", [])):
        if namespace not in data["namespaces"]:
            found.append(Diagnostic(document.location(*path, "namespaces", j),
                                    f"queue '{queue['name']}' serves namespace '{namespace}', which is not in "
                                    "`namespaces`", did_you_mean(namespace, data["namespaces"])))
    for key in ("nodes", "borrowNodes"):
        for pool, nodes in queue.get(key, {}).items():
            where = document.location(*path, key, pool)
            if pool not in pools:
                found.append(Diagnostic(document.location(*path, key, pool, at_key=True),
                                        f"queue '{queue['name']}' names node pool '{pool}', which the cluster does "
                                        "not have", did_you_mean(pool, pools)))
            elif nodes > pools[pool]:
                found.append(Diagnostic(where, f"queue '{queue['name']}' takes {nodes} nodes of pool '{pool}', "
                                        f"which has {pools[pool]}", f"at most {pools[pool]}"))
    if "nodes" in queue and not queue["nodes"] and scheduler in admission.QUEUED:
        found.append(Diagnostic(document.location(*path, "nodes"),
                                f"queue '{queue['name']}' covers no node pool"
                                + (": a Volcano queue without capability has no limit at all" if scheduler ==
                                   admission.VOLCANO else ": Kueue refuses a ClusterQueue without flavors"),
                                "name its share of at least one pool, e.g. `nodes: {<pool>: 2}`, or leave `nodes` "
                                "out for every node of every pool"))
    if "borrowNodes" in queue and "cohort" not in queue and scheduler == admission.KUEUE:
        found.append(Diagnostic(document.location(*path, "borrowNodes", at_key=True),
                                f"queue '{queue['name']}' has a borrowing limit but no cohort to borrow from",
                                "add `cohort`, or remove `borrowNodes`"))
    return found


def _check_flavor_labels(document: ProfileFile, data: dict[str, Any], carriers: Carriers) -> list[Diagnostic]:
    """Kueue places the pods it admits by the node labels of their pool's ResourceFlavor (and refuses a flavor with
    a topology but no labels): each pool a queue covers needs labels that pick its nodes and no other pool's."""
    covered = {pool for queue in admission.queues(data) for pool, _ in queue.nodes}
    found: list[Diagnostic] = []
    seen: dict[tuple[tuple[str, str], ...], str] = {}
    for i, (pool, hardware) in enumerate(carriers):
        if pool["name"] not in covered:
            continue
        labels = tuple(sorted(derive.pool_node_labels(pool, hardware).items()))
        if not labels:
            found.append(Diagnostic(document.location("nodePools", i, "name"),
                                    f"pool '{pool['name']}' has no node labels, so its Kueue ResourceFlavor cannot "
                                    "tell its nodes from the others', and Kueue may place its jobs anywhere",
                                    "give the pool `nodeLabels` that only its nodes carry"))
        elif labels in seen:
            found.append(Diagnostic(document.location("nodePools", i, "name"),
                                    f"pools '{seen[labels]}' and '{pool['name']}' pick their nodes by the same labels, "
                                    "so their Kueue ResourceFlavors cannot tell their nodes apart",
                                    "give one of them `nodeLabels` that only its nodes carry"))
        else:
            seen[labels] = pool["name"]
    return found


def _check_known_cpus(document: ProfileFile, data: dict[str, Any], carriers: Carriers) -> list[Diagnostic]:
    """A queue's cpu quota is its nodes' CPUs: the hardware of each pool a queue covers must say how many."""
    covered = {pool for queue in admission.queues(data) for pool, _ in queue.nodes}
    found: list[Diagnostic] = []
    for i, (pool, hardware) in enumerate(carriers):
        if pool["name"] in covered and "coresPerSocket" not in hardware["cpu"]:
            found.append(Diagnostic(document.location("nodePools", i, "hardware"),
                                    f"pool '{pool['name']}' is in a queue, whose cpu quota is its nodes' CPUs, but "
                                    f"hardware '{hardware['name']}' does not say how many (cpu.coresPerSocket)",
                                    f"set cpu.coresPerSocket in a profile that extends '{hardware['name']}'"))
    return found


MAX_MEMORY_GIB = MAX_COUNT // 2**30
"""The most GiB of memory a quota can hold: Kubernetes counts memory in bytes, as an int64."""


def _check_countable_memory(document: ProfileFile, carriers: Carriers) -> list[Diagnostic]:
    """A queue's memory quota is its nodes' memory (a Volcano queue's, of every pool it covers together), which the
    infra chart writes as one quantity: the cluster's nodes together may hold no more than Kubernetes counts, or
    the quota would be capped."""
    total = 0
    for i, (pool, hardware) in enumerate(carriers):
        total += int(pool["nodes"]) * int(hardware["memoryGiB"])
        if total > MAX_MEMORY_GIB:
            return [Diagnostic(document.location("nodePools", i, "nodes"),
                               f"pool '{pool['name']}' brings the memory of the cluster's nodes to {total}Gi, more "
                               f"than a queue's quota can hold (Kubernetes counts at most {MAX_MEMORY_GIB}Gi: an int64 "
                               "of bytes)", f"check `memoryGiB` of hardware '{hardware['name']}' and the pools' nodes")]
    return []


def _check_priority_class_name(where: Location, name: str) -> list[Diagnostic]:
    """`system-` names are Kubernetes' own, under every scheduler: under Kueue a WorkloadPriorityClass so named is no
    PriorityClass, but reads as the built-in one, so one rule holds for all."""
    if not reserved.is_system_priority_class(name):
        return []
    return [Diagnostic(where, f"priority class '{name}': {reserved.SYSTEM_PRIORITY_CLASS_REASON}",
                       f"name it otherwise, e.g. '{name.removeprefix(reserved.SYSTEM_PRIORITY_CLASS_PREFIX)}'")]


# --- job -----------------------------------------------------------------------------------------

def check_job_scheduling(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any],
                         queues: admission.ClusterQueues, pool: dict[str, Any], pool_hardware: dict[str, dict[str, Any]],
                         sized: bool) -> list[Diagnostic]:
    """`queues`: the cluster's (`admission.cluster_queues`); `pool_hardware`: the hardware of each pool of the cluster
    (those whose hardware is known), by pool name; `sized`: the job's size on its pool is valid, so its demand can be
    weighed against its queue."""
    hardware = pool_hardware[pool["name"]]
    scheduler = admission.scheduler_of(cluster)
    given = job.get("scheduling", {})
    classes = [c["name"] for c in cluster.get("scheduling", {}).get("priorityClasses", [])]
    if "scheduling" in job and scheduler == admission.NONE and not classes:
        return [Diagnostic(document.location("scheduling", at_key=True),
                           f"cluster '{cluster['name']}' has no gang scheduler, so `scheduling` has no effect",
                           "remove it, or give the cluster a `scheduling` section (`priorityClasses` alone, with "
                           "`scheduler: none`, for pod priority)")]
    found: list[Diagnostic] = []
    for key, readers in JOB_SETTINGS.items():
        if key in given and scheduler not in readers:
            hint = ("Kueue admits a job whole: every pod or none" if key == "minAvailable" else "remove it")
            found.append(Diagnostic(document.location("scheduling", key, at_key=True),
                                    f"`scheduling.{key}` has no effect with cluster '{cluster['name']}''s scheduler "
                                    f"`{scheduler}`: only {_readers(readers)} read it", hint))
    if scheduler == admission.KUEUE and job.get("runPolicy", {}).get("suspend") is False:
        found.append(Diagnostic(document.location("runPolicy", "suspend"),
                                f"cluster '{cluster['name']}' admits jobs through Kueue, which creates them suspended "
                                "and unsuspends them on admission; `suspend: false` would start the job without it",
                                "remove runPolicy.suspend"))
    if "priorityClass" in given and given["priorityClass"] not in classes and \
            reserved.is_system_priority_class(given["priorityClass"]):
        found += _check_priority_class_name(document.location("scheduling", "priorityClass"), given["priorityClass"])
    elif "priorityClass" in given and given["priorityClass"] not in classes:
        found.append(Diagnostic(document.location("scheduling", "priorityClass"),
                                f"cluster '{cluster['name']}' declares no priority class '{given['priorityClass']}'",
                                did_you_mean(given["priorityClass"], classes) if classes else
                                "declare it in the cluster's `scheduling.priorityClasses`"))
    levels = [level["name"] for level in cluster.get("scheduling", {}).get("topology", [])]
    topology = given.get("topology")
    if topology is not None and scheduler == admission.KUEUE and topology["level"] not in levels:
        found.append(Diagnostic(document.location("scheduling", "topology", "level"),
                                f"cluster '{cluster['name']}' declares no topology level '{topology['level']}'",
                                did_you_mean(topology["level"], levels) if levels else
                                "declare the levels in the cluster's `scheduling.topology`"))
    if found or not sized:
        return found
    shape = derive.layout(job, hardware, pool["nodes"], one_per_node=host_network(cluster))
    policy = job.get("launcherCreationPolicy", defaults.LAUNCHER_CREATION_POLICY)
    if scheduler in admission.GANG_SCHEDULERS:
        found += _check_min_available(document, job, shape.worker_count, policy)
    if topology is not None and scheduler == admission.KUEUE:
        found += _check_topology_fits(document, cluster, topology, shape)
    if scheduler == admission.KUEUE and levels and job.get("workerSpread") == WorkerSpread.ONE_PER_NODE.value:
        natural = derive.layout({k: v for k, v in job.items() if k != "workerSpread"}, hardware, pool["nodes"])
        if natural.workers_per_node > 1:
            found.append(Diagnostic(document.location("workerSpread"), f"cluster '{cluster['name']}' declares a "
                                    "topology, so Kueue's topology-aware scheduling places the workers on nodes by "
                                    "their free capacity, which knows nothing of the pod anti-affinity "
                                    f"`one-per-node` gives: {natural.workers_per_node} of these workers fit a node, and "
                                    "one placed beside another would stay Pending while the job holds its quota",
                                    "ask for whole-node workers (gpusPerWorker, resources) instead, or remove "
                                    "workerSpread", severity=Severity.WARNING))
    if scheduler in admission.QUEUED:
        found += _check_admission(document, job, cluster, queues, pool, pool_hardware, shape, scheduler)
    return found


def _check_topology_fits(document: ProfileFile, cluster: dict[str, Any], topology: dict[str, Any],
                         shape: derive.Layout) -> list[Diagnostic]:
    """Workers required on one host can never be admitted when they do not fit one node. (Other levels hold as
    many nodes as the fabric has, which the profiles do not say.)"""
    level = next(level for level in cluster["scheduling"]["topology"] if level["name"] == topology["level"])
    if (level["nodeLabel"] != vocabulary.HOSTNAME_LABEL or topology.get("mode", "required") != "required"
            or shape.worker_count <= shape.workers_per_node):
        return []
    return [Diagnostic(document.location("scheduling", "topology", "level"),
                       f"the job's {shape.worker_count} workers are required on one host (level '{topology['level']}', "
                       f"{vocabulary.HOSTNAME_LABEL}), but a node holds {shape.workers_per_node}, so Kueue never "
                       "admits the job", "use a higher level, or `mode: preferred`")]


def _check_min_available(document: ProfileFile, job: dict[str, Any], workers: int, policy: str) -> list[Diagnostic]:
    """A gang larger than the pods that can exist together never starts: under `WaitForWorkersReady` the
    launcher is created only once every worker runs, so it cannot be counted (mpi-operator #608)."""
    given = job.get("scheduling", {}).get("minAvailable")
    limit = admission.min_available_limit(workers, policy)
    if given is None or given <= limit:
        return []
    if not admission.launcher_in_gang(policy) and given == workers + 1:
        return [Diagnostic(document.location("scheduling", "minAvailable"),
                           f"minAvailable {given} counts the launcher, but under launcherCreationPolicy "
                           f"WaitForWorkersReady the launcher is created only once all {workers} workers run, and "
                           "they wait for a gang of "
                           f"{given}: the job deadlocks (mpi-operator #608)",
                           f"set minAvailable to {workers} (or leave it out), or use launcherCreationPolicy AtStartup")]
    pods = "workers and the launcher" if admission.launcher_in_gang(policy) else "workers"
    return [Diagnostic(document.location("scheduling", "minAvailable"),
                       f"minAvailable {given} is more than the job's {limit} pods ({pods}): the gang never completes",
                       f"set it to at most {limit}, or leave it out")]


def _check_admission(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any],
                     queues: admission.ClusterQueues, pool: dict[str, Any], pool_hardware: dict[str, dict[str, Any]],
                     shape: derive.Layout, scheduler: str) -> list[Diagnostic]:
    """The job's queue exists, serves its namespace, and can ever hold what the job's pods ask for."""
    given = job.get("scheduling", {})
    named = given.get("queue")
    namespace = job.get("namespace", cluster["namespaces"][0])
    declared = queues.declared
    where = document.location("scheduling", "queue") if named else document.location("namespace" if "namespace" in job
                                                                                      else "cluster")
    if named is not None and scheduler == admission.VOLCANO and named in vocabulary.VOLCANO_OWN_QUEUES:
        return []  # Volcano's own queue: its capability is not in the profiles
    queue = queues.queue_for(namespace, named)
    if queue is None:
        if named is not None:
            return [Diagnostic(where, f"cluster '{cluster['name']}' declares no queue '{named}'",
                               did_you_mean(named, [q.name for q in declared]) if declared else
                               "declare it in the cluster's `scheduling.queues`")]
        if scheduler == admission.VOLCANO:
            return []  # no queues declared: Volcano's `default`
        return [Diagnostic(where, f"no queue of cluster '{cluster['name']}' serves namespace '{namespace}', so "
                           "Kueue never admits the job", "add the namespace to a queue's `namespaces`")]
    provider = provider_of(cluster.get("network", {}))
    if provider is None or not queue.nodes or any(name not in pool_hardware for name, _ in queue.nodes):
        return []  # reported with the provider, the queue, or the pool's hardware
    network = cluster.get("network", {})
    prefix = network.get("resourcePrefix", provider.resource_prefix)
    offers = {name: admission.node_offer(hw, admission.rail_resource_names(cluster, hw, prefix),
                                         provider.exclusive_devices, network) for name, hw in pool_hardware.items()}
    attached = admission.rail_resource_names(cluster, pool_hardware[pool["name"]], prefix, job.get("rails"))
    workers = admission.worker_demand(job, offers[pool["name"]], shape.gpus_per_worker, shape.worker_count, attached)
    launcher = admission.launcher_demand(job)
    size = document.location("workers" if "workers" in job else "totalGpus" if "totalGpus" in job else "pool")
    if scheduler == admission.VOLCANO:
        return _check_capability(size, cluster, queue, offers, workers, launcher, shape.worker_count)
    if namespace not in queue.namespaces:
        return [Diagnostic(where, f"queue '{queue.name}' does not serve namespace '{namespace}': it has no "
                           "LocalQueue there, so Kueue never admits the job",
                           f"add '{namespace}' to the queue's `namespaces`, or use a queue that serves it")]
    if not queue.covers(pool["name"]):
        return [Diagnostic(where, f"queue '{queue.name}' does not cover pool '{pool['name']}' (not in its `nodes`): "
                           "no flavor of its ClusterQueue selects the workers' nodes, so Kueue never admits the job",
                           "add the pool to the queue's `nodes`")]
    launcher_pool = cluster.get("launcherPool")  # one the cluster does not have is reported at the cluster
    if launcher_pool in offers and not queue.covers(launcher_pool):
        return [Diagnostic(where, f"queue '{queue.name}' does not cover pool '{launcher_pool}', the cluster's "
                           "`launcherPool`: Kueue admits the launcher on a flavor of the job's queue, and none selects "
                           "that pool's nodes, so it never admits the job",
                           f"add '{launcher_pool}' to the queue's `nodes`, or remove the cluster's `launcherPool`")]
    return _check_quota(size, queues, queue, pool, offers, workers, launcher, shape.worker_count, launcher_pool)


@exact
def _check_quota(size: Location, queues: admission.ClusterQueues, queue: admission.QueueDecl, pool: dict[str, Any],
                 offers: dict[str, admission.NodeOffer], workers: dict[str, Decimal], launcher: dict[str, Decimal],
                 worker_count: int, launcher_pool: str | None) -> list[Diagnostic]:
    """kueue: the workers fit the queue's share of their pool plus what it may borrow there, and the launcher fits
    what is left of it, or the share of another pool the queue covers (Kueue places it on any flavor); a launcher
    pinned to the cluster's `launcherPool` only there."""
    def reach(name: str) -> int:
        return queue.nodes_of(name) + queues.borrowable_nodes(queue, name)

    for resource, count, unit in offers[pool["name"]].resources:
        asked = workers.get(resource, Decimal(0))
        if asked <= count * reach(pool["name"]):
            continue
        own, extra = queue.nodes_of(pool["name"]), queues.borrowable_nodes(queue, pool["name"])
        held = f"{count * own}{unit}" + (f" plus {count * extra}{unit} it may borrow" if extra else "")
        return [Diagnostic(size, f"the job's {worker_count} workers ask for {admission.amount_text(asked, unit)} "
                           f"{resource}, more than queue '{queue.name}' can ever hold on pool '{pool['name']}' ({held}: "
                           f"{own + extra} of {pool['nodes']} nodes), so it is never admitted",
                           "ask for less, or give the queue more nodes (`nodes`, `borrowNodes`)", code=NEVER_FITS)]
    # The launcher's node selector leaves Kueue that pool's flavor alone (the queue covers it: _check_admission).
    pinned = launcher_pool if launcher_pool in offers else None
    places = [(pinned, workers if pinned == pool["name"] else {})] if pinned is not None else \
        [(pool["name"], workers)] + [(name, {}) for name, _ in queue.nodes if name != pool["name"]]
    for name, taken in places:
        offer = offers[name]
        if all(taken.get(r, Decimal(0)) + launcher[r] <= (offer.amount(r) or 0) * reach(name) for r in launcher):
            return []
    shown = ", ".join(f"{admission.amount_text(amount, 'Gi' if resource == admission.MEMORY else '')} {resource}"
                      for resource, amount in launcher.items())
    if pinned is not None and pinned != pool["name"]:
        return [Diagnostic(size, f"the job's launcher ({shown}) does not fit what queue '{queue.name}' can ever hold "
                           f"on pool '{pinned}', the cluster's `launcherPool`, so Kueue never admits the job (it "
                           "admits the launcher with the workers)", "ask for less with `launcher.resources`, or give "
                           "the queue more nodes of that pool", code=NEVER_FITS)]
    return [Diagnostic(size, f"the job's workers take all that queue '{queue.name}' can ever hold on pool "
                       f"'{pool['name']}', and its launcher ({shown}) fits nowhere else in the queue, so Kueue never "
                       "admits the job (it admits the launcher with the workers)",
                       "ask for a little less CPU or memory per worker, or give the queue more nodes",
                       code=NEVER_FITS)]


@exact
def _check_capability(size: Location, cluster: dict[str, Any], queue: admission.QueueDecl,
                      offers: dict[str, admission.NodeOffer], workers: dict[str, Decimal], launcher: dict[str, Decimal],
                      worker_count: int) -> list[Diagnostic]:
    """volcano: a queue's capability is one cluster-wide limit per resource it names (its pools' nodes summed);
    the job's pods, launcher included, must fit it together."""
    capability: dict[str, tuple[int, str]] = {}
    for name, nodes in queue.nodes:
        for resource, count, unit in offers[name].resources:
            before, _ = capability.get(resource, (0, unit))
            capability[resource] = (before + count * nodes, unit)
    for resource, (limit, unit) in capability.items():
        asked = workers.get(resource, Decimal(0)) + launcher.get(resource, Decimal(0))
        if asked > limit:
            return [Diagnostic(size, f"the job's {worker_count} workers and launcher ask for "
                               f"{admission.amount_text(asked, unit)} {resource}, more than the capability of queue "
                               f"'{queue.name}' ({limit}{unit}), so Volcano never schedules it",
                               "ask for less, or give the queue more nodes (`nodes`)", code=NEVER_FITS)]
    return []
