"""The parts of a hand-written MPIJob's pods beyond its MPI containers' command and resources: who they run as, the
privileges they ask for, their labels and annotations, and what else a job profile has no field for (said, never
dropped without a word)."""

from __future__ import annotations

from mpigen.adopt.mpijob_input import HandWrittenJob, listed, mapping
from mpigen.adopt.profile_text import Field
from mpigen.model.cluster import NetworkProvider
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.reserved import reserved_key_domain

POD_FIELDS_MPIGEN_DERIVES = ("nodeSelector", "affinity", "tolerations", "schedulerName", "priorityClassName")


def security_fields(written: HandWrittenJob, notes: list[str]) -> list[Field]:
    """runAsUser, as the workers run; a note for each privilege a profile does not grant."""
    fields: list[Field] = []
    user = None
    for role, pod, container in ((mpi_operator.WORKER, written.worker_pod, written.worker),
                                 (mpi_operator.LAUNCHER, written.launcher_pod, written.launcher)):
        context = {**mapping(pod, "securityContext"), **mapping(container.data, "securityContext")}
        if role == mpi_operator.WORKER:
            user = context.get("runAsUser")
            if isinstance(user, int) and not isinstance(user, bool):
                fields.append(Field("runAsUser", user, container.field("securityContext", "runAsUser")))
        elif context.get("runAsUser") != user:
            notes.append(f"{container.field('securityContext', 'runAsUser')} ({context.get('runAsUser')}) is not the "
                         f"workers' ({user}): the profile's runAsUser is both's")
        if context.get("privileged"):
            notes.append(f"{container.field('securityContext', 'privileged')}: privileged is not granted: mpigen gives "
                         "RDMA workers IPC_LOCK alone; if the job truly needs it, write `privileged: {reason: \"...\"}`")
        added = listed(context, "capabilities", "add")
        if added:
            notes.append(f"{container.field('securityContext', 'capabilities', 'add')}: {', '.join(map(str, added))} "
                         "not granted: mpigen adds IPC_LOCK to workers with RDMA rails, nothing else")
    return fields


def pod_notes(written: HandWrittenJob, notes: list[str]) -> None:
    """A note for each part of the pods a profile has no field for."""
    for role, pod, container in ((mpi_operator.LAUNCHER, written.launcher_pod, written.launcher),
                                 (mpi_operator.WORKER, written.worker_pod, written.worker)):
        at = f".spec.mpiReplicaSpecs.{role}.template.spec"
        if container.data.get("envFrom"):
            notes.append(f"{container.field('envFrom')} not kept: a profile names each variable in `env` (a Secret's "
                         "with secretKeyRef)")
        if container.others:
            notes.append(f"{at}.containers: {', '.join(container.others)} (a sidecar) not kept: a profile holds the "
                         "MPI container only")
        if pod.get("initContainers"):
            shown = ", ".join(str(c.get("name", "?")) for c in pod["initContainers"] if isinstance(c, dict))
            notes.append(f"{at}.initContainers: {shown} not kept: a profile has no init containers")
        host = NetworkProvider.HOST_NETWORK.value
        for key, what in (("hostNetwork", f"the cluster's network provider `{host}` runs jobs on the node's network"),
                          ("hostIPC", "no profile field shares the node's IPC"),
                          ("hostPID", "no profile field shares the node's processes")):
            if pod.get(key):
                notes.append(f"{at}.{key}: true not kept: {what}")
        for key in POD_FIELDS_MPIGEN_DERIVES:
            if pod.get(key):
                notes.append(f"{at}.{key} not kept: mpigen derives it from the pool and the cluster's scheduling")


def metadata_fields(written: HandWrittenJob, notes: list[str]) -> list[Field]:
    """The MPIJob's labels and annotations as `objectLabels` and `objectAnnotations`, the worker pods' as `labels`
    and `annotations` (which mpigen puts on the job object and every pod); keys of the domains Kubernetes, the
    controllers or the network read as instructions are not kept, and said."""
    fields: list[Field] = []
    worker_template = mapping(written.spec, mpi_operator.SpecField.MPI_REPLICA_SPECS, mpi_operator.WORKER, "template")
    for key, where, given in (
            ("objectLabels", ".metadata.labels", mapping(written.obj, "metadata", "labels")),
            ("objectAnnotations", ".metadata.annotations", mapping(written.obj, "metadata", "annotations")),
            ("labels", f".spec.mpiReplicaSpecs.{mpi_operator.WORKER}.template.metadata.labels",
             mapping(worker_template, "metadata", "labels")),
            ("annotations", f".spec.mpiReplicaSpecs.{mpi_operator.WORKER}.template.metadata.annotations",
             mapping(worker_template, "metadata", "annotations"))):
        entries = [Field(str(name), str(value), f"{where}") for name, value in mapping(given).items()
                   if reserved_key_domain(str(name)) is None]
        reserved = sorted(str(name) for name in mapping(given) if reserved_key_domain(str(name)) is not None)
        if reserved:
            notes.append(f"{where}: {', '.join(reserved)} not kept: keys of domains that Kubernetes, the controllers "
                         "or the network read as instructions (mpigen writes its own)")
        if entries:
            fields.append(Field(key, tuple(entries)))
    return fields

