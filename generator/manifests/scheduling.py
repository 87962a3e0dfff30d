"""Gang scheduling: the infra chart's queues and priority classes, and what an MPIJob carries to be admitted whole.

- volcano: Volcano Queues (capability: the nodes of the pools they cover) and PriorityClasses; the MPIJob's
  `runPolicy.schedulingPolicy`, from which mpi-operator (`--gang-scheduling=volcano`) makes the PodGroup.
- coscheduling: PriorityClasses (named by the pods themselves), and the same `schedulingPolicy`
  (`--gang-scheduling=<scheduler name>`).
- none: only the PriorityClasses a cluster may declare, named by the pods themselves; the MPIJob still carries
  `schedulingPolicy.minAvailable`, in case its mpi-operator gangs anyway (`scheduling_policy`).
- kueue: one ResourceFlavor per pool, a ClusterQueue per queue covering every resource a job can request,
  a LocalQueue per queue and namespace, WorkloadPriorityClasses and the Topology; the MPIJob carries the
  queue-name (and priority-class) label, is created suspended, and its workers carry the topology annotation.
- kai: a KAI Queue per queue (and a parent Queue per cohort), PriorityClasses and KAI's Topology; the MPIJob carries
  the queue (and priority) label and the topology annotations KAI's podgrouper reads off it, its pods KAI's
  `schedulerName`, and `schedulingPolicy.minAvailable`, which the podgrouper reads too (`kai_min_available`).
  mpi-operator runs without `--gang-scheduling`: the podgrouper makes the PodGroup.
"""

from __future__ import annotations

from typing import Any

from mpigen.model import Backend, Cluster, Job, KaiResource, Queue, Scheduler, kai_quota, quantity_text
from mpigen.model.admission import launcher_in_gang
from mpigen.objects.labels import ChartRef, metadata
from mpigen.objects.manifest import Manifest, Variable
from mpigen.vocabulary import kai
from mpigen.vocabulary import scheduling as vocabulary
from mpigen.vocabulary.gitops import ARGOCD_SYNC_OPTIONS, SKIP_DRY_RUN_ON_MISSING_RESOURCE
from mpigen.vocabulary.kueue_releases import MPIJOB_PODSET_GROUP_MINOR, NEWEST, KueueRelease, release_name
from mpigen.vocabulary.mpi_operator import SchedulingPolicyField

PRIORITY_CLASSES_TEMPLATE = "priority-classes.yaml"
VOLCANO_QUEUES_TEMPLATE = "volcano-queues.yaml"
RESOURCE_FLAVORS_TEMPLATE = "kueue-resource-flavors.yaml"
TOPOLOGY_TEMPLATE = "kueue-topology.yaml"
CLUSTER_QUEUES_TEMPLATE = "kueue-cluster-queues.yaml"
LOCAL_QUEUES_TEMPLATE = "kueue-local-queues.yaml"
WORKLOAD_PRIORITY_CLASSES_TEMPLATE = "kueue-workload-priority-classes.yaml"
KAI_QUEUES_TEMPLATE = "kai-queues.yaml"
KAI_TOPOLOGY_TEMPLATE = "kai-topology.yaml"
PODSET_GROUP = "launcher-and-workers"
"""The name of the PodSet group of an MPIJob's launcher and workers (any name that is not a number)."""
CUSTOM = {ARGOCD_SYNC_OPTIONS: SKIP_DRY_RUN_ON_MISSING_RESOURCE}
"""Custom resources whose CRDs a new cluster may not have yet."""


def flavor_name(pool: str) -> str:
    """A pool's ResourceFlavor is named after the pool."""
    return pool


def topology_name(cluster: Cluster) -> str:
    """The cluster's Kueue Topology is named after the cluster."""
    return cluster.name


# --- infra ---------------------------------------------------------------------------------------

def build_priority_class(name: str, value: int, description: str | None, chart: ChartRef) -> dict[str, Any]:
    """A built-in PriorityClass for the PodGroups of volcano and coscheduling jobs; never the cluster's default."""
    obj: dict[str, Any] = {"apiVersion": vocabulary.PRIORITY_CLASS_API_VERSION, "kind": vocabulary.PRIORITY_CLASS,
                           "metadata": metadata(name, chart), "value": value, "globalDefault": False}
    if description:
        obj["description"] = description
    return obj


def build_workload_priority_class(name: str, value: int, description: str | None, chart: ChartRef,
                                  release: KueueRelease = NEWEST) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": release.api_version, "kind": vocabulary.WORKLOAD_PRIORITY_CLASS,
                           "metadata": metadata(name, chart, annotations=CUSTOM), "value": value}
    if description:
        obj["description"] = description
    return obj


def _capability(queue: Queue) -> dict[str, int | str]:
    """A Volcano queue's capability, as its Queue object writes it."""
    return {resource: quantity_text(count, unit) for resource, (count, unit) in queue.capability().items()}


def build_volcano_queue(queue: Queue, chart: ChartRef) -> dict[str, Any]:
    spec: dict[str, Any] = {"capability": _capability(queue), "reclaimable": True}
    if queue.weight is not None:
        spec["weight"] = queue.weight
    return {"apiVersion": vocabulary.VOLCANO_API_VERSION, "kind": vocabulary.VOLCANO_QUEUE,
            "metadata": metadata(queue.name, chart, annotations=CUSTOM), "spec": spec}


def build_resource_flavor(cluster: Cluster, pool_name: str, chart: ChartRef) -> dict[str, Any]:
    """A pool as Kueue sees it: the node labels that pick its nodes (injected into the pods it admits)."""
    pool = cluster.pool(pool_name)
    spec: dict[str, Any] = {}
    if pool.node_selector:
        spec["nodeLabels"] = dict(pool.node_selector)
    if cluster.scheduling.topology:
        spec["topologyName"] = topology_name(cluster)
    return {"apiVersion": cluster.scheduling.kueue_release.api_version, "kind": vocabulary.RESOURCE_FLAVOR,
            "metadata": metadata(flavor_name(pool_name), chart, annotations=CUSTOM), "spec": spec}


def build_topology(cluster: Cluster, chart: ChartRef) -> dict[str, Any]:
    return {"apiVersion": cluster.scheduling.kueue_release.topology_api_version, "kind": vocabulary.TOPOLOGY,
            "metadata": metadata(topology_name(cluster), chart, annotations=CUSTOM),
            "spec": {"levels": [{"nodeLabel": level.node_label} for level in cluster.scheduling.topology]}}


def covered_resources(queue: Queue) -> list[str]:
    """Every resource of every pool the queue covers, in the order the pools offer them."""
    covered: list[str] = []
    for share in queue.shares:
        covered += [quota.resource for quota in share.quotas if quota.resource not in covered]
    return covered


def build_cluster_queue(cluster: Cluster, queue: Queue, chart: ChartRef) -> dict[str, Any]:
    """One resource group: every resource a job of the cluster can request, each pool a flavor with its share
    (0 where its nodes have none of a resource), so no job is inadmissible for a resource nobody covers."""
    covered = covered_resources(queue)
    flavors = []
    for share in queue.shares:
        quotas = {quota.resource: quota for quota in share.quotas}
        resources = []
        for resource in covered:
            quota = quotas.get(resource)
            entry: dict[str, Any] = {"name": resource, "nominalQuota": quota.nominal if quota else 0}
            if quota is not None and quota.borrowing is not None:
                entry["borrowingLimit"] = quota.borrowing
            resources.append(entry)
        flavors.append({"name": flavor_name(share.pool.name), "resources": resources})
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchExpressions": [{"key": vocabulary.NAMESPACE_NAME_LABEL, "operator": "In",
                                                    "values": list(queue.namespaces)}]},
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
    }
    if queue.cohort is not None:
        spec[cluster.scheduling.kueue_release.cohort_field] = queue.cohort
    preemption: dict[str, str] = {}
    if queue.cohort is not None:
        preemption["reclaimWithinCohort"] = "Any"  # what a queue lent is taken back when it needs it
    if cluster.scheduling.priority_classes:
        preemption["withinClusterQueue"] = "LowerPriority"
    if preemption:
        spec["preemption"] = preemption
    return {"apiVersion": cluster.scheduling.kueue_release.api_version, "kind": vocabulary.CLUSTER_QUEUE,
            "metadata": metadata(queue.name, chart, annotations=CUSTOM), "spec": spec}


def build_local_queue(queue: Queue, namespace: str, chart: ChartRef, release: KueueRelease = NEWEST) -> dict[str, Any]:
    return {"apiVersion": release.api_version, "kind": vocabulary.LOCAL_QUEUE,
            "metadata": metadata(queue.name, chart, namespace, annotations=CUSTOM),
            "spec": {"clusterQueue": queue.name}}


def kai_queue_spec(resources: tuple[KaiResource, ...], weight: int | None, priority: int | None,
                   parent: str | None) -> dict[str, Any]:
    """A KAI Queue's spec: each resource's quota, limit and over-quota weight (the profile's `weight`, else 1, KAI's
    own queues' value), the parent queue of a cohort's member, the queue's priority."""
    spec: dict[str, Any] = {}
    if parent is not None:
        spec["parentQueue"] = parent
    if priority is not None:
        spec["priority"] = priority
    spec["resources"] = {entry.resource: {"quota": entry.quota, "limit": entry.limit,
                                          "overQuotaWeight": weight if weight is not None else 1}
                         for entry in resources}
    return spec


def build_kai_queue(name: str, spec: dict[str, Any], chart: ChartRef) -> dict[str, Any]:
    return {"apiVersion": kai.QUEUE_API_VERSION, "kind": kai.QUEUE,
            "metadata": metadata(name, chart, annotations=CUSTOM), "spec": spec}


def kai_parents(queues: tuple[Queue, ...]) -> list[tuple[str, tuple[KaiResource, ...]]]:
    """The parent Queue of each cohort, in the order cohorts first appear: its members' quotas summed, no limit."""
    cohorts = list(dict.fromkeys(queue.cohort for queue in queues if queue.cohort is not None))
    return [(cohort, kai_quota.parent_resources(queue.kai for queue in queues if queue.cohort == cohort))
            for cohort in cohorts]


def build_kai_topology(cluster: Cluster, chart: ChartRef) -> dict[str, Any]:
    """KAI's Topology, named after the cluster: the levels highest first, as Kueue's."""
    return {"apiVersion": kai.TOPOLOGY_API_VERSION, "kind": kai.TOPOLOGY,
            "metadata": metadata(topology_name(cluster), chart, annotations=CUSTOM),
            "spec": {"levels": [{"nodeLabel": level.node_label} for level in cluster.scheduling.topology]}}


def kai_infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    """kai: the PriorityClasses, the Topology, a parent Queue per cohort and a Queue per queue."""
    scheduling = cluster.scheduling
    manifests = [Manifest(PRIORITY_CLASSES_TEMPLATE, build_priority_class(p.name, p.value, p.description, chart))
                 for p in scheduling.priority_classes]
    if scheduling.topology:
        manifests.append(Manifest(KAI_TOPOLOGY_TEMPLATE, build_kai_topology(cluster, chart)))
    manifests += [Manifest(KAI_QUEUES_TEMPLATE, build_kai_queue(cohort, kai_queue_spec(resources, None, None, None),
                                                                chart))
                  for cohort, resources in kai_parents(scheduling.queues)]
    manifests += [Manifest(KAI_QUEUES_TEMPLATE, build_kai_queue(queue.name, kai_queue_spec(
        queue.kai, queue.weight, queue.priority, queue.cohort), chart)) for queue in scheduling.queues]
    return manifests


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    """The cluster-wide scheduling objects of the cluster's scheduler; none without one."""
    scheduling = cluster.scheduling
    classes = scheduling.priority_classes
    if scheduling.scheduler is Scheduler.KAI:
        return kai_infra(cluster, chart)
    if scheduling.scheduler is not Scheduler.KUEUE:  # none: the PriorityClasses alone, for the pods' priority
        manifests = [Manifest(PRIORITY_CLASSES_TEMPLATE, build_priority_class(p.name, p.value, p.description, chart))
                     for p in classes]
        return manifests + [Manifest(VOLCANO_QUEUES_TEMPLATE, build_volcano_queue(queue, chart))
                            for queue in scheduling.queues]
    release = scheduling.kueue_release
    manifests = [Manifest(WORKLOAD_PRIORITY_CLASSES_TEMPLATE,
                          build_workload_priority_class(p.name, p.value, p.description, chart, release))
                 for p in classes]
    if scheduling.topology:
        manifests.append(Manifest(TOPOLOGY_TEMPLATE, build_topology(cluster, chart)))
    manifests += [Manifest(RESOURCE_FLAVORS_TEMPLATE, build_resource_flavor(cluster, pool.name, chart))
                  for pool in cluster.pools]
    manifests += [Manifest(CLUSTER_QUEUES_TEMPLATE, build_cluster_queue(cluster, queue, chart))
                  for queue in scheduling.queues]
    manifests += [Manifest(LOCAL_QUEUES_TEMPLATE, build_local_queue(queue, namespace, chart, release))
                  for queue in scheduling.queues for namespace in queue.namespaces]
    return manifests


# --- job -----------------------------------------------------------------------------------------

def min_available(job: Job, workers: Variable) -> Variable | int:
    """The gang's minimum: the profile's, else the workers (following the `workers` value) under
    `WaitForWorkersReady`, where the launcher is created only once they run, so counting it would deadlock
    (mpi-operator #608); else the workers and the launcher."""
    if job.scheduling.min_available is not None:
        return job.scheduling.min_available
    return workers.added(launcher_in_gang(job.launcher_creation_policy))


def kai_min_available(job: Job, workers: Variable) -> Variable | int:
    """kai: the #608 minimum as KAI's podgrouper reads it. It takes `schedulingPolicy.minAvailable` off the MPIJob
    (else every replica), and under `WaitForWorkersReady`, while no launcher pod exists, subtracts the launcher's
    replicas from it (kai-scheduler/KAI-Scheduler pkg/podgrouper/podgrouper/plugins/kubeflow/distributed_common.go
    and kubeflow/mpi/mpi-grouper.go, handleDelayedLauncherPolicy, @ d5bc503a146317e51037d89775d77172c6d12f71): the
    launcher is written in so that the gang before it is the workers, not one fewer."""
    delayed = 1 - launcher_in_gang(job.launcher_creation_policy)
    if job.scheduling.min_available is not None:
        return job.scheduling.min_available + delayed
    return workers.added(1)  # every pod; under WaitForWorkersReady the workers until the launcher exists


def scheduling_policy(job: Job, workers: Variable) -> dict[str, Any] | None:
    """`runPolicy.schedulingPolicy`, for the PodGroup mpi-operator creates under volcano and coscheduling. A cluster
    that declares no gang scheduler gets the gang's minimum alone: the profile cannot say whether its mpi-operator
    runs with `--gang-scheduling`, and if it does, a PodGroup without minAvailable counts the launcher, which
    `WaitForWorkersReady` creates last (#608); without the flag the operator reads `schedulingPolicy` nowhere
    (facts 1), so the minimum is harmless. Kueue admits a job whole and reads none of it."""
    scheduling = job.cluster.scheduling
    if scheduling.scheduler is Scheduler.NONE:
        return {SchedulingPolicyField.MIN_AVAILABLE: min_available(job, workers)}
    if scheduling.scheduler is Scheduler.KAI:
        return {SchedulingPolicyField.MIN_AVAILABLE: kai_min_available(job, workers)}
    if not scheduling.scheduler.gangs_through_operator:
        return None
    policy: dict[str, Any] = {SchedulingPolicyField.MIN_AVAILABLE: min_available(job, workers)}
    volcano = scheduling.scheduler is Scheduler.VOLCANO
    # mpi-operator passes the queue and priority class to a Volcano PodGroup only, and the schedule timeout to a
    # scheduler-plugins PodGroup only (whose CRD has no priority: the pods carry it, `pod_priority_class`).
    if volcano and job.scheduling.queue is not None:
        policy[SchedulingPolicyField.QUEUE] = job.scheduling.queue
    if volcano and job.scheduling.priority_class is not None:
        policy[SchedulingPolicyField.PRIORITY_CLASS] = job.scheduling.priority_class
    if not volcano and scheduling.schedule_timeout_seconds is not None:
        policy[SchedulingPolicyField.SCHEDULE_TIMEOUT_SECONDS] = scheduling.schedule_timeout_seconds
    return policy


def pod_priority_class(job: Job) -> str | None:
    """coscheduling: the pods' own `priorityClassName` (the scheduler-plugins PodGroup has no priority field, and
    mpi-operator does not pass `schedulingPolicy.priorityClass` to it); no gang scheduler: likewise, the only place
    a priority can be said (kube-scheduler orders its queue by it and preempts lower ones for it)."""
    if job.cluster.scheduling.scheduler in (Scheduler.COSCHEDULING, Scheduler.NONE):
        return job.scheduling.priority_class
    return None


def job_labels(job: Job) -> dict[str, str]:
    """kueue: the LocalQueue the MPIJob is admitted through, and its WorkloadPriorityClass. kai: the Queue and the
    PriorityClass, which KAI's podgrouper reads off the pods' top owner (without one, the MPIJob's default `train`)."""
    if job.cluster.scheduling.scheduler is Scheduler.KAI and job.scheduling.queue is not None:
        labels = {kai.QUEUE_LABEL: job.scheduling.queue}
        if job.scheduling.priority_class is not None:
            labels[kai.PRIORITY_LABEL] = job.scheduling.priority_class
        return labels
    if job.cluster.scheduling.scheduler is not Scheduler.KUEUE or job.scheduling.queue is None:
        return {}
    labels = {vocabulary.QUEUE_NAME_LABEL: job.scheduling.queue}
    if job.scheduling.priority_class is not None:
        labels[vocabulary.PRIORITY_CLASS_LABEL] = job.scheduling.priority_class
    return labels


def kai_job_annotations(job: Job) -> dict[str, str]:
    """kai: the Topology and the level all the job's pods must (should) share, which KAI's podgrouper reads off the
    pods' top owner (defaultgrouper/default_grouper.go @ d5bc503a146317e51037d89775d77172c6d12f71)."""
    if job.cluster.scheduling.scheduler is not Scheduler.KAI or job.scheduling.topology_label is None:
        return {}
    key = kai.REQUIRED_PLACEMENT if job.scheduling.topology_required else kai.PREFERRED_PLACEMENT
    return {kai.TOPOLOGY_ANNOTATION: topology_name(job.cluster), key: job.scheduling.topology_label}


def pod_scheduler(job: Job) -> dict[str, str]:
    """kai: the `schedulerName` of every pod, so that KAI, not the default scheduler, places them (mpi-operator sets
    it only under `--gang-scheduling`, which KAI does not use)."""
    name = job.cluster.scheduling.scheduler_name
    return {"schedulerName": name} if job.cluster.scheduling.scheduler is Scheduler.KAI and name else {}


def _topology_request(job: Job) -> dict[str, str]:
    """The podset topology annotation: the level the pod set must (or should) share."""
    if job.scheduling.topology_label is None:
        return {}
    key = vocabulary.REQUIRED_TOPOLOGY if job.scheduling.topology_required else vocabulary.PREFERRED_TOPOLOGY
    return {key: job.scheduling.topology_label}


def worker_annotations(job: Job) -> dict[str, str]:
    """kueue: the topology level all workers must (or should) share; for a job larger than one domain of its slice
    level, the slices, each within one domain of it (the slice level always lies below the job's level); the PodSet
    group they share with the launcher (`launcher_grouping`)."""
    annotations = _topology_request(job)
    slices = job.scheduling.slices
    if annotations and slices is not None:
        annotations[vocabulary.SLICE_REQUIRED_TOPOLOGY] = slices.domain.node_label
        annotations[vocabulary.SLICE_SIZE] = str(slices.size)
    return {**annotations, **launcher_annotations(job)}


def launcher_annotations(job: Job) -> dict[str, str]:
    """kueue: where launcher and workers are one PodSet group (`launcher_grouping`), the group on both and the
    workers' topology request on the launcher, as Kueue requires of a group (the same request on both pod sets)."""
    grouped, _ = launcher_grouping(job)
    if not grouped:
        return {}
    return {**_topology_request(job), vocabulary.PODSET_GROUP_NAME: PODSET_GROUP}


def launcher_grouping(job: Job) -> tuple[bool, str]:
    """Whether the launcher is placed in the workers' topology domain (a PodSet group), and why (not). Under a
    topology-aware flavor Kueue places each pod set of a job on its own: a launcher without a group lands on any node
    of the flavor, away from the workers it drives."""
    scheduling = job.cluster.scheduling
    if scheduling.scheduler is not Scheduler.KUEUE or job.scheduling.topology_label is None:
        return False, "no topology level: nothing to share"
    if job.backend is not Backend.MPIJOB:
        return False, f"a {job.backend.noun} is not an MPIJob: Kueue groups an MPIJob's launcher and workers"
    if job.cluster.launcher_pool not in (None, job.pool.name):
        return False, (f"the launcher runs on pool '{job.cluster.launcher_pool}' (`launcherPool`), another flavor "
                       "than the workers'")
    if job.scheduling.slices is not None:
        return False, "the workers are cut into slices, which Kueue does not allow beside a PodSet group"
    release = scheduling.kueue_release
    if not release.serves(MPIJOB_PODSET_GROUP_MINOR):
        return False, (f"Kueue {release.name} does not group an MPIJob's pod sets (from "
                       f"{release_name(MPIJOB_PODSET_GROUP_MINOR)}): the launcher lands on any node of the flavor")
    return True, (f"one PodSet group ({vocabulary.PODSET_GROUP_NAME}={PODSET_GROUP}): Kueue places the launcher in "
                  "the workers' domain")
