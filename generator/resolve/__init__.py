"""Stage 3: turn validated profiles into the frozen model, filling defaults and derived values.

Runs only on profiles `validate` passed; a lookup that fails here is a bug, not a user error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from generator.load import ProfileFile, to_plain
from generator.load.catalogue import builtin_names
from generator.model import (
    Backend,
    Cluster,
    CommittedRun,
    Cpu,
    EnvVar,
    Fleet,
    GitOps,
    GitOpsTool,
    Gpu,
    Hardware,
    InfinibandGuids,
    Ipam,
    Job,
    JobScheduling,
    LinkType,
    MpiImplementation,
    Naming,
    Network,
    Nic,
    NodePool,
    Origin,
    PciDistance,
    PriorityClass,
    Queue,
    QueueShare,
    Quota,
    Rail,
    RailAttachment,
    Resources,
    RunPolicy,
    RunRef,
    Scheduler,
    Scheduling,
    SecretKey,
    Taint,
    TopologyLevel,
    Volume,
    WorkerSpread,
    admission,
    defaults,
    derive,
    names,
)
from generator.model.hostfile import HostfileFormat
from generator.model.placement import resolve_placement
from generator.objects import chartfiles
from generator.providers import DEFAULT_PROVIDER, PROVIDERS, setting_defaults
from generator.resolve.identity import Resolved, hardware_parts, run_identity
from generator.resolve.nccl import derived_env
from generator.vocabulary import mpi_operator

DEFAULT_NETWORK = {"provider": DEFAULT_PROVIDER.value, "cniVersion": "0.3.1", **setting_defaults()}
DEFAULT_LAUNCHER_RESOURCES = Resources(cpu=defaults.LAUNCHER_CPU, memory=defaults.LAUNCHER_MEMORY)


def resolve(documents: list[ProfileFile], committed: Mapping[str, CommittedRun] | None = None) -> Fleet:
    """`committed`: the runs the output folder's job charts hold, by chart folder (`generator.continuity.committed`): a
    run whose profiles ask the same of it keeps its committed name."""
    by_kind: dict[str, list[ProfileFile]] = {"Hardware": [], "Cluster": [], "Job": []}
    for document in documents:
        by_kind[document.kind].append(document)
    hardware_data = {d.data["name"]: to_plain(d.data) for d in by_kind["Hardware"]}
    hardware = {name: _hardware(data) for name, data in hardware_data.items()}
    clusters = {c.name: c for c in (_cluster(d, hardware, hardware_data) for d in by_kind["Cluster"])}
    written = _Written({d.data["name"]: d for d in by_kind["Hardware"]},
                       {d.data["name"]: to_plain(d.data) for d in by_kind["Cluster"]}, committed or {})
    jobs = [_job(d, clusters, hardware_data, written) for d in by_kind["Job"]]
    return Fleet(
        hardware=tuple(hardware[name] for name in sorted(hardware)),
        clusters=tuple(clusters[name] for name in sorted(clusters)),
        jobs=tuple(sorted(jobs, key=lambda j: (j.cluster.name, j.name))),
    )


def _labels(data: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((data or {}).items()))


def _hardware(data: dict[str, Any]) -> Hardware:
    gpu = data.get("gpu")
    return Hardware(
        name=data["name"],
        description=data.get("description", ""),
        gpu=Gpu(count=gpu["count"], model=gpu.get("model", ""), memory_gib=gpu.get("memoryGiB"),
                resource=gpu.get("resource", derive.DEFAULT_GPU_RESOURCE),
                nic_distance=PciDistance(gpu["nicDistance"]) if "nicDistance" in gpu else None) if gpu else None,
        nics=tuple(
            # Facts a profile leaves out are unknown (None); validation refuses whatever would need one.
            Nic(name=n["name"], hca=n.get("hca"), port=n.get("port", 1), pf_name=n.get("pfName"),
                vendor_id=n.get("vendorId"), device_id=n.get("deviceId"), vf_device_id=n.get("vfDeviceId"),
                driver=n.get("driver", "mlx5_core"), link_type=LinkType(n["linkType"]) if "linkType" in n else None,
                speed_gbps=n.get("speedGbps"), numa_node=n.get("numaNode"), gpus=tuple(n.get("gpus", ())))
            for n in data.get("nics", [])
        ),
        cpu=Cpu(model=data["cpu"].get("model", ""), sockets=data["cpu"]["sockets"],
                cores_per_socket=data["cpu"].get("coresPerSocket"), threads_per_core=data["cpu"].get("threadsPerCore", 1)),
        memory_gib=data["memoryGiB"],
        node_labels=_labels(data.get("nodeLabels")),
    )


def _cluster(document: ProfileFile, hardware: dict[str, Hardware], hardware_data: dict[str, dict[str, Any]]) -> Cluster:
    data = to_plain(document.data)
    network = {**DEFAULT_NETWORK, **data.get("network", {})}
    provider = PROVIDERS[network["provider"]]
    prefix = network.get("resourcePrefix", provider.resource_prefix)
    rails = []
    for r in data.get("rails", []):
        resource_name = r.get("resourceName", names.default_rail_resource_name(r["name"]))
        ipam = Ipam(range=r["ipam"]["range"], exclude=tuple(r["ipam"].get("exclude", ()))) if "ipam" in r else None
        rails.append(Rail(name=r["name"], nic_name=r["nic"], resource_name=resource_name,
                          resource=names.rail_resource(prefix, resource_name), ipam=ipam,
                          host_interface=r.get("hostInterface"), vlan=r.get("vlan"), vlan_qos=r.get("vlanQoS")))
    pools = tuple(NodePool(name=p["name"], hardware=hardware[p["hardware"]], nodes=p["nodes"],
                           node_labels=_labels(p.get("nodeLabels")),
                           offer=admission.node_offer(hardware_data[p["hardware"]], admission.rail_resource_names(
                               data, hardware_data[p["hardware"]], prefix), provider.exclusive_devices,
                               network).resources,
                           taints=tuple(Taint(t["key"], t["effect"], t.get("value")) for t in p.get("taints", ())))
                  for p in data["nodePools"])
    return Cluster(
        name=data["name"],
        source=document.source,
        kubernetes_version=data["kubernetesVersion"],
        namespaces=tuple(data["namespaces"]),
        existing_namespaces=tuple(data.get("existingNamespaces", ())),
        network=Network(provider=provider.name, resource_prefix=prefix,
                        device_plugin_namespace=network["devicePluginNamespace"],
                        cni_version=network["cniVersion"], operator_namespace=network["operatorNamespace"],
                        num_vfs=network.get("numVfs"), ssh_port=network["sshPort"],
                        infiniband_guids=InfinibandGuids(network["infinibandGuids"])),
        pools=pools,
        rails=tuple(rails),
        gitops=_gitops(data["gitops"]) if "gitops" in data else None,
        cpu_manager_policy=data.get("cpuManagerPolicy"),
        pod_security=tuple(sorted(data.get("podSecurity", {}).items())),
        scheduling=_scheduling(data, pools),
        job_backend=Backend(data.get("jobBackend", defaults.JOB_BACKEND)),
        launcher_pool=data.get("launcherPool"),
    )


def _scheduling(data: dict[str, Any], pools: tuple[NodePool, ...]) -> Scheduling:
    given = data.get("scheduling", {})
    scheduler = Scheduler(admission.scheduler_of(data))
    classes = tuple(PriorityClass(p["name"], p["value"], p.get("description")) for p in given.get("priorityClasses", []))
    if scheduler is Scheduler.NONE:
        return Scheduling(priority_classes=classes)  # the pods' own priority, without a gang scheduler
    by_name = {pool.name: pool for pool in pools}
    queues = []
    declared = admission.cluster_queues(data)
    for queue in declared.declared:
        shares = []
        for pool_name, nodes in queue.nodes:
            borrow = queue.borrowable(pool_name)
            reach = nodes + declared.borrowable_nodes(queue, pool_name)
            quotas = tuple(Quota(resource, count * nodes, count * reach, unit,
                                 count * borrow if borrow is not None else None)
                           for resource, count, unit in by_name[pool_name].offer)
            shares.append(QueueShare(by_name[pool_name], nodes, borrow, quotas))
        queues.append(Queue(queue.name, queue.namespaces, tuple(shares), queue.cohort, queue.weight))
    return Scheduling(
        scheduler=scheduler,
        scheduler_name=admission.coscheduling_scheduler(data) if scheduler is Scheduler.COSCHEDULING else None,
        schedule_timeout_seconds=given.get("scheduleTimeoutSeconds"),
        priority_classes=classes,
        topology=tuple(TopologyLevel(level["name"], level["nodeLabel"]) for level in given.get("topology", [])),
        queues=tuple(queues),
    )


def _job_scheduling(data: dict[str, Any], cluster: Cluster, namespace: str) -> JobScheduling:
    """The queue a job goes to (its own choice, else the first serving its namespace), and what else it chose."""
    scheduling = cluster.scheduling
    given = data.get("scheduling", {})
    if scheduling.scheduler is Scheduler.NONE:
        return JobScheduling(priority_class=given.get("priorityClass"))
    queue = given.get("queue")
    if queue is None:
        queue = next((q.name for q in scheduling.queues if namespace in q.namespaces), None)
    topology = given.get("topology")
    label = next((level.node_label for level in scheduling.topology if level.name == topology["level"]), None) \
        if topology else None
    return JobScheduling(queue=queue, priority_class=given.get("priorityClass"),
                         min_available=given.get("minAvailable"), topology_label=label,
                         topology_required=(topology or {}).get("mode", "required") == "required")


def _env_var(name: str, value: str | dict[str, Any], origin: str) -> EnvVar:
    """A variable the profile sets: a literal, a key of a Secret (`{secretKeyRef: {name, key}}`), or a name of the
    run (`{runRef: firstWorker|name}`), which only the builder knows."""
    if isinstance(value, dict) and "runRef" in value:
        return EnvVar(name, "", origin, run_ref=RunRef(value["runRef"]))
    if isinstance(value, dict):
        ref = value["secretKeyRef"]
        return EnvVar(name, "", origin, SecretKey(ref["name"], ref["key"]))
    return EnvVar(name, value, origin)


def _gitops(data: dict[str, Any]) -> GitOps:
    tool = GitOpsTool(data["tool"])
    given = {**defaults.GITOPS, **data, "namespace": derive.gitops_namespace(data)}
    return GitOps(tool=tool, repo_url=given["repoURL"], revision=given["revision"], path=given["path"],
                  destination=given["destination"], project=given["project"], namespace=given["namespace"])


def _resources(data: dict[str, str] | None) -> Resources:
    data = data or {}
    return Resources(cpu=data.get("cpu"), memory=data.get("memory"))


class _Written:
    """The profiles as written, for run identities, and the committed runs."""

    def __init__(self, hardware: dict[str, ProfileFile], clusters: dict[str, dict[str, Any]],
                 committed: Mapping[str, CommittedRun]) -> None:
        self.hardware = hardware_parts(hardware, frozenset(builtin_names()))
        self.clusters = clusters
        self.committed = committed


def _identity_and_continuation(job: Job, data: dict[str, Any], written: _Written) -> Job:
    """The job with its run identity, and the committed run it continues under the same name, if any."""
    scheduling = job.scheduling
    resolved = Resolved((job.worker_count, job.gpus_per_worker, job.slots_per_worker),
                        tuple(attachment.rail.name for attachment in job.rails), scheduling.queue,
                        scheduling.topology_label, job.backend.value, job.namespace)
    identity = run_identity(data, written.clusters[job.cluster.name], written.hardware, resolved)
    record = written.committed.get(names.chart_dir_of_job(job.cluster.name, job.name))
    continued = record if record is not None and _continues(job, identity, record) else None
    return replace(job, identity=identity, committed=continued)


def _continues(job: Job, identity: str, record: CommittedRun) -> bool:
    """Whether the new render's run is the committed one: same naming, a name of the form this job's runs have,
    the same kind of job object, and the same identity; for a chart compiled before identities were recorded
    (mpigen 0.1.0), the same image and worker count, which its values.yaml says (what else changed since,
    `mpigen diff` shows as held back)."""
    if job.naming is not Naming.CONTENT_HASH or record.naming != Naming.CONTENT_HASH.value:
        return False
    if not re.fullmatch(re.escape(job.name) + f"-[0-9a-f]{{{names.RUN_DIGEST_LENGTH}}}", record.name):
        return False
    if record.template != chartfiles.JOB_TEMPLATES[job.backend.value]:
        return False
    if record.identity is not None:
        return record.identity == identity
    same_image = record.image is None or job.backend is Backend.TRAINJOB or record.image == job.image
    return same_image and record.workers == job.worker_count


def _job(document: ProfileFile, clusters: dict[str, Cluster], hardware_data: dict[str, dict[str, Any]],
         written: _Written) -> Job:
    data = to_plain(document.data)
    return _identity_and_continuation(_resolved_job(document, data, clusters, hardware_data), data, written)


def _resolved_job(document: ProfileFile, data: dict[str, Any], clusters: dict[str, Cluster],
                  hardware_data: dict[str, dict[str, Any]]) -> Job:
    cluster = clusters[data["cluster"]]
    pool = cluster.pool(data["pool"])
    shape = derive.layout(data, hardware_data[pool.hardware.name], pool.nodes,
                          one_per_node=PROVIDERS[cluster.network.provider].host_network)
    rails = _rail_attachments(data, cluster, pool)
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
    return Job(
        name=data["name"],
        naming=naming,
        source=document.source,
        cluster=cluster,
        pool=pool,
        namespace=namespace,
        image=data["image"],
        worker_count=shape.worker_count,
        max_workers=min(shape.capacity, name_limit, size_limit),
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
        origins=_origins(document, data, cluster, pool, shape, name_limit, size_limit),
        scheduling=_job_scheduling(data, cluster, data.get("namespace", cluster.namespaces[0])),
        backend=backend,
        workers_per_node=shape.workers_per_node,
        estimated_hours=data.get("estimatedHours"),
        worker_spread=WorkerSpread(data["workerSpread"]) if "workerSpread" in data else None,
        image_pull_policy=data.get("imagePullPolicy"),
        labels=_labels(data.get("labels")),
        annotations=_labels(data.get("annotations")),
        object_labels=_labels(data.get("objectLabels")),
        object_annotations=_labels(data.get("objectAnnotations")),
    )


def _openmpi_ucx(data: dict[str, Any]) -> bool:
    """Whether the image's OpenMPI has UCX: the profile's `openMPIUcx`, else the default."""
    return bool(data.get("openMPIUcx", defaults.OPENMPI_UCX))


def _rail_attachments(data: dict[str, Any], cluster: Cluster, pool: NodePool) -> tuple[RailAttachment, ...]:
    """The rails the job names (all of its pool's by default), each with the NIC it runs over on that pool."""
    rail_names = data.get("rails", [r.name for r in cluster.rails_of(pool)])
    return tuple(
        RailAttachment(rail=rail, nic=pool.hardware.nic(rail.nic_name))
        for name in rail_names
        for rail in cluster.rails
        if rail.name == name
    )


def _env(document: ProfileFile, data: dict[str, Any], rails: tuple[RailAttachment, ...], shape: derive.Layout,
         cluster: Cluster, pool: NodePool, implementation: MpiImplementation,
         openmpi_version: int | None, backend: Backend) -> tuple[EnvVar, ...]:
    """The derived variables first (the profile's value where it sets one), then the profile's own."""
    uses_gpus = shape.gpus_per_worker > 0
    user_env = data.get("env", {})
    env: list[EnvVar] = []
    derived = derived_env(rails, uses_gpus, cluster.network.provider, implementation,
                          nic_distance=pool.hardware.gpu.nic_distance if uses_gpus and rails else None,
                          openmpi_version=openmpi_version or 4, slots_per_worker=shape.slots_per_worker,
                          ssh_port=PROVIDERS[cluster.network.provider].worker_ssh_port(cluster.network),
                          operator=backend.sets_openmpi_hostfile_variables,
                          ucx=_openmpi_ucx(data))
    for name, value, why in derived:
        if name in user_env:
            env.append(_env_var(name, user_env[name], f"{document.source}: env (overrides the derived {value!r})"))
        else:
            env.append(EnvVar(name, value, why))
    derived_names = {e.name for e in env}
    env += [_env_var(k, v, f"{document.source}: env") for k, v in user_env.items() if k not in derived_names]
    return tuple(env)


def _origins(document: ProfileFile, data: dict[str, Any], cluster: Cluster, pool: NodePool, shape: derive.Layout,
             name_limit: int, size_limit: int) -> tuple[tuple[str, Origin], ...]:
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
                                 if size_limit < min(shape.capacity, name_limit) else "")),
    }
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
