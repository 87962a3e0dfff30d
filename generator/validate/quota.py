"""Whether a job's queue exists, serves its namespace, and can ever hold what the job's pods ask for: a
Kueue ClusterQueue's quota (with what it may borrow), a Volcano queue's capability."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import admission, derive
from mpigen.providers import provider_of
from mpigen.support.diagnostics import NEVER_FITS, Diagnostic, Location, did_you_mean, raises
from mpigen.support.profile_rules import SCHEDULING
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
    # The launcher's node selector leaves Kueue that pool's flavor alone (the queue covers it: check_admission).
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
