"""Gang scheduling as the model holds it: a cluster's scheduler and queues (the quota each holds of its
pools), and the queue a job goes to with what else it chose."""

from __future__ import annotations

from typing import Any

from mpigen.model import (
    Cluster,
    JobScheduling,
    NodePool,
    PriorityClass,
    Queue,
    QueueShare,
    Quota,
    RailAttachment,
    Scheduler,
    Scheduling,
    admission,
    domains,
    kai_quota,
    pods_ready,
)
from mpigen.vocabulary import kueue_releases
from mpigen.vocabulary.scheduling import VOLCANO_OWN_QUEUES


def cluster_scheduling(data: dict[str, Any], pools: tuple[NodePool, ...]) -> Scheduling:
    given = data.get("scheduling", {})
    scheduler = Scheduler(admission.scheduler_of(data))
    classes = tuple(PriorityClass(p["name"], p["value"], p.get("description")) for p in given.get("priorityClasses", []))
    if scheduler is Scheduler.NONE:
        return Scheduling(priority_classes=classes)  # the pods' own priority, without a gang scheduler
    by_name = {pool.name: pool for pool in pools}
    kai_offers = {pool.name: kai_quota.node_offer(pool.offer, pool.hardware.gpu.resource if pool.hardware.gpu else None)
                  for pool in pools}
    queues = []
    declared = admission.cluster_queues(data)
    for queue in declared.declared:
        shares = []
        for pool_name, nodes in queue.nodes:
            borrow = queue.borrowable(pool_name)
            reach = nodes + declared.borrowable_nodes(queue, pool_name)
            quotas = tuple(Quota(resource, count * nodes, count * reach, unit,
                                 count * borrow if borrow is not None else None)
                           for resource, count, unit in admission.counted(by_name[pool_name].offer,
                                                                          by_name[pool_name].claimed, scheduler.value))
            shares.append(QueueShare(by_name[pool_name], nodes, borrow, quotas))
        kai = kai_quota.queue_resources(queue, kai_offers) if scheduler is Scheduler.KAI else ()
        queues.append(Queue(queue.name, queue.namespaces, tuple(shares), queue.cohort, queue.weight, queue.priority,
                            kai))
    timeout, pull = pods_ready.declared(data)
    return Scheduling(
        scheduler=scheduler,
        pods_ready_timeout=timeout,
        image_pull=pull,
        scheduler_name=admission.coscheduling_scheduler(data) if scheduler is Scheduler.COSCHEDULING else
        admission.kai_scheduler(data) if scheduler is Scheduler.KAI else None,
        schedule_timeout_seconds=given.get("scheduleTimeoutSeconds"),
        priority_classes=classes,
        topology=domains.topology_levels(given.get("topology", [])),
        queues=tuple(queues),
        kueue_release=kueue_releases.named(given.get("kueueVersion")),
    )


def job_scheduling(data: dict[str, Any], cluster: Cluster, namespace: str, hardware: dict[str, Any],
                   workers: int, workers_per_node: int) -> JobScheduling:
    """The queue a job goes to (its own choice, else the first serving its namespace), and what else it chose;
    `hardware`: its pool's, whose NVLink domain may size a topology level."""
    scheduling = cluster.scheduling
    given = data.get("scheduling", {})
    if scheduling.scheduler is Scheduler.NONE:
        return JobScheduling(priority_class=given.get("priorityClass"))
    queue = given.get("queue")
    if queue is None:
        queue = next((q.name for q in scheduling.queues if namespace in q.namespaces), None)
    topology = given.get("topology")
    label = next((level.node_label for level in scheduling.topology if level.name == topology["level"]), None) \
        if topology else None
    fit = None
    if topology and label is not None:
        sizes = domains.pool_domain_sizes(scheduling.topology, hardware)
        fit = domains.job_fit(sizes, topology, workers, workers_per_node, slices_served=scheduling.scheduler is
                             Scheduler.KUEUE and scheduling.kueue_release.serves(kueue_releases.PODSET_SLICES_MINOR))
    return JobScheduling(queue=queue, priority_class=given.get("priorityClass"),
                         min_available=given.get("minAvailable"), topology_label=label,
                         topology_required=(topology or {}).get("mode", "required") == "required", fit=fit)


def admitted_worker_limit(data: dict[str, Any], cluster: Cluster, pool: NodePool, rails: tuple[RailAttachment, ...],
                          gpus_per_worker: int, scheduling: JobScheduling, most: int) -> tuple[int, str] | None:
    """The most workers, up to `most` (what the pool holds), that the job's scheduler can ever admit, with why; None
    where nothing of the profiles limits the job below `most`: one domain of a `required` topology level
    (`DomainFit.most_workers`), then the job's queue (`queue_worker_limit`). The rules are validation's: the chart's
    `workers` maximum is the largest job validation would have let through."""
    fit = scheduling.fit
    found: tuple[int, str] | None = None
    if fit is not None and fit.most_workers is not None and fit.most_workers < most:
        most = fit.most_workers
        found = (most, f"one '{fit.domain.level}' domain, which its required topology keeps every worker in, holds "
                       f"{most}")
    return queue_worker_limit(data, cluster, pool, rails, gpus_per_worker, scheduling.queue, most) or found


def queue_worker_limit(data: dict[str, Any], cluster: Cluster, pool: NodePool, rails: tuple[RailAttachment, ...],
                       gpus_per_worker: int, queue: str | None, most: int) -> tuple[int, str] | None:
    """The most workers, up to `most` (what the pool holds), that the job's queue can ever admit, with why; None where
    no queue of the profiles limits the job (no queued scheduler, Volcano's own queues, the pool holds fewer). The
    numbers and the rule are validation's (`admission.kueue_shortfall`, `volcano_shortfall`): the chart's `workers`
    maximum is the largest job validation would have let through."""
    scheduler = cluster.scheduling.scheduler
    declared = next((q for q in cluster.scheduling.queues if q.name == queue), None)
    if scheduler not in (Scheduler.KUEUE, Scheduler.VOLCANO, Scheduler.KAI) or declared is None or \
            queue in VOLCANO_OWN_QUEUES:
        return None
    per_worker = admission.worker_demand(data, admission.NodeOffer(pool.offer, pool.claimed), gpus_per_worker, 1,
                                         [attached.rail.resource for attached in rails],
                                         [rail.resource for rail in cluster.rails_of(pool)])
    launcher = admission.launcher_demand(data)
    if scheduler is Scheduler.KUEUE:
        reach = {share.pool.name: {q.resource: q.reach for q in share.quotas} for share in declared.shares}
        if pool.name not in reach:
            return None  # refused by validation
        most_workers = admission.most_admitted(per_worker, most, lambda workers: admission.kueue_shortfall(
            reach, pool.name, workers, launcher, cluster.launcher_pool) is None)
        why = f"queue '{queue}' can ever admit {most_workers} (its quota of pool '{pool.name}' and what it may borrow)"
    elif scheduler is Scheduler.KAI:
        gpu = pool.hardware.gpu.resource if pool.hardware.gpu else None
        priority = kai_quota.priority_value(data.get("scheduling", {}).get("priorityClass"),
                                            {p.name: p.value for p in cluster.scheduling.priority_classes})
        most_workers = admission.most_admitted(per_worker, most, lambda workers: kai_quota.shortfall(
            declared.kai, kai_quota.demand(admission.added(workers, launcher), gpu), priority) is None)
        why = f"queue '{queue}' can ever run {most_workers} with the launcher (its limit, or its quota for a " \
              "non-preemptible priority)"
    else:
        capability = {resource: count for resource, (count, _) in declared.capability().items()}
        most_workers = admission.most_admitted(per_worker, most, lambda workers: admission.volcano_shortfall(
            capability, workers, launcher) is None)
        why = f"the capability of queue '{queue}' holds {most_workers} with the launcher"
    return (most_workers, why) if most_workers < most else None
