"""A Job profile as the model's Job on its resolved cluster: its shape, placement, environment (derived
variables first), volumes, run policy and scheduling, and where the values its chart explains come from."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import (
    Backend,
    Cluster,
    EnvVar,
    Job,
    MpiImplementation,
    Naming,
    NodePool,
    Origin,
    RailAttachment,
    Resources,
    RunPolicy,
    RunRef,
    Scheduler,
    SecretKey,
    Volume,
    WorkerSpread,
    defaults,
    derive,
    names,
    stated,
)
from mpigen.model.devices import ClaimedRail, SplitProblem, WorkerDevices, worker_devices
from mpigen.model.hostfile import HostfileFormat
from mpigen.model.job import QUEUE_MAX_WORKERS
from mpigen.model.placement import resolve_placement
from mpigen.providers import PROVIDERS
from mpigen.resolve.hardware import label_pairs
from mpigen.resolve.nccl import derived_env
from mpigen.resolve.scheduling import admitted_worker_limit, job_scheduling
from mpigen.vocabulary import mpi_operator

DEFAULT_LAUNCHER_RESOURCES = Resources(cpu=defaults.LAUNCHER_CPU, memory=defaults.LAUNCHER_MEMORY)


def resolved_job(document: ProfileFile, data: dict[str, Any], clusters: dict[str, Cluster],
                 hardware_data: dict[str, dict[str, Any]]) -> Job:
    cluster = clusters[data["cluster"]]
    pool = cluster.pool(data["pool"])
    rails = _rail_attachments(data, cluster, pool)
    shape = derive.layout(data, hardware_data[pool.hardware.name], pool.nodes, one_per_node=_one_per_node(cluster, rails))
    implementation = MpiImplementation(data.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION))
    openmpi = implementation is MpiImplementation.OPENMPI
    openmpi_version = int(data.get("openMPIVersion", defaults.OPENMPI_VERSION)) if openmpi else None
    naming = Naming(data.get("naming", defaults.JOB_NAMING))
    backend = Backend(data.get("backend", cluster.job_backend.value))  # derive.backend_of, on the resolved cluster
    name_limit = names.max_workers_for_name(data["name"], hashed=naming is Naming.CONTENT_HASH, backend=backend.value)
    namespace = data.get("namespace", cluster.namespaces[0])
    placement = resolve_placement(data, hardware_data[pool.hardware.name], implementation, shape.gpus_per_worker,
                                  shape.slots_per_worker, cluster.cpu_manager_policy)
    size_limit = HostfileFormat.of(namespace, backend, shape.slots_per_worker, implementation, placement).max_workers(
        names.sized_mpijob_name(data["name"], naming is Naming.CONTENT_HASH), min(shape.capacity, name_limit))
    gpu_shm = f"{shape.gpus_per_worker}Gi" if shape.gpus_per_worker > 0 else "1Gi"
    scheduling = job_scheduling(data, cluster, namespace, hardware_data[pool.hardware.name], shape.worker_count,
                                shape.workers_per_node)
    queue_limit = admitted_worker_limit(data, cluster, pool, rails, shape.gpus_per_worker, scheduling,
                                        min(shape.capacity, name_limit, size_limit))
    return Job(
        name=data["name"],
        naming=naming,
        source=document.source,
        cluster=cluster,
        pool=pool,
        namespace=namespace,
        image=data["image"],
        worker_count=shape.worker_count,
        max_workers=min(shape.capacity, name_limit, size_limit) if queue_limit is None else queue_limit[0],
        gpus_per_worker=shape.gpus_per_worker,
        slots_per_worker=shape.slots_per_worker,
        mpi_implementation=implementation,
        openmpi_version=openmpi_version,
        openmpi_ucx=_openmpi_ucx(data) if openmpi else None,
        placement=placement,
        program=tuple(data.get("program", ())),
        mpirun_args=tuple(data.get("mpirunArgs", ())),
        launcher_command=tuple(data["launcherCommand"]) if "launcherCommand" in data else None,
        worker_command=tuple(data["workerCommand"]) if "workerCommand" in data else None,
        rails=rails,
        env=_env(document, data, rails, shape, cluster, pool, implementation, openmpi_version, backend),
        volumes=tuple(_volume(v) for v in data.get("volumes", [])),
        shm_size=data.get("shmSize", gpu_shm),
        resources=_resources(data.get("resources")),
        launcher_resources=_resources(data.get("launcher", {}).get("resources")) if "launcher" in data
        and "resources" in data["launcher"] else DEFAULT_LAUNCHER_RESOURCES,
        run_as_user=data.get("runAsUser"),
        privileged_reason=data["privileged"]["reason"] if "privileged" in data else None,
        ssh_auth_mount_path=data.get("sshAuthMountPath"),
        launcher_creation_policy=data.get("launcherCreationPolicy", defaults.LAUNCHER_CREATION_POLICY),
        run_policy=_run_policy(data.get("runPolicy", {}), cluster),
        origins=_origins(document, data, cluster, pool, shape, name_limit, size_limit, queue_limit),
        scheduling=scheduling,
        backend=backend,
        workers_per_node=shape.workers_per_node,
        estimated_hours=data.get("estimatedHours"),
        worker_spread=WorkerSpread(data["workerSpread"]) if "workerSpread" in data else None,
        image_pull_policy=data.get("imagePullPolicy"),
        labels=label_pairs(data.get("labels")),
        annotations=label_pairs(data.get("annotations")),
        object_labels=label_pairs(data.get("objectLabels")),
        object_annotations=label_pairs(data.get("objectAnnotations")),
        ssh_port=ssh_port(data, cluster),
        ssh_port_stated="sshPort" in data,
        devices=_devices(cluster, pool, rails, shape.gpus_per_worker),
    )


def _devices(cluster: Cluster, pool: NodePool, rails: tuple[RailAttachment, ...], gpus: int) -> WorkerDevices | None:
    """What each worker claims through DRA, on a cluster that allocates so (validate refused a split the hardware
    cannot give)."""
    if cluster.dra is None:
        return None
    claimed = [ClaimedRail(r.rail.name, r.nic.name, r.rail.host_interface or r.nic.pf_name) for r in rails]
    found = worker_devices(cluster.dra, pool.hardware, claimed, gpus, PROVIDERS[cluster.network.provider].dra_devices)
    if isinstance(found, SplitProblem):
        raise AssertionError(f"validate let through a GPU-NIC split no claim can give: {found.message}")
    return found


def ssh_port(data: dict[str, Any], cluster: Cluster) -> int | None:
    """sshd's port in the workers where it is not 22: the profile's `sshPort`, else the nodes' network's."""
    port = data.get("sshPort", PROVIDERS[cluster.network.provider].worker_ssh_port(cluster.network))
    return None if port == mpi_operator.SSHD_PORT else port


def _env_var(name: str, value: str | dict[str, Any], origin: str) -> EnvVar:
    """A variable the profile sets: a literal, a key of a Secret (`{secretKeyRef: {name, key}}`), or a name of the
    run (`{runRef: firstWorker|name}`), which only the builder knows."""
    if isinstance(value, dict) and "runRef" in value:
        return EnvVar(name, "", origin, run_ref=RunRef(value["runRef"]))
    if isinstance(value, dict):
        ref = value["secretKeyRef"]
        return EnvVar(name, "", origin, SecretKey(ref["name"], ref["key"]))
    return EnvVar(name, value, origin)


def _resources(data: dict[str, str] | None) -> Resources:
    data = data or {}
    return Resources(cpu=data.get("cpu"), memory=data.get("memory"))


def _openmpi_ucx(data: dict[str, Any]) -> bool:
    """Whether the image's OpenMPI has UCX: the profile's `openMPIUcx`, else the default."""
    return bool(data.get("openMPIUcx", defaults.OPENMPI_UCX))


def _rail_attachments(data: dict[str, Any], cluster: Cluster, pool: NodePool) -> tuple[RailAttachment, ...]:
    """The rails the job names (all of its pool's by default), each with the NIC it runs over on that pool."""
    rail_names = data.get("rails", [r.name for r in cluster.rails_of(pool)])
    return tuple(
        RailAttachment(rail=rail, nic=stated(pool.hardware.nic(rail.nic_name)))
        for name in rail_names
        for rail in cluster.rails
        if rail.name == name
    )


def _one_per_node(cluster: Cluster, rails: tuple[RailAttachment, ...]) -> str | None:
    """Why no two workers share a node, where the network says so (validate/network.one_worker_per_node)."""
    provider = PROVIDERS[cluster.network.provider]
    if provider.host_network:
        return derive.ONE_PER_NODE_HOST_NETWORK
    if provider.dra_devices and cluster.dra is not None and rails:
        return derive.ONE_PER_NODE_CLAIMED_NICS
    return None


def _compute_domain(cluster: Cluster, pool: NodePool) -> bool | None:
    """On multi-node NVLink hardware, whether the job's workers join a ComputeDomain (DRA with `computeDomains`);
    None elsewhere."""
    gpu = pool.hardware.gpu
    if gpu is None or not gpu.multi_node_nvlink:
        return None
    return cluster.dra is not None and cluster.dra.compute_domains


def _env(document: ProfileFile, data: dict[str, Any], rails: tuple[RailAttachment, ...], shape: derive.Layout,
         cluster: Cluster, pool: NodePool, implementation: MpiImplementation,
         openmpi_version: int | None, backend: Backend) -> tuple[EnvVar, ...]:
    """The derived variables first (the profile's value where it sets one), then the profile's own."""
    uses_gpus = shape.gpus_per_worker > 0
    user_env = data.get("env", {})
    env: list[EnvVar] = []
    derived = derived_env(rails, uses_gpus, cluster.network.provider, implementation,
                          nic_distance=stated(pool.hardware.gpu).nic_distance if uses_gpus and rails else None,
                          openmpi_version=openmpi_version or 4, slots_per_worker=shape.slots_per_worker,
                          ssh_port=ssh_port(data, cluster),
                          operator=backend.sets_openmpi_hostfile_variables,
                          ucx=_openmpi_ucx(data), compute_domain=_compute_domain(cluster, pool))
    for name, value, why in derived:
        if name in user_env:
            env.append(_env_var(name, user_env[name], f"{document.source}: env (overrides the derived {value!r})"))
        else:
            env.append(EnvVar(name, value, why))
    derived_names = {e.name for e in env}
    env += [_env_var(k, v, f"{document.source}: env") for k, v in user_env.items() if k not in derived_names]
    return tuple(env)


def _origins(document: ProfileFile, data: dict[str, Any], cluster: Cluster, pool: NodePool, shape: derive.Layout,
             name_limit: int, size_limit: int, queue_limit: tuple[int, str] | None) -> tuple[tuple[str, Origin], ...]:
    """Where the values a reader may wonder about come from, for the chart's comments."""
    policy = data.get("runPolicy", {})
    line = document.location
    origins = {
        "image": Origin(f"{document.source}:{line('image').line}: image"),
        "workers": Origin(f"{document.source}:{line(shape.worker_count_origin.split()[0]).line}: "
                          f"{shape.worker_count_origin}"),
        "suspend": Origin(f"cluster {cluster.name}: Kueue admits the job and unsuspends it (set to false, the job "
                          "would start without admission)" if cluster.scheduling.scheduler is Scheduler.KUEUE else
                          f"{document.source}:{line('runPolicy', 'suspend').line}: runPolicy.suspend"
                          if "suspend" in policy else "default: not suspended"),
        "max_workers": Origin(f"pool '{pool.name}': {pool.nodes} nodes x {shape.workers_per_node} "
                              f"worker(s) per node" + (f"; the operator's 63-character pod names allow {name_limit}"
                                                       if name_limit < shape.capacity else "")
                              + (f"; the hostfile lines etcd's default object limit holds allow {size_limit}"
                                 if size_limit < min(shape.capacity, name_limit) else "")
                              + (f"; {queue_limit[1]}" if queue_limit is not None else "")),
    }
    if queue_limit is not None:
        origins[QUEUE_MAX_WORKERS] = Origin(queue_limit[1])
    return tuple(sorted(origins.items()))


def _run_policy(policy: dict[str, Any], cluster: Cluster) -> RunPolicy:
    """Under Kueue a job is created suspended, whatever the profile says: Kueue unsuspends it on admission."""
    kueue = cluster.scheduling.scheduler is Scheduler.KUEUE
    return RunPolicy(
        clean_pod_policy=policy.get("cleanPodPolicy", defaults.CLEAN_POD_POLICY),
        backoff_limit=policy.get("backoffLimit"),
        active_deadline_seconds=policy.get("activeDeadlineSeconds"),
        ttl_seconds_after_finished=policy.get("ttlSecondsAfterFinished"),
        suspend=kueue or bool(policy.get("suspend", False)),
    )


def _volume(data: dict[str, Any]) -> Volume:
    """`hostPath` is a path, or `{path, reason}` where the folder needs a reason."""
    host = data.get("hostPath")
    path, reason = (host["path"], host["reason"]) if isinstance(host, dict) else (host, None)
    return Volume(data["name"], data.get("claim"), data["mountPath"], data.get("readOnly", False), path, reason)
