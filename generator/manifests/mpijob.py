"""mpi-operator's MPIJob (`mpigen.vocabulary.mpi_operator`), built like mpi-operator's own controller builds its pods."""

from __future__ import annotations

from typing import Any

from mpigen.manifests.devices import container_claims, pod_claims
from mpigen.manifests.hostfile import configmap_keys
from mpigen.manifests.mpirun import launcher_command, literal
from mpigen.manifests.node_placement import launcher_placement, worker_placement
from mpigen.manifests.scheduling import (
    job_labels,
    kai_job_annotations,
    launcher_annotations,
    pod_priority_class,
    pod_scheduler,
    scheduling_policy,
    worker_annotations,
)
from mpigen.model import (
    Backend,
    EnvVar,
    Job,
    Resources,
    RunRef,
    WorkerSpread,
    defaults,
    names,
    stated,
)
from mpigen.objects import chartfiles
from mpigen.objects.labels import ChartRef, metadata
from mpigen.objects.manifest import Variable
from mpigen.providers import PROVIDERS, WORKER_OF_LABEL, PodNetwork, pod_network
from mpigen.vocabulary import gitops, mpi_operator
from mpigen.vocabulary import scheduling as scheduling_vocabulary
from mpigen.vocabulary.gpu_feature_discovery import GPU_CLIQUE_LABEL
from mpigen.vocabulary.mpi_operator import RunPolicyField, SpecField

LAUNCHER_CONTAINER = "launcher"
WORKER_CONTAINER = "worker"
HOSTFILE_VOLUME = "mpigen-hostfile"
SHM_VOLUME = "dshm"
NVIDIA_VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
SSHD = ("/usr/sbin/sshd", "-De")


def _env(job: Job, run: str) -> list[dict[str, Any]]:
    return [{"name": var.name, "valueFrom": {"secretKeyRef": {"name": var.secret.name, "key": var.secret.key}}}
            if var.secret is not None else {"name": var.name, "value": literal(env_value(job, var, run))}
            for var in job.env]


def env_value(job: Job, var: EnvVar, run: str) -> str:
    """A variable's value in the run `run` (the job object's name): a name of the run is made from it here, since
    the profile cannot know the digest in it."""
    if var.run_ref is RunRef.FIRST_WORKER:
        return names.worker_host(run, job.namespace, 0, job.backend.value)
    if var.run_ref is RunRef.NAME:
        return run
    return var.value


def _cpu_memory(resources: Resources) -> dict[str, str]:
    return {k: v for k, v in (("cpu", resources.cpu), ("memory", resources.memory)) if v is not None}


def _volume_mounts(job: Job) -> list[dict[str, Any]]:
    mounts = []
    for volume in job.volumes:
        mount: dict[str, Any] = {"name": volume.name, "mountPath": volume.mount_path}
        if volume.read_only:
            mount["readOnly"] = True
        mounts.append(mount)
    return mounts


def _claims(job: Job) -> list[dict[str, Any]]:
    volumes = []
    for volume in job.volumes:
        if volume.host_path is not None:  # asked for in the profile; `Directory`: never create folders on the node
            volumes.append({"name": volume.name, "hostPath": {"path": volume.host_path, "type": "Directory"}})
            continue
        claim: dict[str, Any] = {"claimName": volume.claim}
        if volume.read_only:
            claim["readOnly"] = True
        volumes.append({"name": volume.name, "persistentVolumeClaim": claim})
    return volumes


def _security_context(job: Job, rdma: bool, worker: bool) -> dict[str, Any]:
    """What the container needs and no more: IPC_LOCK to pin memory for RDMA; privileged only where the
    profile asks for it, with a reason (then it holds every capability, IPC_LOCK included)."""
    context: dict[str, Any] = {}
    if job.run_as_user is not None:
        context["runAsUser"] = job.run_as_user
    if worker and job.privileged_reason is not None:
        context["privileged"] = True
        return context
    if not job.runs_as_root:
        # sshd and the ranks run as this user: no capability, setuid program or unconfined syscall is of use to
        # them, so the pod meets Pod Security `restricted` unless RDMA's IPC_LOCK is needed.
        context["runAsNonRoot"] = True
        context["allowPrivilegeEscalation"] = False
        context["capabilities"] = {"drop": ["ALL"], **({"add": ["IPC_LOCK"]} if rdma else {})}
        context["seccompProfile"] = {"type": "RuntimeDefault"}
    elif rdma:
        context["capabilities"] = {"add": ["IPC_LOCK"]}
    return context


def _image(job: Job) -> Variable:
    return Variable(chartfiles.IMAGE, job.image)


def _pull_policy(job: Job) -> dict[str, str]:
    """The profile's `imagePullPolicy`; none: Kubernetes' own default for the image's tag."""
    return {"imagePullPolicy": job.image_pull_policy} if job.image_pull_policy is not None else {}


def build_launcher_container(job: Job, mpijob: str, workers: Variable) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": LAUNCHER_CONTAINER,
        "image": _image(job),
        **_pull_policy(job),
        "command": launcher_command(job, workers),
    }
    if job.env:
        container["env"] = _env(job, mpijob)
    resources = _cpu_memory(job.launcher_resources)
    if resources:
        container["resources"] = {"requests": resources, "limits": dict(resources)}
    security = _security_context(job, rdma=False, worker=False)
    if security:
        container["securityContext"] = security
    container["volumeMounts"] = [
        {"name": HOSTFILE_VOLUME, "mountPath": names.HOSTFILE_DIR, "readOnly": True},
        *_volume_mounts(job),
    ]
    return container


def build_worker_container(job: Job, mpijob: str, network: PodNetwork) -> dict[str, Any]:
    container: dict[str, Any] = {"name": WORKER_CONTAINER, "image": _image(job), **_pull_policy(job)}
    if job.worker_command is not None:
        container["command"] = [literal(part) for part in job.worker_command]
    elif job.ssh_port is not None or job.backend is not Backend.MPIJOB:
        # mpi-operator runs `/usr/sbin/sshd -De` in a worker container that has no command (its newWorker);
        # Volcano and Trainer run the image's own entrypoint, so mpigen says it (as Trainer's runtime does).
        port = ["-p", str(job.ssh_port)] if job.ssh_port is not None else []
        container["command"] = [*SSHD, *port]
    if job.readiness_port is not None:
        # Ready once sshd listens, not once the container started: `WaitForWorkersReady` (and a launcher's
        # dependsOn) then means what it says, and Hydra (Intel MPI, MPICH) does not retry ssh. mpi-operator's own
        # Intel MPI and MPICH examples probe the sshd port so (2222, with their own worker command); Trainer's MPI
        # runtime too.
        container["readinessProbe"] = {"tcpSocket": {"port": job.readiness_port},
                                       "initialDelaySeconds": defaults.READINESS_PROBE_DELAY_SECONDS}
    if job.env:
        container["env"] = _env(job, mpijob)
    limits: dict[str, Any] = dict(_cpu_memory(job.resources))
    requests = dict(limits)
    if job.uses_gpus and job.devices is None:  # under DRA the claim holds them: asking twice allocates twice
        limits[stated(job.pool.hardware.gpu).resource] = job.gpus_per_worker
    for resource, count in network.limits:
        limits[resource] = count
    resources: dict[str, Any] = {}
    if requests:
        resources = {"requests": requests, "limits": limits}
    elif limits:
        resources = {"limits": limits}
    claims = container_claims(job)
    if claims:
        resources["claims"] = claims
    if resources:
        container["resources"] = resources
    security = _security_context(job, rdma=bool(job.rails) and PROVIDERS[job.cluster.network.provider].rdma, worker=True)
    if security:
        container["securityContext"] = security
    container["volumeMounts"] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}, *_volume_mounts(job)]
    return container


def build_launcher_pod_spec(job: Job, mpijob: str, workers: Variable) -> dict[str, Any]:
    return {
        "automountServiceAccountToken": False,
        **pod_scheduler(job),
        **_priority(job),
        **launcher_placement(job),
        "containers": [build_launcher_container(job, mpijob, workers)],
        "volumes": [
            {"name": HOSTFILE_VOLUME, "configMap": {
                "name": names.hostfile_configmap_name(mpijob),
                "items": [{"key": key, "path": key} for key in configmap_keys(job)],
            }},
            *_claims(job),
        ],
    }


def hide_gpus_from_launcher(job: Job, launcher_spec: dict[str, Any]) -> dict[str, Any]:
    """The launcher asks for no GPU, but a CUDA image says NVIDIA_VISIBLE_DEVICES=all, which would show it every
    GPU of its node: mpi-operator empties it on an MPIJob's launcher (newLauncherPodTemplate); for the backends whose
    controller does not, mpigen does. On the launcher's container only: mpirun exports the job's own variables to
    the ranks."""
    if job.uses_gpus:
        container = launcher_spec["containers"][0]
        container["env"] = [*container.get("env", []), {"name": NVIDIA_VISIBLE_DEVICES, "value": ""}]
    return launcher_spec


def build_worker_pod_template(job: Job, mpijob: str) -> dict[str, Any]:
    network = pod_network(job, mpijob)
    spec: dict[str, Any] = {"automountServiceAccountToken": False, **pod_scheduler(job), **_priority(job)}
    if network.host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    affinity = worker_affinity(job, mpijob, network)
    if affinity:
        spec["affinity"] = affinity
    spec.update(worker_placement(job))
    spec["containers"] = [build_worker_container(job, mpijob, network)]
    spec["volumes"] = [
        {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": job.shm_size}},
        *_claims(job),
    ]
    resource_claims = pod_claims(job, mpijob)
    if resource_claims:
        spec["resourceClaims"] = resource_claims
    template: dict[str, Any] = {}
    labels = {**dict(job.labels), **({WORKER_OF_LABEL: mpijob} if affinity else {})}
    annotations = {**dict(job.annotations), **dict(network.annotations), **privileged_annotation(job),
                   **host_path_annotation(job), **worker_annotations(job)}
    template_metadata = pod_metadata(labels, annotations)
    if template_metadata:
        template["metadata"] = template_metadata
    template["spec"] = spec
    return template


def worker_affinity(job: Job, mpijob: str, network: PodNetwork) -> dict[str, Any]:
    """How the workers of one run share nodes, through the label `WORKER_OF_LABEL` they carry then: never two on a
    node (host networking, where a second would find sshd's port taken, or `workerSpread: one-per-node`), or
    preferably as few nodes as they fit (`pack`)."""
    term = {"labelSelector": {"matchLabels": {WORKER_OF_LABEL: mpijob}},
            "topologyKey": scheduling_vocabulary.HOSTNAME_LABEL}
    affinity: dict[str, Any] = {}
    if network.host_network or job.worker_spread is WorkerSpread.ONE_PER_NODE:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    elif job.worker_spread is WorkerSpread.PACK:
        affinity["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": term}]}
    clique = nvlink_clique_affinity(job, mpijob)
    if clique:
        affinity.setdefault("podAffinity", {}).update(clique)
    return affinity


def nvlink_clique_affinity(job: Job, mpijob: str) -> dict[str, Any]:
    """Workers that join a ComputeDomain in one NVLink domain (GFD's `nvidia.com/gpu.clique`): NVLink reaches no
    further, so ranks in two cliques talk over the network. Required where the most workers the chart takes
    (`workers`' maximum) fit one clique, preferred where they may not; none where the job's Kueue topology places
    them already."""
    if job.devices is None or not job.devices.channel or job.scheduling.topology_label is not None:
        return {}
    term = {"labelSelector": {"matchLabels": {WORKER_OF_LABEL: mpijob}}, "topologyKey": GPU_CLIQUE_LABEL}
    gpu = stated(job.pool.hardware.gpu)
    clique_nodes = stated(gpu.nvlink_domain_gpus) // gpu.count
    if -(-job.max_workers // job.workers_per_node) <= clique_nodes:
        return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    return {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]}


def pod_metadata(labels: dict[str, str], annotations: dict[str, str]) -> dict[str, Any]:
    """A pod template's `metadata`: its labels and annotations where it has any."""
    return {key: value for key, value in (("labels", labels), ("annotations", annotations)) if value}


def launcher_template_metadata(job: Job) -> dict[str, Any]:
    """The launcher pod template's `metadata`, where it has any: the profile's labels and annotations, and the
    reasons for the host folders it mounts."""
    metadata = pod_metadata(dict(job.labels), {**dict(job.annotations), **host_path_annotation(job),
                                               **launcher_annotations(job)})
    return {"metadata": metadata} if metadata else {}


def job_metadata(job: Job, chart: ChartRef, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """The job object's metadata: the chart's labels and `labels` (mpigen's own), then the profile's labels and
    annotations, of the job object and its pods and of the job object only (validate refuses keys of mpigen's and
    the controllers' domains, so none overrides theirs)."""
    meta = metadata(name, chart, job.namespace,
                    annotations={**dict(job.annotations), **dict(job.object_annotations),
                                 gitops.ARGOCD_SYNC_OPTIONS: gitops.SKIP_DRY_RUN_ON_MISSING_RESOURCE,
                                 **privileged_annotation(job), **host_path_annotation(job),
                                 **kai_job_annotations(job)})
    meta["labels"] = {**meta["labels"], **dict(job.labels), **dict(job.object_labels), **labels}
    return meta


def _priority(job: Job) -> dict[str, str]:
    priority = pod_priority_class(job)
    return {"priorityClassName": priority} if priority is not None else {}


def privileged_annotation(job: Job) -> dict[str, str]:
    """The profile's reason for privileged workers, where reviewers of the chart and of the pods see it."""
    return {chartfiles.PRIVILEGED_REASON: job.privileged_reason} if job.privileged_reason is not None else {}


def host_path_reasons(job: Job) -> dict[str, str]:
    """`hostPath volume <name> (<path>)`, as Pod Security names the volume, -> the profile's reason for it."""
    return {f"hostPath volume {volume.name} ({volume.host_path})": volume.host_path_reason for volume in job.volumes
            if volume.host_path is not None and volume.host_path_reason is not None}


def host_path_annotation(job: Job) -> dict[str, str]:
    """The profile's reasons for host folders, where reviewers of the chart and of the pods see them: every
    pod that mounts them (launcher and workers) and the MPIJob."""
    reasons = [f"{volume}: {reason}" for volume, reason in host_path_reasons(job).items()]
    return {chartfiles.HOST_PATH_REASON: "; ".join(reasons)} if reasons else {}


def build_run_policy(job: Job, workers: Variable) -> dict[str, Any]:
    """With the `schedulingPolicy` mpi-operator makes the job's PodGroup from (but under Kueue)."""
    policy = job.run_policy
    out: dict[str, Any] = {RunPolicyField.CLEAN_POD_POLICY: policy.clean_pod_policy}
    for key, value in ((RunPolicyField.BACKOFF_LIMIT, policy.backoff_limit),
                       (RunPolicyField.ACTIVE_DEADLINE_SECONDS, policy.active_deadline_seconds),
                       (RunPolicyField.TTL_SECONDS_AFTER_FINISHED, policy.ttl_seconds_after_finished)):
        if value is not None:
            out[key] = value
    out[RunPolicyField.SUSPEND] = Variable(chartfiles.SUSPEND, policy.suspend)
    gang = scheduling_policy(job, workers)
    if gang is not None:
        out[RunPolicyField.SCHEDULING_POLICY] = gang
    return out


def build_mpijob_spec(job: Job, mpijob: str, workers: Variable) -> dict[str, Any]:
    """The spec of MPIJob `mpijob` (the name only reaches the hostfile ConfigMap it mounts), with the values
    a chart value sets (the workers, and what follows them; the image; suspend) marked as Variables."""
    spec: dict[str, Any] = {
        SpecField.SLOTS_PER_WORKER: job.slots_per_worker,
        SpecField.MPI_IMPLEMENTATION: job.mpi_implementation.value,
        SpecField.LAUNCHER_CREATION_POLICY: job.launcher_creation_policy,
        SpecField.RUN_POLICY: build_run_policy(job, workers),
    }
    if job.ssh_auth_mount_path:
        spec[SpecField.SSH_AUTH_MOUNT_PATH] = job.ssh_auth_mount_path
    launcher, worker = mpi_operator.LAUNCHER, mpi_operator.WORKER
    spec[SpecField.MPI_REPLICA_SPECS] = {
        launcher: {"replicas": 1, "restartPolicy": mpi_operator.DEFAULT_RESTART_POLICY[launcher],
                   "template": {**launcher_template_metadata(job),
                                "spec": build_launcher_pod_spec(job, mpijob, workers)}},
        worker: {"replicas": workers, "restartPolicy": mpi_operator.DEFAULT_RESTART_POLICY[worker],
                 "template": build_worker_pod_template(job, mpijob)},
    }
    return spec


def workers_variable(job: Job, worker_count: int | None = None) -> Variable:
    """The `workers` value: the profile's worker count, or `worker_count`."""
    return Variable(chartfiles.WORKERS, job.worker_count if worker_count is None else worker_count)


def mpijob_object(job: Job, chart: ChartRef, mpijob: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The MPIJob named `mpijob` (see `manifests.run_name.named_spec`) around its `spec`, built under that name."""
    return {
        "apiVersion": mpi_operator.API_VERSION,
        "kind": mpi_operator.KIND,
        "metadata": job_metadata(job, chart, mpijob, job_labels(job)),
        "spec": spec,
    }
