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
    Scheduler,
    Scheduling,
    admission,
    domains,
)


def cluster_scheduling(data: dict[str, Any], pools: tuple[NodePool, ...]) -> Scheduling:
    given = data.get("scheduling", {})
    scheduler = Scheduler(admission.scheduler_of(data))
    classes = tuple(PriorityClass(p["name"], p["value"], p.get("description")) for p in given.get("priorityClasses", []))
    if scheduler is Scheduler.NONE:
        return Scheduling(priority_classes=classes)  # the pods' own priority, without a gang scheduler
    by_name = {pool.name: pool for pool in pools}
    queues = []
    declared = admission.cluster_queues(data)
    for queue in declared.declared:
        shares = []
        for pool_name, nodes in queue.nodes:
            borrow = queue.borrowable(pool_name)
            reach = nodes + declared.borrowable_nodes(queue, pool_name)
            quotas = tuple(Quota(resource, count * nodes, count * reach, unit,
                                 count * borrow if borrow is not None else None)
                           for resource, count, unit in by_name[pool_name].offer)
            shares.append(QueueShare(by_name[pool_name], nodes, borrow, quotas))
        queues.append(Queue(queue.name, queue.namespaces, tuple(shares), queue.cohort, queue.weight))
    return Scheduling(
        scheduler=scheduler,
        scheduler_name=admission.coscheduling_scheduler(data) if scheduler is Scheduler.COSCHEDULING else None,
        schedule_timeout_seconds=given.get("scheduleTimeoutSeconds"),
        priority_classes=classes,
        topology=domains.topology_levels(given.get("topology", [])),
        queues=tuple(queues),
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
        fit = domains.job_fit(sizes, topology, workers, workers_per_node)
    return JobScheduling(queue=queue, priority_class=given.get("priorityClass"),
                         min_available=given.get("minAvailable"), topology_label=label,
                         topology_required=(topology or {}).get("mode", "required") == "required", fit=fit)
