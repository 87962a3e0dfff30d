"""What `mpigen explain` says of a job under KAI: the scheduler name its pods carry, the queue label and the Queue's
quota and limit, the priority KAI gives it (and whether it may run over quota), the minAvailable the podgrouper reads,
and the topology annotations."""

from __future__ import annotations

from mpigen.insight.explanation import Fact
from mpigen.insight.facts import Where, fact, said
from mpigen.manifests.mpijob import workers_variable
from mpigen.manifests.scheduling import kai_job_annotations, kai_min_available
from mpigen.model import Job, Scheduler, kai_quota
from mpigen.objects.manifest import plain
from mpigen.vocabulary import kai, mpi_operator


def kai_facts(job: Job, at: Where, at_cluster: Where) -> list[Fact]:
    """Nothing on a cluster of another scheduler."""
    scheduling = job.cluster.scheduling
    if scheduling.scheduler is not Scheduler.KAI:
        return []
    found = [fact("scheduling", "schedulerName", scheduling.scheduler_name or kai.SCHEDULER_NAME,
                  said(at_cluster("scheduling", "schedulerName"), "scheduling.schedulerName",
                       "default: KAI's own scheduler name; on every pod template, so KAI places the pods"))]
    queue = next((q for q in scheduling.queues if q.name == job.scheduling.queue), None)
    if queue is not None:
        bounds = ", ".join(f"{entry.resource} quota {entry.quota}"
                           + (f" limit {entry.limit}" if entry.limited else " no limit") for entry in queue.kai)
        found.append(fact("scheduling", "queue label", f"{kai.QUEUE_LABEL}={queue.name}",
                          f"on the MPIJob, where KAI's podgrouper reads it; Queue {queue.name}: {bounds} "
                          "(nodes x what a node has, in millicores, MB and GPUs)"))
    classes = {p.name: p.value for p in scheduling.priority_classes}
    value = kai_quota.priority_value(job.scheduling.priority_class, classes)
    name = job.scheduling.priority_class or kai.DEFAULT_PRIORITY_CLASS
    runs = "non-preemptible: KAI runs it only within its queue's quota" if kai_quota.non_preemptible(value) else \
        "preemptible: it may run over its queue's quota, and be reclaimed"
    found.append(fact("scheduling", "KAI priority", f"{name} ({value}), {runs}",
                      said(at("scheduling", "priorityClass"), "scheduling.priorityClass (the MPIJob's "
                           f"{kai.PRIORITY_LABEL} label)", "default: KAI's default for an MPIJob, train")))
    minimum = plain(kai_min_available(job, workers_variable(job)))
    delayed = job.launcher_creation_policy == mpi_operator.WAIT_FOR_WORKERS_READY
    found.append(fact("scheduling", "minAvailable", str(minimum),
                      said(at("scheduling", "minAvailable"), "scheduling.minAvailable",
                           "default: every pod (workers and launcher)")
                      if not delayed else "the gang of the workers, plus the launcher, which KAI's podgrouper takes "
                      "out under WaitForWorkersReady while no launcher exists (mpi-operator #608)"))
    annotations = kai_job_annotations(job)
    if annotations:
        found.append(fact("scheduling", "topology annotations", "; ".join(f"{k}={v}" for k, v in annotations.items()),
                          said(at("scheduling", "topology", "level"), "scheduling.topology.level", "")))
    return found
