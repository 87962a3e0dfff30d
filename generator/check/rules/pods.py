"""The pods a document makes and what they ask for: what the network, capacity, resources and pod-security
rules all read, in one place so they read a workload the same way."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mpigen.check.rules.reading import Path, as_dict
from mpigen.model import names
from mpigen.readback.findings import CheckContext, RenderedObject
from mpigen.vocabulary import kai, mpi_operator, trainer, volcano_job
from mpigen.vocabulary.kubernetes import api_group, in_kubernetes_domain, whole_quantity

_TEMPLATE_PATHS: dict[str, Path] = {
    "Pod": (),
    "PodTemplate": ("template",),
    "Job": ("spec", "template"),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


@dataclass(frozen=True)
class PodTemplate:
    """One pod a document makes: its metadata and spec, and where they are (`path` + `.metadata`/`.spec`)."""

    document: RenderedObject
    role: str
    path: Path
    metadata: dict[str, Any]
    spec: dict[str, Any]

    @property
    def is_worker(self) -> bool:
        """An MPI job's worker: an MPIJob's Worker replica, the worker task of a Volcano Job mpigen wrote, or the
        `node` replicated job of a TrainingRuntime."""
        return (self.document.kind == mpi_operator.KIND and self.role == mpi_operator.WORKER) or \
            (is_volcano_job(self.document) and self.role == names.WORKER_ROLES["volcano-job"]) or \
            (is_training_runtime(self.document) and self.role == trainer.NODE)

    @property
    def containers(self) -> list[tuple[Path, dict[str, Any]]]:
        return self._list("containers")

    @property
    def init_containers(self) -> list[tuple[Path, dict[str, Any]]]:
        return self._list("initContainers")

    @property
    def every_container(self) -> list[tuple[Path, dict[str, Any]]]:
        """Containers, init containers and ephemeral containers, in that order (the API server judges all three)."""
        return [*self.containers, *self.init_containers, *self._list("ephemeralContainers")]

    def _list(self, key: str) -> list[tuple[Path, dict[str, Any]]]:
        items = self.spec.get(key)
        if not isinstance(items, list):
            return []
        return [((*self.path, "spec", key, i), c) for i, c in enumerate(items) if isinstance(c, dict)]


def is_volcano_job(document: RenderedObject) -> bool:
    """Volcano's own Job (`batch.volcano.sh`), not Kubernetes' batch/v1 Job of the same kind."""
    return document.kind == volcano_job.KIND and document.api_version.split("/")[0] == volcano_job.GROUP


def is_trainjob(document: RenderedObject) -> bool:
    """Kubeflow Trainer's TrainJob, whose pods are in the TrainingRuntime it names."""
    return document.kind == trainer.TRAINJOB_KIND and document.api_version.split("/")[0] == trainer.GROUP


def is_training_runtime(document: RenderedObject) -> bool:
    """Kubeflow Trainer's TrainingRuntime, whose JobSet template holds a TrainJob's pods."""
    return document.kind == trainer.RUNTIME_KIND and document.api_version.split("/")[0] == trainer.GROUP


def is_job_object(document: RenderedObject) -> bool:
    """An MPI job as the controllers mpigen writes for know it: an MPIJob, a Volcano Job, a TrainJob, or the
    TrainingRuntime that holds a TrainJob's pods."""
    return document.kind == mpi_operator.KIND or is_volcano_job(document) or is_trainjob(document) or \
        is_training_runtime(document)


def runs_a_job(document: RenderedObject, context: CheckContext) -> bool:
    """A document that makes an MPI job's pods: a job object, or any workload of one of mpigen's job charts."""
    return is_job_object(document) or (document.chart in context.job_charts and bool(pod_templates(document)))


def is_kai_workload(document: RenderedObject) -> bool:
    """A workload NVIDIA KAI Scheduler schedules: pods of its `schedulerName`, or its queue label on the workload or
    its pods (a KAI deployed under another scheduler name is known by the label)."""
    templates = pod_templates(document)
    if not templates:
        return False
    labels = as_dict((as_dict(document.obj.get("metadata")) or {}).get("labels")) or {}
    return kai.QUEUE_LABEL in labels or any(
        template.spec.get("schedulerName") == kai.SCHEDULER_NAME
        or kai.QUEUE_LABEL in (as_dict(template.metadata.get("labels")) or {}) for template in templates)


_TEMPLATES: dict[int, tuple[RenderedObject, list[PodTemplate]]] | None = None
"""While `templates_kept()` is open: each document's pod templates, found once for all the rules of a run."""


@contextmanager
def templates_kept() -> Iterator[None]:
    """Find each document's pod templates once while the rules run over the same documents (a dozen rules read them);
    outside, every call finds them anew (a caller may change a document between calls)."""
    global _TEMPLATES
    kept, _TEMPLATES = _TEMPLATES, {}
    try:
        yield
    finally:
        _TEMPLATES = kept


def pod_templates(document: RenderedObject) -> list[PodTemplate]:
    """The pod templates of an MPIJob (per replica type), a Volcano Job (per task), a TrainingRuntime (per
    replicated job) or a built-in workload kind."""
    if _TEMPLATES is not None:
        known = _TEMPLATES.get(id(document))
        if known is None or known[0] is not document:
            known = (document, _pod_templates(document))
            _TEMPLATES[id(document)] = known
        return known[1]
    return _pod_templates(document)


def _pod_templates(document: RenderedObject) -> list[PodTemplate]:
    obj = document.obj
    found: list[tuple[str, Path, Any]] = []
    if document.kind == mpi_operator.KIND:
        spec = as_dict(obj.get("spec")) or {}
        for role, replica in (as_dict(spec.get(mpi_operator.SpecField.MPI_REPLICA_SPECS)) or {}).items():
            if isinstance(role, str) and isinstance(replica, dict):
                found.append((role, ("spec", mpi_operator.SpecField.MPI_REPLICA_SPECS, role, "template"),
                              replica.get("template")))
    elif is_volcano_job(document):
        tasks = (as_dict(obj.get("spec")) or {}).get(volcano_job.TASKS)
        for i, task in enumerate(tasks if isinstance(tasks, list) else []):
            if isinstance(task, dict):
                found.append((str(task.get("name", "")), ("spec", volcano_job.TASKS, i, "template"), task.get("template")))
    elif is_training_runtime(document):
        jobset = as_dict((as_dict((as_dict(obj.get("spec")) or {}).get("template")) or {}).get("spec")) or {}
        rjobs = jobset.get(trainer.REPLICATED_JOBS)
        for i, rjob in enumerate(rjobs if isinstance(rjobs, list) else []):
            if isinstance(rjob, dict):
                job_template = as_dict(rjob.get("template")) or {}
                found.append((str(rjob.get("name", "")),
                              ("spec", "template", "spec", trainer.REPLICATED_JOBS, i, "template", "spec", "template"),
                              (as_dict(job_template.get("spec")) or {}).get("template")))
    elif document.kind in _TEMPLATE_PATHS:
        parts = _TEMPLATE_PATHS[document.kind]
        held: Any = obj
        for part in parts:
            held = held.get(part) if isinstance(held, dict) else None
        found.append(("", parts, held))
    templates = []
    for role, parts, template in found:
        if not isinstance(template, dict):
            continue
        pod_metadata = template.get("metadata")
        pod_spec = template.get("spec")
        templates.append(PodTemplate(document, role, parts, pod_metadata if isinstance(pod_metadata, dict) else {},
                                     pod_spec if isinstance(pod_spec, dict) else {}))
    return templates


BUILTIN_WORKLOAD_GROUPS = ("", "apps", "batch")
"""The API groups of Kubernetes' own kinds with pod templates: the API server judges their templates as pods."""


def is_builtin(document: RenderedObject) -> bool:
    """A kind of Kubernetes' own workload groups (a Pod, a Deployment, a batch/v1 Job), not a custom resource."""
    return api_group(document.api_version) in BUILTIN_WORKLOAD_GROUPS


def refused_later(document: RenderedObject) -> str:
    """What a pod template's bad field costs where the API server does not judge the template itself: a custom
    resource (an MPIJob, a Volcano Job) is taken, and every pod its controller makes of it refused."""
    return "" if is_builtin(document) else f"; the API server takes the {document.kind}, and refuses every pod made of it"


def secret_reads(template: PodTemplate) -> list[tuple[Path, str]]:
    """The Secrets a pod reads, with where: by `secretKeyRef` and `envFrom.secretRef` in any container, and as a
    volume (`secret`, or a `projected` volume's `secret` sources)."""
    reads: list[tuple[Path, str]] = []
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for path, container in template._list(key):
            env = container.get("env")
            for i, variable in enumerate(env if isinstance(env, list) else []):
                value_from = as_dict((as_dict(variable) or {}).get("valueFrom")) or {}
                ref = as_dict(value_from.get("secretKeyRef"))
                if ref and isinstance(ref.get("name"), str):
                    reads.append(((*path, "env", i, "valueFrom", "secretKeyRef", "name"), ref["name"]))
            sources = container.get("envFrom")
            for i, source in enumerate(sources if isinstance(sources, list) else []):
                ref = as_dict((as_dict(source) or {}).get("secretRef"))
                if ref and isinstance(ref.get("name"), str):
                    reads.append(((*path, "envFrom", i, "secretRef", "name"), ref["name"]))
    volumes = template.spec.get("volumes")
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        where: Path = (*template.path, "spec", "volumes", i)
        secret = as_dict((as_dict(volume) or {}).get("secret"))
        if secret and isinstance(secret.get("secretName"), str):
            reads.append(((*where, "secret", "secretName"), secret["secretName"]))
        projected = (as_dict((as_dict(volume) or {}).get("projected")) or {}).get("sources")
        for j, source in enumerate(projected if isinstance(projected, list) else []):
            secret = as_dict((as_dict(source) or {}).get("secret"))
            if secret and isinstance(secret.get("name"), str):
                reads.append(((*where, "projected", "sources", j, "secret", "name"), secret["name"]))
    return reads


def is_extended_resource(name: str) -> bool:
    """A device-plugin style resource: domain-prefixed, outside the kubernetes.io domain."""
    if "/" not in name:
        return False
    domain = name.split("/", 1)[0]
    return not in_kubernetes_domain(domain)


@dataclass
class Request:
    """What a pod asks of one resource: the total (None when some amount cannot be read) and who asks."""

    total: int | None
    paths: list[Path]


def container_requests(container: dict[str, Any], path: Path) -> dict[str, tuple[int | None, Path]]:
    """Per resource: the amount a container asks for (limits win over requests) and where it is written."""
    resources = as_dict(container.get("resources")) or {}
    asked: dict[str, tuple[int | None, Path]] = {}
    for section in ("requests", "limits"):
        for resource, value in (as_dict(resources.get(section)) or {}).items():
            if isinstance(resource, str):
                asked[resource] = (whole_quantity(value), (*path, "resources", section, resource))
    return asked


def pod_requests(template: PodTemplate) -> dict[str, Request]:
    """What the pod as a whole needs of each resource: its containers together, or its largest init container."""
    totals: dict[str, Request] = {}
    for path, container in template.containers:
        for resource, (amount, where) in container_requests(container, path).items():
            entry = totals.setdefault(resource, Request(0, []))
            entry.total = None if entry.total is None or amount is None else entry.total + amount
            entry.paths.append(where)
    for path, container in template.init_containers:
        for resource, (amount, where) in container_requests(container, path).items():
            known = totals.get(resource)
            larger = known is not None and known.total is not None and (amount is None or amount > known.total)
            if known is None or larger:
                totals[resource] = Request(amount, [where])
    return totals
