"""Whether a job's queue exists, serves its namespace, and can ever hold what the job's pods ask for: a
Kueue ClusterQueue's quota (with what it may borrow), a Volcano queue's capability."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import admission, claimed, derive, kai_quota
from mpigen.providers import provider_of
from mpigen.support.diagnostics import NEVER_FITS, Diagnostic, Location, did_you_mean, raises
from mpigen.support.profile_rules import SCHEDULING
from mpigen.vocabulary import kai
from mpigen.vocabulary import scheduling as vocabulary
from mpigen.vocabulary.kubernetes import exact


@raises(SCHEDULING)
def check_admission(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any],
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
                           f"{'KAI' if scheduler == admission.KAI else 'Kueue'} never admits the job",
                           "add the namespace to a queue's `namespaces`")]
    provider = provider_of(cluster.get("network", {}))
    if provider is None or not queue.nodes or any(name not in pool_hardware for name, _ in queue.nodes):
        return []  # reported with the provider, the queue, or the pool's hardware
    prefix = cluster.get("network", {}).get("resourcePrefix", provider.resource_prefix)
    offers = {name: admission.pool_offer(cluster, hw, prefix, provider.exclusive_devices, provider.dra_devices)
              for name, hw in pool_hardware.items()}
    attached = admission.rail_resource_names(cluster, pool_hardware[pool["name"]], prefix, job.get("rails"))
    workers = admission.worker_demand(job, offers[pool["name"]], shape.gpus_per_worker, shape.worker_count, attached,
                                      admission.rail_resource_names(cluster, pool_hardware[pool["name"]], prefix))
    launcher = admission.launcher_demand(job)
    size = document.location("workers" if "workers" in job else "totalGpus" if "totalGpus" in job else "pool")
    if scheduler == admission.VOLCANO:
        return _check_capability(size, cluster, queue, offers, workers, launcher, shape.worker_count)
    if scheduler == admission.KAI:
        return _check_kai(where, size, cluster, queue, namespace, offers, pool_hardware, pool["name"], workers,
                          launcher, shape.worker_count, given.get("priorityClass"))
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


def queue_reach(queues: admission.ClusterQueues, queue: admission.QueueDecl,
                offers: dict[str, admission.NodeOffer]) -> admission.Reach:
    """What a kueue queue can ever use of each pool it covers: its own nodes plus those it may borrow, of each
    resource one node offers (every covered pool in `offers`: check_admission)."""
    return {name: {resource: count * (queue.nodes_of(name) + queues.borrowable_nodes(queue, name))
                   for resource, count, _ in offers[name].resources} for name, _ in queue.nodes}


@exact
def _check_quota(size: Location, queues: admission.ClusterQueues, queue: admission.QueueDecl, pool: dict[str, Any],
                 offers: dict[str, admission.NodeOffer], workers: dict[str, Decimal], launcher: dict[str, Decimal],
                 worker_count: int, launcher_pool: str | None) -> list[Diagnostic]:
    """kueue: `admission.kueue_shortfall`, said at the job's size. (The launcher's node selector leaves Kueue that
    pool's flavor alone; the queue covers it: check_admission.)"""
    short = admission.kueue_shortfall(queue_reach(queues, queue, offers), pool["name"], workers, launcher,
                                      launcher_pool if launcher_pool in offers else None)
    if short is None:
        return []
    if not short.launcher:
        unit = next(unit for name, _, unit in offers[pool["name"]].resources if name == short.resource)
        count = offers[pool["name"]].amount(short.resource) or 0
        own, extra = queue.nodes_of(pool["name"]), queues.borrowable_nodes(queue, pool["name"])
        held = f"{count * own}{unit}" + (f" plus {count * extra}{unit} it may borrow" if extra else "")
        what = f" ({claimed.NOUNS[short.resource]} claimed through DRA)" \
            if short.resource in offers[pool["name"]].claimed else ""
        return [Diagnostic(size, f"the job's {worker_count} workers ask for {admission.amount_text(short.asked, unit)} "
                           f"{short.resource}{what}, more than queue '{queue.name}' can ever hold on pool '{pool['name']}' "
                           f"({held}: {own + extra} of {pool['nodes']} nodes), so it is never admitted",
                           "ask for less, or give the queue more nodes (`nodes`, `borrowNodes`)", code=NEVER_FITS)]
    shown = ", ".join(f"{admission.amount_text(amount, 'Gi' if resource == admission.MEMORY else '')} {resource}"
                      for resource, amount in launcher.items())
    if short.pinned is not None and short.pinned != pool["name"]:
        return [Diagnostic(size, f"the job's launcher ({shown}) does not fit what queue '{queue.name}' can ever hold "
                           f"on pool '{short.pinned}', the cluster's `launcherPool`, so Kueue never admits the job (it "
                           "admits the launcher with the workers)", "ask for less with `launcher.resources`, or give "
                           "the queue more nodes of that pool", code=NEVER_FITS)]
    return [Diagnostic(size, f"the job's workers take all that queue '{queue.name}' can ever hold on pool "
                       f"'{pool['name']}', and its launcher ({shown}) fits nowhere else in the queue, so Kueue never "
                       "admits the job (it admits the launcher with the workers)",
                       "ask for a little less CPU or memory per worker, or give the queue more nodes",
                       code=NEVER_FITS)]


def volcano_capability(queue: admission.QueueDecl, offers: dict[str, admission.NodeOffer]) -> dict[str, tuple[int, str]]:
    """A Volcano queue's capability, (amount, unit) per resource: its pools' nodes summed, of what pods request."""
    capability: dict[str, tuple[int, str]] = {}
    for name, nodes in queue.nodes:
        for resource, count, unit in admission.counted(offers[name].resources, offers[name].claimed, admission.VOLCANO):
            before, _ = capability.get(resource, (0, unit))
            capability[resource] = (before + count * nodes, unit)
    return capability


@exact
def _check_capability(size: Location, cluster: dict[str, Any], queue: admission.QueueDecl,
                      offers: dict[str, admission.NodeOffer], workers: dict[str, Decimal], launcher: dict[str, Decimal],
                      worker_count: int) -> list[Diagnostic]:
    """volcano: `admission.volcano_shortfall`, said at the job's size."""
    capability = volcano_capability(queue, offers)
    short = admission.volcano_shortfall({r: limit for r, (limit, _) in capability.items()}, workers, launcher)
    if short is None:
        return []
    unit = capability[short.resource][1]
    return [Diagnostic(size, f"the job's {worker_count} workers and launcher ask for "
                       f"{admission.amount_text(short.asked, unit)} {short.resource}, more than the capability of queue "
                       f"'{queue.name}' ({short.limit}{unit}), so Volcano never schedules it",
                       "ask for less, or give the queue more nodes (`nodes`)", code=NEVER_FITS)]


@exact
def _check_kai(where: Location, size: Location, cluster: dict[str, Any], queue: admission.QueueDecl, namespace: str,
               offers: dict[str, admission.NodeOffer], pool_hardware: dict[str, dict[str, Any]], pool: str,
               workers: dict[str, Decimal], launcher: dict[str, Decimal], worker_count: int,
               named: str | None) -> list[Diagnostic]:
    """kai: the queue serves the job's namespace (KAI's Queues are cluster-wide: `namespaces` is mpigen's own rule),
    and the job's pods together, the launcher included (once created it joins the PodGroup, within the same
    queue), fit the queue's limit, or its quota where the job's priority is non-preemptible (`kai_quota.shortfall`)."""
    if namespace not in queue.namespaces:
        return [Diagnostic(where, f"queue '{queue.name}' does not serve namespace '{namespace}'",
                           f"add '{namespace}' to the queue's `namespaces`, or use a queue that serves it")]
    gpu_of = {name: (hw.get("gpu", {}).get("resource", derive.DEFAULT_GPU_RESOURCE) if derive.gpu_count(hw) else None)
              for name, hw in pool_hardware.items()}
    kai_offers = {name: kai_quota.node_offer(offer.resources, gpu_of[name]) for name, offer in offers.items()}
    resources = kai_quota.queue_resources(queue, kai_offers)
    classes = {c["name"]: int(c["value"]) for c in cluster.get("scheduling", {}).get("priorityClasses", [])}
    priority = kai_quota.priority_value(named, classes)
    asked = kai_quota.demand(admission.added(workers, launcher), gpu_of[pool])
    short = kai_quota.shortfall(resources, asked, priority)
    if short is None:
        return []
    unit = kai_quota.UNITS[short.resource]
    pods = f"the job's {worker_count} workers and launcher ask for {admission.amount_text(short.asked, '')} {unit} of " \
           f"{short.resource}"
    if short.within_quota:
        return [Diagnostic(size, f"{pods}, more than the quota of queue '{queue.name}' ({short.bound} {unit}), and "
                           f"its priority class '{named or kai.DEFAULT_PRIORITY_CLASS}' ({priority}) is "
                           f"non-preemptible, which KAI runs only within quota: it is never scheduled",
                           "ask for less, give the queue more nodes (`nodes`), or choose a preemptible priority "
                           f"class (value below {kai.NON_PREEMPTIBLE_FROM})", code=NEVER_FITS)]
    return [Diagnostic(size, f"{pods}, more than the limit of queue '{queue.name}' ({short.bound} {unit}), so KAI "
                       "never schedules it", "ask for less, or give the queue more nodes (`nodes`, `borrowNodes`)",
                       code=NEVER_FITS)]
