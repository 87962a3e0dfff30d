"""NVIDIA KAI Scheduler's APIs (kai-scheduler/KAI-Scheduler): kinds, API versions, the labels and annotations its
podgrouper and scheduler read, its default priority classes and the units of a Queue's quota.

Sources: kai-scheduler/KAI-Scheduler @ d5bc503a146317e51037d89775d77172c6d12f71: deployments/kai-scheduler/crds/
(Queue scheduling.run.ai/v2, PodGroup scheduling.run.ai/v2alpha2, Topology kai.scheduler/v1alpha1),
pkg/common/constants/constants.go (DefaultQueueLabel, DefaultSchedulerName, UnlimitedResourceQuantity),
pkg/podgrouper/podgrouper/plugins/constants/constants.go (PriorityLabelKey, the topology annotations,
MinMemberOverrideKey), pkg/common/podgroup/preemptible.go (nonPreemptiblePriorityThreshold),
deployments/kai-scheduler/templates/priorityclasses/ (train 50, build-preemptible 75, build 100, inference 125),
pkg/podgrouper/podgrouper/hub/hub.go (the kinds it groups: MPIJob by its own grouper; TrainJob by skipping to its
JobSet; no Volcano Job) and docs/queues/README.md (quota units: CPU in millicores, memory in megabytes of 10^6
bytes, GPUs in devices; -1 unlimited).
"""

from __future__ import annotations

QUEUE_API_VERSION = "scheduling.run.ai/v2"
QUEUE = "Queue"
PODGROUP_API_VERSION = "scheduling.run.ai/v2alpha2"
PODGROUP = "PodGroup"
TOPOLOGY_API_VERSION = "kai.scheduler/v1alpha1"
TOPOLOGY = "Topology"

SCHEDULER_NAME = "kai-scheduler"
"""The `schedulerName` of the pods KAI schedules (its default; a deployment may run it under another name)."""
QUEUE_LABEL = "kai.scheduler/queue"
"""On the workload (the pods' top owner) or its pods: the leaf Queue it is scheduled in."""
PRIORITY_LABEL = "priorityClassName"
"""On the workload or its pods: the PriorityClass of its PodGroup (else the workload type's default)."""
TOPOLOGY_ANNOTATION = "kai.scheduler/topology"
REQUIRED_PLACEMENT = "kai.scheduler/topology-required-placement"
PREFERRED_PLACEMENT = "kai.scheduler/topology-preferred-placement"
"""On the workload: the Topology it is placed by, and the node label of the level all its pods must (should) share."""
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
"""On the workload or its pods: `preemptible` or `non-preemptible`, overriding what the priority's value says
(pkg/podgrouper/podgrouper/plugins/constants/constants.go; values: pkg/apis/scheduling/v2alpha2/podgroup_types.go)."""
PREEMPTIBLE = "preemptible"
NON_PREEMPTIBLE = "non-preemptible"
MIN_MEMBER_OVERRIDE = "kai.scheduler/batch-min-member"
SKIP_PODGROUPER = "kai.scheduler/skip-podgrouper"

UNLIMITED = -1
"""A Queue's `quota` or `limit` of -1: no bound."""
NON_PREEMPTIBLE_FROM = 100
"""A PodGroup of priority at least this is not preemptible, and runs only within its queue's quota."""
DEFAULT_PRIORITY_CLASSES = (("train", 50), ("build-preemptible", 75), ("build", 100), ("inference", 125))
"""The PriorityClasses KAI's chart installs (`defaultPriorityClasses.enabled`); MPIJobs default to `train`."""
DEFAULT_PRIORITY_CLASS = "train"
INFERENCE_KINDS = (("apps", "Deployment"), ("serving.knative.dev", "Service"))
"""The workloads (API group, kind) whose default priority class is `inference` (125) instead of `train`
(docs/priority/README.md, "Workload Default Priority")."""
INFERENCE_PRIORITY_CLASS = "inference"
DEFAULT_QUEUE = "default-queue"
DEFAULT_PARENT_QUEUE = "default-parent-queue"
"""The queues KAI's chart creates: a chart must not."""
MILLICORES_PER_CPU = 1000
BYTES_PER_MEMORY_UNIT = 10**6
"""A Queue's CPU is counted in millicores and its memory in megabytes (10^6 bytes)."""
QUEUE_RESOURCES = ("cpu", "memory", "gpu")
"""The resources of a Queue's `spec.resources`, each with `quota`, `limit` and `overQuotaWeight`; an unset `quota` or
`limit` is 0 to the scheduler (pkg/apis/scheduling/v2/resources.go: plain float64 fields; pkg/scheduler/plugins/
proportion/proportion.go reads them as they are), and a Queue without `resources` is refused by KAI's webhook
("resources must be specified", pkg/admission/webhook/queuehooks/queue_validator.go)."""
MISSING_RESOURCES = "resources must be specified"
