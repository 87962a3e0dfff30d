"""Gang scheduling and queue admission: an MPIJob whose gang can never complete, or whose queue can never admit
it, waits forever without an error.

- A gang (`runPolicy.schedulingPolicy`, from which mpi-operator makes the PodGroup under `--gang-scheduling`)
  asks for no more pods than the job has, and, under `launcherCreationPolicy: WaitForWorkersReady`, for no more
  than its workers: the launcher is created only once they run, so a gang that counts it deadlocks
  (mpi-operator #608; with no minAvailable the operator counts it). A KAI Scheduler workload's gang is KAI's
  podgrouper's, which counts otherwise (kai_scheduler.py).
- A Volcano Job's gang (`minAvailable`) asks for no more pods than its tasks have, and, where its launcher task
  waits for the workers (`dependsOn`), for no more than the workers: the same deadlock.
- A gang's Volcano queue (`schedulingPolicy.queue`, a Volcano Job's `queue`) exists, unless it is Volcano's own
  `default` or `root`.
- A job with Kueue's queue-name label names a LocalQueue of its namespace (in the render or the extra
  manifests of the same cluster), whose ClusterQueue, where known, covers every resource its pods request; it
  is created suspended, or a GitOps tool would start it without admission. Its priority-class label names a
  WorkloadPriorityClass, and a worker's podset topology (and slice topology) annotation a level of a Topology.
- No PriorityClass takes a `system-` name: the API server refuses it, and the built-in ones exist already. No MPI
  job (`runs_a_job`) runs at one (a `priorityClassName` anywhere in it, an MPIJob's gang `priorityClass`): its pods
  would rank above every workload and preempt them.
"""

from __future__ import annotations

from typing import Any

from mpigen.check.rules.pods import (
    is_kai_workload,
    is_trainjob,
    is_volcano_job,
    pod_requests,
    pod_templates,
    runs_a_job,
)
from mpigen.check.rules.reading import as_dict, as_int, as_str, metadata_name, path_of, values_under
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.support.diagnostics import Severity
from mpigen.vocabulary import mpi_operator, trainer, volcano_job
from mpigen.vocabulary import scheduling as vocabulary
from mpigen.vocabulary.mpi_operator import RUN_POLICY_PATH, SUSPEND_PATH, RunPolicyField, SchedulingPolicyField, SpecField
from mpigen.vocabulary.reserved import SYSTEM_PRIORITY_CLASS_REASON, is_system_priority_class

RULE_SCHEDULING = "scheduling"
VOLCANO_GROUP = vocabulary.VOLCANO_API_VERSION.split("/")[0]
PRIORITY_CLASS_GROUP = vocabulary.PRIORITY_CLASS_API_VERSION.split("/")[0]
GANG_PATH = (*RUN_POLICY_PATH, RunPolicyField.SCHEDULING_POLICY)
"""An MPIJob's gang: `spec.runPolicy.schedulingPolicy`, which mpi-operator makes the PodGroup from."""


def check_scheduling(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    findings: list[Finding] = []
    known = _Known([*documents, *context.extra])
    for document in documents:
        spec = as_dict(document.obj.get("spec")) or {}
        findings += _check_priority_class_name(document)
        findings += _check_job_priority(document, context) if runs_a_job(document, context) else []
        if is_volcano_job(document):
            findings += _check_volcano_job_gang(document, spec)
            findings += _check_volcano_queue(document, as_str(spec.get("queue")), ("spec", "queue"), known, context)
            continue
        if is_trainjob(document):
            runtime, found = _trainjob_runtime(document, spec, known, context)
            findings += found
            findings += _check_queue(document, trainer.SUSPEND_PATH, runtime, known, context)
            continue
        if document.kind != mpi_operator.KIND:
            continue
        findings += [] if is_kai_workload(document) else _check_gang(document, spec)  # KAI's: kai_scheduler.py
        policy = as_dict((as_dict(spec.get(SpecField.RUN_POLICY)) or {}).get(RunPolicyField.SCHEDULING_POLICY)) or {}
        findings += _check_volcano_queue(document, as_str(policy.get(SchedulingPolicyField.QUEUE)),
                                         (*GANG_PATH, SchedulingPolicyField.QUEUE), known, context)
        findings += _check_queue(document, SUSPEND_PATH, document, known, context)
    return findings


def _check_priority_class_name(document: RenderedObject) -> list[Finding]:
    """A PriorityClass named `system-*`: refused by the API server, or (a built-in's very name) one that exists."""
    if document.kind != vocabulary.PRIORITY_CLASS or document.api_version.rpartition("/")[0] != PRIORITY_CLASS_GROUP:
        return []
    name = metadata_name(document)
    if not is_system_priority_class(name):
        return []
    return [finding(document, path_of(("metadata", "name")), (
        f"PriorityClass {name}: {SYSTEM_PRIORITY_CLASS_REASON}; name it otherwise"), RULE_SCHEDULING)]


def _check_job_priority(document: RenderedObject, context: CheckContext) -> list[Finding]:
    """A job at a `system-` priority class: every `priorityClassName` in it (its pod specs', a Volcano Job's own, a
    TrainJob's overrides) and an MPIJob's gang `priorityClass`."""
    found = list(values_under(document.obj, "priorityClassName"))
    if document.kind == mpi_operator.KIND:
        found += [(path, value) for path, value in values_under(document.obj, SchedulingPolicyField.PRIORITY_CLASS)
                  if path[-2:-1] == (RunPolicyField.SCHEDULING_POLICY,)]
    return [finding(document, path_of(path), (
        f"{path[-1]} {value}: {SYSTEM_PRIORITY_CLASS_REASON}; give the job a priority class of "
        "its own"), RULE_SCHEDULING) for path, value in found if isinstance(value, str) and is_system_priority_class(value)]


def _trainjob_runtime(document: RenderedObject, spec: dict[str, Any], known: _Known,
                      context: CheckContext) -> tuple[RenderedObject | None, list[Finding]]:
    """The TrainingRuntime a TrainJob runs on, which holds its pods: Trainer's webhook refuses a TrainJob whose
    runtime does not exist ("specified trainingRuntime must be created before the TrainJob is created"). A
    ClusterTrainingRuntime is not looked for (mpigen writes none)."""
    ref = as_dict(spec.get(trainer.RUNTIME_REF)) or {}
    name = as_str(ref.get("name"))
    if not name or ref.get("kind") != trainer.RUNTIME_KIND:
        return None, []
    runtime = known.find(trainer.RUNTIME_KIND, name, document.namespace, document, context, trainer.GROUP)
    if runtime is not None:
        return runtime, []
    return None, [finding(document, path_of(("spec", trainer.RUNTIME_REF, "name")), (
        f"no TrainingRuntime {document.namespace}/{name} in this render or the extra manifests (--context); Trainer "
        "refuses a TrainJob whose runtime does not exist (mpigen puts it in the cluster's infra chart)"),
        RULE_SCHEDULING)]


def _check_volcano_job_gang(document: RenderedObject, spec: dict[str, Any]) -> list[Finding]:
    """A Volcano Job's gang (`minAvailable`) asks for no more pods than its tasks have (Volcano's admission
    webhook refuses the job otherwise), and for none of a task that starts only after others run (`dependsOn`):
    its pods are created once the others run, which wait for the whole gang, so the job deadlocks."""
    tasks = [task for task in spec.get(volcano_job.TASKS) or [] if isinstance(task, dict)] \
        if isinstance(spec.get(volcano_job.TASKS), list) else []
    replicas = {str(task.get("name")): as_int(task.get("replicas")) for task in tasks}
    minimum = as_int(spec.get(volcano_job.MIN_AVAILABLE))
    if minimum is None or any(count is None for count in replicas.values()):
        return []  # not integers, or left to Volcano's defaults: the schema check says what is wrong
    total = sum(count for count in replicas.values() if count is not None)
    where = path_of(("spec", volcano_job.MIN_AVAILABLE))
    if minimum > total:
        return [finding(document, where, (
            f"minAvailable {minimum} is more than the job's {total} pods: Volcano refuses the job ('minAvailable' "
            "should not be greater than total replicas in tasks)"), RULE_SCHEDULING)]
    waiting = [str(task.get("name")) for task in tasks if task.get("dependsOn")]
    first = total - sum(replicas[name] or 0 for name in waiting)
    if waiting and minimum > first:
        return [finding(document, where, (
            f"minAvailable {minimum}, but task(s) {', '.join(waiting)} start only once the tasks they depend on run, "
            f"and those {first} pods wait for the whole gang: the job deadlocks; set minAvailable to {first}"),
            RULE_SCHEDULING)]
    return []


def _worker_count(spec: dict[str, Any]) -> int | None:
    replicas = as_dict(spec.get(SpecField.MPI_REPLICA_SPECS)) or {}
    worker = as_dict(replicas.get(mpi_operator.WORKER))
    return as_int(worker.get("replicas")) if worker is not None else None


def _check_gang(document: RenderedObject, spec: dict[str, Any]) -> list[Finding]:
    run_policy = as_dict(spec.get(SpecField.RUN_POLICY)) or {}
    policy = as_dict(run_policy.get(RunPolicyField.SCHEDULING_POLICY))
    workers = _worker_count(spec)
    if policy is None or workers is None:
        return []
    given = policy.get(SchedulingPolicyField.MIN_AVAILABLE)
    minimum = as_int(given)
    if given is not None and minimum is None:
        return []  # not an integer: the schema check says so
    wait = spec.get(SpecField.LAUNCHER_CREATION_POLICY) == mpi_operator.WAIT_FOR_WORKERS_READY
    pods = workers + 1
    where = path_of((*GANG_PATH, SchedulingPolicyField.MIN_AVAILABLE)) if given is not None else path_of(GANG_PATH)
    if minimum is not None and minimum > pods:
        return [finding(document, where, (
            f"minAvailable {minimum} is more than the job's {pods} pods ({workers} workers and the launcher): the "
            "gang never completes and no pod starts"), RULE_SCHEDULING)]
    if wait and (minimum is None or minimum > workers):
        said = f"minAvailable {minimum}" if minimum is not None else \
            f"no minAvailable, so mpi-operator asks for {pods} (workers + launcher)"
        return [finding(document, where, (
            f"{said}, but under launcherCreationPolicy WaitForWorkersReady the launcher is created only once all "
            f"{workers} workers run, and they wait for the whole gang: the job deadlocks (mpi-operator #608); "
            f"set minAvailable to {workers}"), RULE_SCHEDULING)]
    return []


def _labels(obj: dict[str, Any]) -> dict[str, Any]:
    return as_dict((as_dict(obj.get("metadata")) or {}).get("labels")) or {}


_LOOKED_UP = {(VOLCANO_GROUP, vocabulary.VOLCANO_QUEUE), (trainer.GROUP, trainer.RUNTIME_KIND),
              *((vocabulary.KUEUE_GROUP, kind) for kind in (vocabulary.LOCAL_QUEUE, vocabulary.CLUSTER_QUEUE,
                                                             vocabulary.WORKLOAD_PRIORITY_CLASS, vocabulary.TOPOLOGY))}


class _Known:
    """The queues, priority classes, topologies and TrainingRuntimes among the documents, by API group, kind and
    name: each job's lookups cost what its cluster's few such objects cost, not what the whole render holds."""

    def __init__(self, documents: list[RenderedObject]) -> None:
        self._by_name: dict[tuple[str, str, str], list[RenderedObject]] = {}
        self.topologies: list[RenderedObject] = []
        for document in documents:
            group = document.api_version.rpartition("/")[0]
            if (group, document.kind) in _LOOKED_UP:
                self._by_name.setdefault((group, document.kind, metadata_name(document)), []).append(document)
                if document.kind == vocabulary.TOPOLOGY:
                    self.topologies.append(document)

    def find(self, kind: str, name: str, namespace: str | None, document: RenderedObject, context: CheckContext,
             group: str = vocabulary.KUEUE_GROUP) -> RenderedObject | None:
        for other in self._by_name.get((group, kind, name), ()):
            if (namespace is None or other.namespace == namespace) and context.same_cluster(document, other):
                return other
        return None


def _check_volcano_queue(document: RenderedObject, queue: str | None, where: tuple[str, ...], known: _Known,
                         context: CheckContext) -> list[Finding]:
    if not queue or queue in vocabulary.VOLCANO_OWN_QUEUES:
        return []
    if known.find(vocabulary.VOLCANO_QUEUE, queue, None, document, context, VOLCANO_GROUP) is not None:
        return []
    return [finding(document, path_of(where), (
        f"no Volcano Queue {queue} in this render or the extra manifests (--context); Volcano leaves the job's "
        "PodGroup pending"), RULE_SCHEDULING)]


def _check_kueue_references(document: RenderedObject, pods: RenderedObject | None, known: _Known,
                            context: CheckContext) -> list[Finding]:
    """The WorkloadPriorityClass the priority-class label names, and the topology levels the workers ask for
    (`pods`: the object that holds the job's pods, the job itself but for a TrainJob)."""
    findings: list[Finding] = []
    priority = _labels(document.obj).get(vocabulary.PRIORITY_CLASS_LABEL)
    if isinstance(priority, str) and known.find(vocabulary.WORKLOAD_PRIORITY_CLASS, priority, None, document,
                                                context) is None:
        findings.append(finding(document, path_of(("metadata", "labels", vocabulary.PRIORITY_CLASS_LABEL)), (
            f"no WorkloadPriorityClass {priority} in this render or the extra manifests (--context)"),
            RULE_SCHEDULING))
    levels = {level.get("nodeLabel") for other in known.topologies if context.same_cluster(document, other)
              for level in (as_dict(other.obj.get("spec")) or {}).get("levels") or [] if isinstance(level, dict)}
    if pods is None:
        return findings
    for template in pod_templates(pods):
        annotations = as_dict(template.metadata.get("annotations")) or {}
        for key in (vocabulary.REQUIRED_TOPOLOGY, vocabulary.PREFERRED_TOPOLOGY, vocabulary.SLICE_REQUIRED_TOPOLOGY):
            label = annotations.get(key)
            if isinstance(label, str) and label not in levels:
                findings.append(finding(pods, path_of((*template.path, "metadata", "annotations", key)), (
                    f"no Kueue Topology in this render or the extra manifests (--context) has the level {label}; "
                    "Kueue never admits the job"), RULE_SCHEDULING))
    return findings


def _check_queue(document: RenderedObject, suspend: tuple[str, ...], pods: RenderedObject | None, known: _Known,
                 context: CheckContext) -> list[Finding]:
    """The queue a Kueue job names, and what it asks of it: created suspended (`suspend`: where the job object says
    so), a LocalQueue that exists, a ClusterQueue covering what its pods (in `pods`) request."""
    queue = _labels(document.obj).get(vocabulary.QUEUE_NAME_LABEL)
    if queue is None:
        return []
    where = path_of(("metadata", "labels", vocabulary.QUEUE_NAME_LABEL))
    if not isinstance(queue, str):
        return []
    findings: list[Finding] = []
    node: Any = document.obj
    for part in suspend:
        holder = as_dict(node)
        node = holder.get(part) if holder is not None else None
    if node is not True:
        findings.append(finding(document, path_of(suspend), (
            f"a job Kueue admits should be created suspended ({'.'.join(suspend[1:])}: true): Kueue unsuspends it on "
            "admission, and a GitOps tool that puts git's false back starts it without admission"),
            RULE_SCHEDULING, Severity.WARNING))
    findings += _check_kueue_references(document, pods, known, context)
    local = known.find(vocabulary.LOCAL_QUEUE, queue, document.namespace, document, context)
    if local is None:
        return [*findings, finding(document, where, (
            f"no LocalQueue {document.namespace}/{queue} (named by {vocabulary.QUEUE_NAME_LABEL}) in this render or "
            "the extra manifests (--context); Kueue never admits the job"), RULE_SCHEDULING)]
    cluster_queue_name = as_str((as_dict(local.obj.get("spec")) or {}).get("clusterQueue"))
    if not cluster_queue_name:
        return findings
    cluster_queue = known.find(vocabulary.CLUSTER_QUEUE, cluster_queue_name, None, local, context)  # the queue's
    if cluster_queue is None:
        return findings
    covered: set[str] = set()
    for group in (as_dict(cluster_queue.obj.get("spec")) or {}).get("resourceGroups") or []:
        for resource in (as_dict(group) or {}).get("coveredResources") or []:
            if isinstance(resource, str):
                covered.add(resource)
    if pods is None:
        return findings
    for template in pod_templates(pods):
        for resource, asked in sorted(pod_requests(template).items()):
            if resource in covered:
                continue
            findings.append(finding(pods, path_of(asked.paths[0]), (
                f"the {template.role.lower()} requests {resource}, which ClusterQueue {cluster_queue_name} (of "
                f"LocalQueue {document.namespace}/{queue}) does not cover; Kueue never admits the job"),
                RULE_SCHEDULING))
    return findings
