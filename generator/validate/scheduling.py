"""Gang scheduling: a cluster's `scheduling` holds together, and every job on it can be admitted.

A job no queue can ever admit is the worst failure a gang scheduler has: it waits forever, without an error,
holding its place in the queue. So a job that asks for more than its queue's quota (and what the queue may
borrow), a queue, priority class or topology level the cluster does not declare, or a minimum its pods can
never meet (mpi-operator #608) is refused here, with the numbers the infra chart's queues are made of
(`generator.admission`).
"""

from __future__ import annotations

from typing import Any

from generator import admission, derive
from generator.diagnostics import Diagnostic, did_you_mean
from generator.load import ProfileFile
from generator.manifests.providers import provider_of
from generator.validate.fields import duplicates
from generator.validate.network import Carriers
from generator.vocabulary import scheduling as vocabulary

# Settings of the cluster's `scheduling` and of its queues, and the schedulers that read them.
CLUSTER_SETTINGS = {
    "schedulerName": (admission.COSCHEDULING,),
    "scheduleTimeoutSeconds": admission.GANG_SCHEDULERS,
    "priorityClasses": (admission.VOLCANO, admission.COSCHEDULING, admission.KUEUE),
    "topology": (admission.KUEUE,),
    "queues": admission.QUEUED,
}
QUEUE_SETTINGS = {"cohort": (admission.KUEUE,), "borrowNodes": (admission.KUEUE,), "weight": (admission.VOLCANO,)}
JOB_SETTINGS = {"queue": admission.QUEUED, "minAvailable": admission.GANG_SCHEDULERS, "topology": (admission.KUEUE,),
                "priorityClass": (admission.VOLCANO, admission.COSCHEDULING, admission.KUEUE)}


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
    found += _check_topology(document, scheduling.get("topology", []))
    queues = scheduling.get("queues", [])
    found += duplicates(document, queues, "name", ("scheduling", "queues"), "queue")
    pools = {pool["name"]: int(pool["nodes"]) for pool in data["nodePools"]}
    for i, queue in enumerate(queues):
        found += _check_queue(document, data, scheduler, i, queue, pools)
    if scheduler in admission.QUEUED and carriers is not None:
        found += _check_known_cpus(document, data, carriers)
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
    if scheduler == admission.VOLCANO and queue["name"] in admission.VOLCANO_OWN_QUEUES:
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
    if "borrowNodes" in queue and "cohort" not in queue and scheduler == admission.KUEUE:
        found.append(Diagnostic(document.location(*path, "borrowNodes", at_key=True),
                                f"queue '{queue['name']}' has a borrowing limit but no cohort to borrow from",
                                "add `cohort`, or remove `borrowNodes`"))
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


# --- job -----------------------------------------------------------------------------------------

def check_job_scheduling(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any],
                         pool: dict[str, Any], hardware: dict[str, Any], sized: bool) -> list[Diagnostic]:
    """`sized`: the job's size on its pool is valid, so its demand can be weighed against its queue."""
    scheduler = admission.scheduler_of(cluster)
    given = job.get("scheduling", {})
    if "scheduling" in job and scheduler == admission.NONE:
        return [Diagnostic(document.location("scheduling", at_key=True),
                           f"cluster '{cluster['name']}' has no gang scheduler, so `scheduling` has no effect",
                           "remove it, or give the cluster a `scheduling` section")]
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
    classes = [c["name"] for c in cluster.get("scheduling", {}).get("priorityClasses", [])]
    if "priorityClass" in given and given["priorityClass"] not in classes and scheduler != admission.NONE:
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
    shape = derive.layout(job, hardware, pool["nodes"])
    policy = job.get("launcherCreationPolicy", "WaitForWorkersReady")
    if scheduler in admission.GANG_SCHEDULERS:
        found += _check_min_available(document, job, shape.worker_count, policy)
    if scheduler in admission.QUEUED:
        found += _check_admission(document, job, cluster, pool, hardware, shape, scheduler)
    return found


def _check_min_available(document: ProfileFile, job: dict[str, Any], workers: int, policy: str) -> list[Diagnostic]:
    """A gang larger than the pods that can exist together never starts: under `WaitForWorkersReady` the
    launcher is created only once every worker runs, so it cannot be counted (mpi-operator #608)."""
    given = job.get("scheduling", {}).get("minAvailable")
    limit = admission.min_available_limit(workers, policy)
    if given is None or given <= limit:
        return []
    if policy == "WaitForWorkersReady" and given == workers + 1:
        return [Diagnostic(document.location("scheduling", "minAvailable"),
                           f"minAvailable {given} counts the launcher, but under launcherCreationPolicy "
                           f"WaitForWorkersReady the launcher is created only once all {workers} workers run, and "
                           "they wait for a gang of "
                           f"{given}: the job deadlocks (mpi-operator #608)",
                           f"set minAvailable to {workers} (or leave it out), or use launcherCreationPolicy AtStartup")]
    pods = "workers" if policy == "WaitForWorkersReady" else "workers and the launcher"
    return [Diagnostic(document.location("scheduling", "minAvailable"),
                       f"minAvailable {given} is more than the job's {limit} pods ({pods}): the gang never completes",
                       f"set it to at most {limit}, or leave it out")]


def _check_admission(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], pool: dict[str, Any],
                     hardware: dict[str, Any], shape: derive.Layout, scheduler: str) -> list[Diagnostic]:
    """The job's queue exists, serves its namespace, covers its pool, and holds what its workers ask for."""
    given = job.get("scheduling", {})
    named = given.get("queue")
    namespace = job.get("namespace", cluster["namespaces"][0])
    declared = admission.queues(cluster)
    where = document.location("scheduling", "queue") if named else document.location("namespace" if "namespace" in job
                                                                                      else "cluster")
    if named is not None and scheduler == admission.VOLCANO and named in admission.VOLCANO_OWN_QUEUES:
        return []  # Volcano's own queue: its capability is not in the profiles
    queue = admission.queue_for(cluster, namespace, named)
    if queue is None:
        if named is not None:
            return [Diagnostic(where, f"cluster '{cluster['name']}' declares no queue '{named}'",
                               did_you_mean(named, [q.name for q in declared]) if declared else
                               "declare it in the cluster's `scheduling.queues`")]
        if scheduler == admission.VOLCANO:
            return []  # no queues declared: Volcano's `default`
        return [Diagnostic(where, f"no queue of cluster '{cluster['name']}' serves namespace '{namespace}', so "
                           "Kueue never admits the job", "add the namespace to a queue's `namespaces`")]
    if scheduler == admission.KUEUE and namespace not in queue.namespaces:
        return [Diagnostic(where, f"queue '{queue.name}' does not serve namespace '{namespace}': it has no "
                           "LocalQueue there, so Kueue never admits the job",
                           f"add '{namespace}' to the queue's `namespaces`, or use a queue that serves it")]
    if not queue.covers(pool["name"]):
        return [Diagnostic(where, f"queue '{queue.name}' does not cover pool '{pool['name']}' (not in its `nodes`), "
                           "so the job's workers can never be admitted", "add the pool to the queue's `nodes`")]
    provider = provider_of(cluster.get("network", {}))
    if provider is None:
        return []
    prefix = cluster.get("network", {}).get("resourcePrefix", provider.resource_prefix)
    rails = admission.rail_resource_names(cluster, hardware, prefix)
    offer = admission.node_offer(hardware, rails, provider.exclusive_devices, cluster.get("network", {}))
    attached = admission.rail_resource_names(cluster, hardware, prefix, job.get("rails"))
    demand = admission.worker_demand(job, offer, shape.gpus_per_worker, shape.worker_count, attached)
    own = queue.nodes_of(pool["name"])
    extra = admission.borrowable_nodes(cluster, queue, pool["name"]) if scheduler == admission.KUEUE else 0
    found: list[Diagnostic] = []
    for resource, count, unit in offer.resources:
        asked = demand.get(resource, 0)
        if asked <= count * (own + extra):
            continue
        reach = f"{count * own}{unit}" + (f" plus {count * extra}{unit} it may borrow" if extra else "")
        size = document.location("workers" if "workers" in job else "totalGpus" if "totalGpus" in job else "pool")
        found.append(Diagnostic(size, f"the job's {shape.worker_count} workers ask for {asked}{unit} {resource}, "
                                f"more than queue '{queue.name}' can ever hold on pool '{pool['name']}' ({reach}: "
                                f"{own + extra} of {pool['nodes']} nodes), so it is never admitted",
                                "ask for less, or give the queue more nodes (`nodes`"
                                + (", `borrowNodes`)" if scheduler == admission.KUEUE else ")")))
        break  # one resource says it; the others follow from the same nodes
    return found
