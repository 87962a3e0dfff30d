"""Names mpi-operator creates for an MPIJob (`<job>-config`, `-ssh`, `-launcher`, `-worker-<N>`, Service
`<job>`), and Volcano's job plugins for a Volcano Job (`<job>-svc`, `<job>-ssh`, Service and NetworkPolicy
`<job>`): another object taking one stops the job, so check says so first."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from generator import names
from generator.check.findings import CheckContext, Finding, RenderedObject, finding
from generator.check.rules.pods import is_trainjob, is_volcano_job
from generator.check.rules.reading import metadata_name, path_of
from generator.vocabulary import mpi_operator, trainer, volcano_job

RULE_NAMES = "names"


_WORKER_NAME = re.compile(r"^(?P<job>.+)-worker-(?P<index>[0-9]+)$")


@dataclass(frozen=True)
class _Owned:
    kinds: tuple[str, ...]
    what: str


def operator_owned(job: str, name: str) -> _Owned | None:
    """What mpi-operator creates under `name` for MPIJob `job`, or None when the name is not the operator's."""
    config, ssh, launcher = names.operator_owned_names(job)
    if name == config:
        return _Owned(("ConfigMap",), f"ConfigMap {name} (hostfile and discover_hosts.sh, mounted at /etc/mpi)")
    if name == ssh:
        return _Owned(("Secret",), f"Secret {name} (the job's SSH keys)")
    if name == launcher:
        return _Owned(("Job", "Service"), f"the launcher Job {name} (and for Intel MPI and MPICH a Service {name})")
    if name == names.service_name(job):
        return _Owned(("Service",), f"the headless Service {name} of the workers")
    match = _WORKER_NAME.match(name)
    if match and match.group("job") == job and name == names.worker_name(job, int(match.group("index"))):
        return _Owned(("Pod",), f"worker Pod {name}")
    return None


def _candidate_jobs(name: str) -> list[str]:
    config, ssh, launcher = names.operator_owned_names("")
    candidates = [name]
    for suffix in (config, ssh, launcher):
        if name.endswith(suffix) and len(name) > len(suffix):
            candidates.append(name[: -len(suffix)])
    match = _WORKER_NAME.match(name)
    if match:
        candidates.append(match.group("job"))
    return candidates


def volcano_owned(job: str, name: str) -> _Owned | None:
    """What Volcano's job controller and its svc and ssh plugins create under `name` for Volcano Job `job`."""
    svc, ssh = volcano_job.plugin_owned_names(job)
    if name == svc:
        return _Owned(("ConfigMap",), f"ConfigMap {name} (the svc plugin's host files, mounted at /etc/volcano)")
    if name == ssh:
        return _Owned(("Secret",), f"Secret {name} (the ssh plugin's keys)")
    if name == job:
        return _Owned(("Service", "NetworkPolicy"), f"the headless Service and the NetworkPolicy {name} of the svc "
                      "plugin")
    return None


def _jobs(documents: list[RenderedObject], is_job: Callable[[RenderedObject], bool]
          ) -> dict[tuple[str, str], list[RenderedObject]]:
    """The job objects `is_job` recognises, by namespace and name."""
    jobs: dict[tuple[str, str], list[RenderedObject]] = {}
    for document in documents:
        if is_job(document) and metadata_name(document):
            jobs.setdefault((document.namespace, metadata_name(document)), []).append(document)
    return jobs


def _beside(document: RenderedObject, job: str, jobs: dict[tuple[str, str], list[RenderedObject]],
            context: CheckContext) -> bool:
    """A job named `job` in the document's namespace of its own cluster: a controller's names clash only there."""
    return any(context.same_cluster(document, other) for other in jobs.get((document.namespace, job), ()))


def _check_controller_names(documents: list[RenderedObject], extra: list[RenderedObject], context: CheckContext,
                            is_job: Callable[[RenderedObject], bool], owned_by: Callable[[str, str], _Owned | None],
                            suffixes: tuple[str, ...], whose: str) -> list[Finding]:
    """No object beside a job `<job>` that `is_job` recognises takes a name its controller creates for it:
    `<job>` itself or `<job><suffix>` (what `owned_by(job, name)` says, for the kinds it names)."""
    jobs = _jobs([*documents, *extra], is_job)
    findings: list[Finding] = []
    for document in documents:
        name = metadata_name(document)
        for suffix in ("", *suffixes):
            job = name.removesuffix(suffix) if name.endswith(suffix) else None
            owned = owned_by(job, name) if job and _beside(document, job, jobs, context) else None
            if owned is None or document.kind not in owned.kinds:
                continue
            findings.append(finding(document, path_of(("metadata", "name")), (
                f"name {name} is {whose} {job}: it creates {owned.what} under that name, which this "
                f"{document.kind} would clash with; rename it"), RULE_NAMES))
            break
    return findings


def trainer_owned(job: str, name: str) -> _Owned | None:
    """What Kubeflow Trainer and JobSet create under `name` for TrainJob `job`."""
    hostfile, ssh = trainer.trainer_owned_names(job)
    if name == hostfile:
        return _Owned(("ConfigMap",), f"ConfigMap {name} (the MPI plugin's hostfile, mounted at /etc/mpi)")
    if name == ssh:
        return _Owned(("Secret",), f"Secret {name} (the MPI plugin's ssh keys)")
    if name == job:
        return _Owned(("JobSet", "Service"), f"the JobSet {name} and its headless Service")
    return None


def _suffixes(owned_names: Callable[[str], tuple[str, ...]]) -> tuple[str, ...]:
    """What a controller's names for a job add to the job's name."""
    return tuple(owned.removeprefix("<job>") for owned in owned_names("<job>"))


def check_reserved_names(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """No object beside MPIJob `<job>` is named `<job>-config`, `-ssh`, `-launcher`, `-worker-<N>` (or Service `<job>`);
    none beside Volcano Job `<job>` takes `<job>-svc`, `<job>-ssh`, or Service or NetworkPolicy `<job>`; none beside
    TrainJob `<job>` takes `<job>-mpi-hostfile`, `<job>-mpi-ssh-auth`, or JobSet or Service `<job>`."""
    context = context if context is not None else CheckContext()
    extra = list(context.extra)
    jobs = _jobs([*documents, *extra], lambda d: d.kind == mpi_operator.KIND)
    findings = _check_controller_names(documents, extra, context, is_volcano_job, volcano_owned,
                                       _suffixes(volcano_job.plugin_owned_names), "Volcano's for its Job")
    findings += _check_controller_names(documents, extra, context, is_trainjob, trainer_owned,
                                        _suffixes(trainer.trainer_owned_names), "Kubeflow Trainer's for its TrainJob")
    for document in documents:
        name = metadata_name(document)
        if not name:
            continue
        for job in _candidate_jobs(name):
            if not _beside(document, job, jobs, context):
                continue
            owned = operator_owned(job, name)
            if owned is None or (name == job and document.kind != "Service"):
                continue
            message = f"name {name} is mpi-operator's for MPIJob {job}: the operator creates {owned.what}"
            if document.kind in owned.kinds:
                message += (f"; with this {document.kind} in its place the job never starts (event ErrResourceExists: "
                            "\"already exists and is not managed by MPIJob\")")
            else:
                message += f"; rename this {document.kind or 'object'}"
            findings.append(finding(document, path_of(("metadata", "name")), message, RULE_NAMES))
            break
    return findings
