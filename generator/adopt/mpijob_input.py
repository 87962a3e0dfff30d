"""One hand-written MPIJob, read for adoption: its launcher and worker pod specs and, in each, the container that is
the MPI process. What cannot be adopted is refused here, in one line naming the file (and its line, where the
file's text says it), the object, what is wrong and what to do; nothing is written then.

mpi-operator's v1 and v1alpha* MPIJobs (training-operator, mpi-operator v0.2) start the ranks through `kubectl
exec`, not ssh: their workers run no sshd, so a v2beta1 MPIJob made from them would not start; they are refused
with the way to move them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from mpigen.adopt.mpirun import is_mpirun
from mpigen.adopt.result import AdoptionError
from mpigen.model import names
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.readback.lines import place_findings
from mpigen.support.diagnostics import one_line
from mpigen.validate.secrets import masked
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.kubernetes import DNS1035_MAX, dns1035_label_problems, json_path

OLDER_API_VERSIONS = frozenset({f"{mpi_operator.GROUP}/v1", f"{mpi_operator.GROUP}/v1alpha1",
                                f"{mpi_operator.GROUP}/v1alpha2"})
REPLICA_SPECS = ("spec", mpi_operator.SpecField.MPI_REPLICA_SPECS)


@dataclass(frozen=True)
class Container:
    """The container of a replica that is the MPI process: its fields, and where it stands in the MPIJob."""

    path: tuple[str | int, ...]
    data: dict[str, Any]
    others: tuple[str, ...] = ()
    """The names of the replica's other containers (sidecars), which a profile cannot hold."""

    def field(self, *keys: str | int) -> str:
        """The field's path in the MPIJob, as kubectl prints it: what a profile comment names."""
        return json_path((*self.path, *keys), quote_keys=True)

    @property
    def command(self) -> list[str]:
        """What the container runs: `command` then `args` (the image's entrypoint where only `args` is given)."""
        return [*_strings(self.data.get("command")), *_strings(self.data.get("args"))]


@dataclass(frozen=True)
class HandWrittenJob:
    """An MPIJob as its author wrote it, its MPI containers found."""

    source: str
    obj: dict[str, Any]
    name: str
    namespace: str | None
    spec: dict[str, Any]
    launcher_pod: dict[str, Any]
    launcher: Container
    worker_pod: dict[str, Any]
    worker: Container
    workers: int
    document: RenderedObject

    @property
    def label(self) -> str:
        return f"{mpi_operator.KIND}/{self.name}"


def read_mpijob(document: RenderedObject) -> HandWrittenJob:
    """The MPIJob of `document`, or AdoptionError saying why it cannot be adopted."""
    obj = document.obj
    refuse = _Refusal(document)
    if document.api_version in OLDER_API_VERSIONS:
        refuse(("apiVersion",), f"apiVersion {document.api_version} is mpi-operator's v1 API, whose launcher starts "
               "the ranks through `kubectl exec` (its workers run no sshd)",
               f"move it to {mpi_operator.API_VERSION} (the workers' image must run sshd: mpi-operator's v2 examples "
               "show how), then import it again")
    if document.api_version != mpi_operator.API_VERSION:
        refuse(("apiVersion",), f"unknown MPIJob apiVersion '{document.api_version}'",
               f"mpigen adopts {mpi_operator.API_VERSION} MPIJobs (`kubectl get mpijobs.{mpi_operator.GROUP} -o yaml`)")
    name = document.name
    problems = dns1035_label_problems(name) if name else ["it has none"]
    if not problems:
        last = names.last_worker_name_problem(name, _worker_replicas(obj), hashed=True)
        problems = [last] if last else []
    if problems:
        room = DNS1035_MAX - len(names.worker_name(names.sized_mpijob_name("", True), _worker_replicas(obj) - 1))
        refuse(("metadata", "name"), f"name '{name}' cannot name a job profile: {problems[0]}",
               f"rename the MPIJob in the file to a name of at most {room} lower-case letters, digits and "
               "'-', starting with a letter (mpigen names the MPIJob `<name>-<hash>` and its pods "
               "`<name>-<hash>-worker-<i>`)")
    spec = obj.get("spec")
    replicas = spec.get(mpi_operator.SpecField.MPI_REPLICA_SPECS) if isinstance(spec, dict) else None
    if not isinstance(replicas, dict) or not isinstance(replicas.get(mpi_operator.LAUNCHER), dict):
        refuse(REPLICA_SPECS, f"no {mpi_operator.LAUNCHER} in spec.mpiReplicaSpecs: nothing says what the job runs",
               f"add the {mpi_operator.LAUNCHER} replica with its mpirun command, or import the file the job was "
               "applied from")
    if not isinstance(replicas.get(mpi_operator.WORKER), dict):
        refuse(REPLICA_SPECS, f"no {mpi_operator.WORKER} in spec.mpiReplicaSpecs: an MPIJob without workers never runs",
               f"add the {mpi_operator.WORKER} replica (mpi-operator refuses the job without it)")
    workers = replicas[mpi_operator.WORKER].get("replicas")
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        refuse((*REPLICA_SPECS, mpi_operator.WORKER), "the Worker has no replicas (mpi-operator refuses the job)",
               "write the number of workers as `replicas:`, and import it again")
    assert isinstance(spec, dict)
    launcher_pod = _pod(replicas, mpi_operator.LAUNCHER, refuse)
    worker_pod = _pod(replicas, mpi_operator.WORKER, refuse)
    launcher = _mpi_container(launcher_pod, mpi_operator.LAUNCHER, refuse, lambda c: is_mpirun(Container((), c).command))
    image = launcher.data.get("image")
    worker = _mpi_container(worker_pod, mpi_operator.WORKER, refuse, lambda c: c.get("image") == image)
    for container in (launcher, worker):
        if not isinstance(container.data.get("image"), str) or not container.data["image"].strip():
            refuse((*container.path, "image"), "the MPI container has no image",
                   "name the image of the launcher and workers (`image:`) and import it again")
    if worker.data["image"] != launcher.data["image"]:
        refuse((*worker.path, "image"), f"the workers' image '{worker.data['image']}' is not the launcher's "
               f"'{launcher.data['image']}', and a job profile has one image for both",
               "use one image with the MPI, sshd and the program for both, and import it again")
    namespace = document.namespace or None
    return HandWrittenJob(document.source, obj, name, namespace, spec, launcher_pod, launcher, worker_pod, worker,
                          workers, document)


class _Refusal:
    """Raises AdoptionError at a field of the document: `file:line:col: MPIJob/name: what; how to fix it`."""

    def __init__(self, document: RenderedObject) -> None:
        self.document = document

    def __call__(self, path: tuple[str | int, ...], what: str, fix: str) -> NoReturn:
        raise AdoptionError(refusal(self.document, path, what, fix))


def refusal(document: RenderedObject, path: tuple[str | int, ...], what: str, fix: str) -> str:
    """The line of a refusal, at the line and column of `path` in the file where its text says it."""
    finding = Finding(document.source, document.label, json_path(path, quote_keys=True), what, "adopt")
    place = place_findings([finding], [document.source]).get(finding)
    where = document.source + (f":{place[0]}" + (f":{place[1]}" if place[1] else "") if place else "")
    return one_line(masked(f"{where}: {document.label}: {what}; {fix}"))


def _worker_replicas(obj: dict[str, Any]) -> int:
    replicas = mapping(obj, "spec", mpi_operator.SpecField.MPI_REPLICA_SPECS, mpi_operator.WORKER).get("replicas")
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas > 0 else 1


def _pod(replicas: dict[str, Any], role: str, refuse: _Refusal) -> dict[str, Any]:
    template = replicas[role].get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod, dict) or not isinstance(pod.get("containers"), list) or not pod["containers"]:
        refuse((*REPLICA_SPECS, role, "template"), f"the {role} has no containers",
               f"give the {role} its pod template with the MPI container, and import it again")
    return pod


def _mpi_container(pod: dict[str, Any], role: str, refuse: _Refusal, is_mpi: Any) -> Container:
    """The replica's one container, or the one of several that is the MPI process (the launcher's runs mpirun; a
    worker's has the launcher's image): the others are sidecars. Two candidates, or none among several, are refused."""
    containers = [c if isinstance(c, dict) else {} for c in pod["containers"]]
    path: tuple[str | int, ...] = (*REPLICA_SPECS, role, "template", "spec", "containers")
    if len(containers) == 1:
        return Container((*path, 0), containers[0])
    candidates = [index for index, container in enumerate(containers) if is_mpi(container)]
    shown = ", ".join(str(c.get("name", "?")) for c in containers)
    if len(candidates) != 1:
        told = ("runs mpirun", "run mpirun") if role == mpi_operator.LAUNCHER else (
            "has the launcher's image", "have the launcher's image")
        which = f"none of them {told[0]}" if not candidates else f"{len(candidates)} of them {told[1]}"
        refuse(path, f"the {role} has {len(containers)} containers ({shown}) and {which}: mpigen cannot tell which "
               "is the MPI process",
               f"keep only the MPI container in the {role} (a profile holds one), and import it again")
    index = candidates[0]
    others = tuple(str(c.get("name", "?")) for i, c in enumerate(containers) if i != index)
    return Container((*path, index), containers[index], others)


def mapping(value: Any, *keys: str) -> dict[str, Any]:
    """The mapping at `keys` under `value`, or {} where any step is not one: an export may hold any shape."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def listed(value: Any, *keys: str) -> list[Any]:
    """The list at `keys` under `value`, or []."""
    inner = mapping(value, *keys[:-1]).get(keys[-1]) if keys else value
    return inner if isinstance(inner, list) else []


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def secret_in_command(written: HandWrittenJob, name: str) -> AdoptionError:
    return AdoptionError(refusal(written.document, (*written.launcher.path, "command"),
                                 f"the launcher's command writes out the value of {name}, which is named like a "
                                 "secret (mpigen copies no secret into a profile)",
                                 "give the job the secret from a Secret (`env` with valueFrom.secretKeyRef), and import "
                                 "it again"))


def no_program(written: HandWrittenJob) -> AdoptionError:
    return AdoptionError(refusal(written.document, (*written.launcher.path, "command"),
                                 "the launcher's mpirun names no program to run",
                                 "write the program after mpirun's flags, and import it again"))
