"""Gang scheduling: a cluster's `scheduling` holds together, and every job on it can be admitted.

A job no queue can ever admit is the worst failure a gang scheduler has: it waits forever, without an error,
holding its place in the queue. So a job that asks for more than its queue's quota (and what the queue may
borrow), a queue, priority class or topology level the cluster does not declare, or a minimum its pods can
never meet (mpi-operator #608) is refused here, with the numbers the infra chart's queues are made of
(`mpigen.model.admission`).

Here: the cluster's side, and which settings each scheduler reads; a job's side is in job_scheduling.py,
whether its queue can ever hold it in quota.py.
"""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import admission, derive, domains
from mpigen.support.diagnostics import Diagnostic, Location, Severity, did_you_mean, raises
from mpigen.support.profile_rules import SCHEDULING
from mpigen.validate.fields import duplicates
from mpigen.validate.network import Carriers
from mpigen.vocabulary import kai, reserved
from mpigen.vocabulary import scheduling as vocabulary
from mpigen.vocabulary.kubernetes import MAX_COUNT

# Settings of the cluster's `scheduling` and of its queues, and the schedulers that read them.
CLUSTER_SETTINGS = {
    "schedulerName": (admission.COSCHEDULING, admission.KAI),
    "scheduleTimeoutSeconds": (admission.COSCHEDULING,),  # mpi-operator does not pass it to a Volcano PodGroup
    "priorityClasses": (admission.NONE, admission.VOLCANO, admission.COSCHEDULING, admission.KUEUE, admission.KAI),
    "topology": (admission.KUEUE, admission.KAI),
    "queues": admission.QUEUED,
    "waitForPodsReady": (admission.KUEUE,),
    "kueueVersion": (admission.KUEUE,),
}
QUEUE_SETTINGS = {"cohort": (admission.KUEUE, admission.KAI), "borrowNodes": (admission.KUEUE, admission.KAI),
                  "weight": (admission.VOLCANO, admission.KAI), "priority": (admission.KAI,)}
JOB_SETTINGS = {"queue": admission.QUEUED, "minAvailable": admission.MIN_AVAILABLE_READERS,
                "topology": (admission.KUEUE, admission.KAI),
                "priorityClass": (admission.NONE, admission.VOLCANO, admission.COSCHEDULING, admission.KUEUE,
                                  admission.KAI)}


def readers_text(schedulers: tuple[str, ...]) -> str:
    return " and ".join(f"`{name}`" for name in schedulers)


# --- cluster -------------------------------------------------------------------------------------

@raises(SCHEDULING)
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
                                    f"{readers_text(readers)} read it", "remove it, or choose a scheduler that reads it"))
    found += duplicates(document, scheduling.get("priorityClasses", []), "name", ("scheduling", "priorityClasses"),
                        "priority class")
    for i, priority in enumerate(scheduling.get("priorityClasses", [])):
        found += check_priority_class_name(document.location("scheduling", "priorityClasses", i, "name"),
                                           priority["name"])
    if scheduler == admission.KAI:
        found += _check_kai_names(document, scheduling)
    found += _check_topology(document, scheduling.get("topology", []))
    if scheduler == admission.KUEUE:
        found += _check_tainted_topology(document, data, scheduling.get("topology", []))
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


def _check_kai_names(document: ProfileFile, scheduling: dict[str, Any]) -> list[Diagnostic]:
    """KAI's chart creates its own queues and priority classes: the infra chart must not own objects of those names,
    and a cohort's parent Queue must not be one of the declared queues."""
    found: list[Diagnostic] = []
    own_classes = [name for name, _ in kai.DEFAULT_PRIORITY_CLASSES]
    for i, priority in enumerate(scheduling.get("priorityClasses", [])):
        if priority["name"] in own_classes:
            found.append(Diagnostic(document.location("scheduling", "priorityClasses", i, "name"),
                                    f"KAI's chart installs the priority class '{priority['name']}' itself; the infra "
                                    "chart must not own it", "give the class another name (jobs may still name "
                                    f"KAI's own: {', '.join(own_classes)})"))
    queues = scheduling.get("queues", [])
    names = {queue["name"] for queue in queues}
    for i, queue in enumerate(queues):
        if queue["name"] in (kai.DEFAULT_QUEUE, kai.DEFAULT_PARENT_QUEUE):
            found.append(Diagnostic(document.location("scheduling", "queues", i, "name"),
                                    f"KAI creates the queue '{queue['name']}' itself; the infra chart must not own it",
                                    "give the queue another name"))
        cohort = queue.get("cohort")
        if cohort in names or cohort in (kai.DEFAULT_QUEUE, kai.DEFAULT_PARENT_QUEUE):
            found.append(Diagnostic(document.location("scheduling", "queues", i, "cohort"),
                                    f"cohort '{cohort}' of queue '{queue['name']}' is the name of "
                                    + ("a queue" if cohort in names else "one of KAI's own queues")
                                    + ": under KAI a cohort is the parent Queue of its members, and one Queue cannot "
                                    "be both", "give the cohort a name no queue has"))
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
    problem = domains.nesting_problem(domains.topology_levels(levels))
    if problem is not None:
        found.append(Diagnostic(document.location("scheduling", "topology", problem[0], "domainNodes"), problem[1],
                                "a level's domain holds whole domains of the levels below it: give the sizes as the "
                                "fabric is built (the smallest where domains differ)"))
    return found


def _check_tainted_topology(document: ProfileFile, data: dict[str, Any], levels: list[dict[str, Any]]) -> list[Diagnostic]:
    """Kueue's topology-aware scheduling respects node taints only where `kubernetes.io/hostname` is the Topology's
    lowest level (Kueue's own TAS example, tests/upstream/scheduling/kueue/example__tas_sample-gpu-queues.yaml): above
    it, Kueue places pods on nodes whose taints they do not tolerate, and they stay Pending."""
    if not levels or any(level["nodeLabel"] == vocabulary.HOSTNAME_LABEL for level in levels):
        return []  # hostname above the lowest level is an error of its own
    tainted = [pool["name"] for pool in data["nodePools"] if pool.get("taints")]
    if not tainted:
        return []
    return [Diagnostic(document.location("scheduling", "topology", len(levels) - 1, "nodeLabel"),
                       f"pool(s) {', '.join(repr(name) for name in tainted)} have taints, and Kueue respects node taints "
                       f"in topology-aware scheduling only where {vocabulary.HOSTNAME_LABEL} is the lowest topology "
                       "level: it may place pods on nodes they cannot run on, where they stay Pending",
                       f"add `- {{name: host, nodeLabel: {vocabulary.HOSTNAME_LABEL}}}` as the last level",
                       Severity.WARNING)]


def _check_queue(document: ProfileFile, data: dict[str, Any], scheduler: str, i: int, queue: dict[str, Any],
                 pools: dict[str, int]) -> list[Diagnostic]:
    path = ("scheduling", "queues", i)
    found: list[Diagnostic] = []
    for key, readers in QUEUE_SETTINGS.items():
        if key in queue and scheduler not in readers:
            found.append(Diagnostic(document.location(*path, key, at_key=True),
                                    f"`{key}` of a queue has no effect with scheduler `{scheduler}`: only "
                                    f"{readers_text(readers)} read it", "remove it"))
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
                                   admission.VOLCANO else ": its KAI Queue would have no quota" if scheduler ==
                                   admission.KAI else ": Kueue refuses a ClusterQueue without flavors"),
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


@raises(SCHEDULING)
def check_priority_class_name(where: Location, name: str) -> list[Diagnostic]:
    """`system-` names are Kubernetes' own, under every scheduler: under Kueue a WorkloadPriorityClass so named is no
    PriorityClass, but reads as the built-in one, so one rule holds for all."""
    if not reserved.is_system_priority_class(name):
        return []
    return [Diagnostic(where, f"priority class '{name}': {reserved.SYSTEM_PRIORITY_CLASS_REASON}",
                       f"name it otherwise, e.g. '{name.removeprefix(reserved.SYSTEM_PRIORITY_CLASS_PREFIX)}'")]
