"""`mpigen explain JOB`: every value mpigen derives for one job, with where it comes from: a profile's file and
line, a built-in default, or the rule it follows (docs/facts.md, in the words the charts' comments use).

Reads the resolved model and the profiles it came from (for the lines); the values are those the builders put in
the charts, taken from the same functions (names, the run digest, the launcher's command, the rankfile).
"""

from __future__ import annotations

import itertools
import json
import shlex

from mpigen.insight import bounds
from mpigen.insight.acceptance_facts import acceptance_document, acceptance_facts
from mpigen.insight.device_facts import claimed_rail, device_facts, gpu_resource_fact, nic_index
from mpigen.insight.explanation import PROFILE, Explanation, Fact, Said
from mpigen.insight.facts import Where as _Where
from mpigen.insight.facts import fact as _fact
from mpigen.insight.facts import own as _own
from mpigen.insight.facts import said as _said
from mpigen.insight.kai_facts import kai_facts
from mpigen.insight.kueue_facts import kueue_facts
from mpigen.insight.ranks import BINDING_RULE, binding_gaps, rank_bindings, rank_pattern
from mpigen.load import ProfileFile
from mpigen.manifests.hostfile import configmap_keys, job_host
from mpigen.manifests.mpijob import env_value, worker_affinity, workers_variable
from mpigen.manifests.mpirun import launcher_command
from mpigen.manifests.node_placement import launcher_pool, launcher_pools, tolerations
from mpigen.manifests.run_name import RUN_DIGEST_COVERS, mpijob_name
from mpigen.model import (
    Backend,
    Job,
    MpiImplementation,
    Naming,
    Nic,
    NodePool,
    Scheduler,
    defaults,
    derive,
    names,
    stated,
)
from mpigen.objects.manifest import plain
from mpigen.providers import PROVIDERS, pod_network
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.multus import NETWORKS_ANNOTATION


def explain_job(job: Job, documents: list[ProfileFile]) -> Explanation:
    by_name = {(d.kind, str(d.data.get("name"))): d for d in documents}
    document = acceptance_document(job, documents) if job.acceptance is not None else \
        next(d for d in documents if d.kind == "Job" and d.source == job.source)
    at_job = _Where(document)
    at_cluster = _Where(by_name.get(("Cluster", job.cluster.name)))
    at_hw = _Where(by_name.get(("Hardware", job.pool.hardware.name)))
    mpijob = mpijob_name(job)
    count = job.worker_count * job.slots_per_worker
    head, tail = bounds.head_and_tail(count, bounds.RANKS_SHOWN)
    facts = [*_naming(job, mpijob, at_job), *acceptance_facts(job, at_cluster), *_size(job, at_job, at_cluster, at_hw),
             *_resources(job, at_job, at_cluster, at_hw), *_networks(job, at_job, at_cluster, at_hw),
             *device_facts(job, mpijob, at_job, at_cluster, at_hw),
             *_environment(job, mpijob, at_job), *_mpi(job, mpijob, at_job), *_security(job, at_job),
             *_scheduling(job, at_job, at_cluster), *_placement(job, at_job, at_cluster), *_metadata(job, at_job)]
    return Explanation(job=job.name, path=document.path if document is not None else job.source,
                       cluster=job.cluster.name, pool=job.pool.name,
                       namespace=job.namespace, facts=tuple(facts),
                       ranks=rank_bindings(job, mpijob, itertools.chain(head, tail)),
                       binding_rule=BINDING_RULE + binding_gaps(job), rank_count=count,
                       ranks_omitted=count - len(head) - len(tail), rank_pattern=rank_pattern(job))


def _naming(job: Job, mpijob: str, at: _Where) -> list[Fact]:
    naming = _said(at("naming"), f"naming {job.naming.value}", f"default: naming {defaults.JOB_NAMING}")
    if job.naming is Naming.CONTENT_HASH:
        origin = f"{naming}; the last {names.RUN_DIGEST_LENGTH} characters are a digest of {RUN_DIGEST_COVERS}"
    else:
        origin = f"{naming}: the job's own name, so an edited run reuses the MPIJob (mpi-operator keeps its launcher)"
    return [_fact("naming", f"{job.backend.noun} name", mpijob, origin),
            _fact("naming", "backend", job.backend.value,
                  _said(at("backend"), "backend", f"cluster {job.cluster.name}'s jobBackend"
                        if job.cluster.job_backend is job.backend and job.backend is not Backend.MPIJOB
                        else "default: mpijob (mpi-operator's MPIJob)")),
            _fact("naming", "chart and Helm release", job.name, _said(at("name"), "name", "the job's name")),
            _fact("naming", "namespace", job.namespace,
                 _said(at("namespace"), "namespace", f"the first namespace of cluster {job.cluster.name}")),
            _fact("naming", "worker pods", f"{names.worker_name(mpijob, 0, job.backend.value)} .. "
                 f"{names.worker_name(mpijob, job.worker_count - 1, job.backend.value)}",
                 {Backend.MPIJOB: "mpi-operator names workers <mpijob>-worker-<i>",
                  Backend.VOLCANO_JOB: "Volcano names a task's pods <job>-<task>-<i> (task mpiworker)",
                  Backend.TRAINJOB: "JobSet gives a TrainJob's pods the hostnames "
                  "<trainjob>-<replicatedJob>-<jobIndex>-<i> (replicated job node)"}[job.backend]
                 + f", reachable as {job_host(job, mpijob, 0)} through the job's headless service")]


def _size(job: Job, at: _Where, at_cluster: _Where, at_hw: _Where) -> list[Fact]:
    hardware = job.pool.hardware
    sized = _own(job.origin("workers"))  # `<source>:<line>: ...`, the profile's stable name: here, its path
    if sized.text.startswith(f"{job.source}:") and at.document is not None:
        sized = Said(at.document.path + sized.text[len(job.source):], PROFILE)
    facts = [_fact("size", "workers", str(job.worker_count), sized),
             _fact("size", "most workers the pool holds" if job.queue_limit is None else
                   "most workers that can ever be admitted", str(job.max_workers), job.origin("max_workers"))]
    if job.uses_gpus:
        facts.append(_fact("size", "GPUs per worker", str(job.gpus_per_worker),
                          _said(at("gpusPerWorker"), "gpusPerWorker",
                                _said(at_hw("gpu", "count"), f"gpu.count of hardware {hardware.name}: a worker "
                                      "takes a whole node's GPUs unless the job says otherwise",
                                      f"hardware {hardware.name}: a worker takes a whole node's GPUs"))))
        slots_default = "one rank per GPU (slotsPerWorker defaults to GPUs per worker)"
    elif job.resources.cpu is not None:
        slots_default = "one rank per CPU the worker asks for (resources.cpu)"
    else:
        slots_default = f"one rank per physical core of hardware {hardware.name} (sockets x coresPerSocket)"
    facts.append(_fact("size", "slots per worker", str(job.slots_per_worker),
                      _said(at("slotsPerWorker"), "slotsPerWorker", slots_default)))
    facts.append(_fact("size", "ranks", str(job.worker_count * job.slots_per_worker),
                      "workers x slots per worker: the hostfile's slots, and mpirun's rank count"
                      + (" (no -np: one rank per slot of the hostfile)" if job.backend is Backend.TRAINJOB else "")))
    return facts


def _resources(job: Job, at: _Where, at_cluster: _Where, at_hw: _Where) -> list[Fact]:
    facts = []
    for key, value in (("cpu", job.resources.cpu), ("memory", job.resources.memory)):
        if value is not None:
            facts.append(_fact("worker resources", key, value, _said(at("resources", key), f"resources.{key}", "")))
    if job.uses_gpus and job.devices is not None and job.devices.pairs:
        facts.append(gpu_resource_fact(job, at_cluster))
    elif job.uses_gpus:
        gpu = stated(job.pool.hardware.gpu)
        facts.append(_fact("worker resources", gpu.resource, str(job.gpus_per_worker),
                          _said(at_hw("gpu", "resource"), "gpu.resource", "default: GPUs are requested as "
                                f"{derive.DEFAULT_GPU_RESOURCE} (NVIDIA's device plugin)")
                          + "; as a limit, the way extended resources are requested"))
    provider = PROVIDERS[job.cluster.network.provider]
    limits = dict(pod_network(job, job.name).limits)
    for attachment in job.rails:
        rail = attachment.rail
        if rail.resource in limits:
            index = next(i for i, r in enumerate(job.cluster.rails) if r.name == rail.name)
            facts.append(_fact("worker resources", rail.resource, str(limits[rail.resource]),
                              _said(at_cluster("rails", index), f"rail {rail.name}", f"rail {rail.name}")
                              + f", under the {provider.name.value} provider's resource prefix: one device of each "
                              "rail per worker"))
    facts.append(_fact("worker resources", "/dev/shm", job.shm_size,
                      _said(at("shmSize"), "shmSize", "default: 1Gi per GPU (1Gi for a CPU job), a memory-backed "
                            "emptyDir: NCCL and MPI share memory between a node's ranks through it")))
    for key, value in (("cpu", job.launcher_resources.cpu), ("memory", job.launcher_resources.memory)):
        if value is not None:
            facts.append(_fact("launcher resources", key, value,
                              _said(at("launcher", "resources", key), f"launcher.resources.{key}",
                                    "default: the launcher only runs mpirun")))
    return facts


def _nic_line(job: Job, nic: Nic, at_hw: _Where) -> Said:
    named = f"NIC {nic.name} of hardware {job.pool.hardware.name}"
    return _said(at_hw("nics", nic_index(job.pool.hardware, nic.name)), named, named)


def _networks(job: Job, at: _Where, at_cluster: _Where, at_hw: _Where) -> list[Fact]:
    provider = job.cluster.network.provider.value
    facts = [_fact("networks", "provider", provider, _said(at_cluster("network", "provider"), "network.provider",
                                                          f"default: {provider}"))]
    chosen = _said(at("rails"), "rails", f"every rail of pool {job.pool.name} (the job names none)")
    host = PROVIDERS[job.cluster.network.provider].host_network
    attached = _attachments(job)
    for attachment in job.rails:
        nic = attachment.nic
        where = ("the node's own interface (host networking)" if host else claimed_rail(job, attachment.rail.name) or
                 f"NetworkAttachmentDefinition {attached[attachment.interface]} as interface {attachment.interface}")
        link = f"{nic.link_type.value} " if nic.link_type else ""
        index = next(i for i, r in enumerate(job.cluster.rails) if r.name == attachment.rail.name)
        facts.append(_fact("networks", f"rail {attachment.rail.name}",
                          f"{where}, over NIC {nic.name} ({link}{nic.hca or 'HCA not named'}, port {nic.port})"
                          + (f", {attachment.rail.tagging}" if attachment.rail.tagging else ""),
                          _said(at_cluster("rails", index), f"rail {attachment.rail.name}", "")
                          + f"; {chosen}; {_nic_line(job, nic, at_hw)}"))
    if not job.rails:
        facts.append(_fact("networks", "rails", "none", f"{chosen}: the cluster network (eth0) carries everything"))
    return facts


def _attachments(job: Job) -> dict[str, str]:
    """`namespace/name` of the NetworkAttachmentDefinition behind each interface, as the workers' Multus annotation
    names them (each provider names its own: sriov-network-operator's carry the namespace)."""
    annotations = dict(pod_network(job, job.name).annotations)
    listed = json.loads(annotations.get(NETWORKS_ANNOTATION, "[]"))
    return {item["interface"]: f"{item['namespace']}/{item['name']}" for item in listed}


def _environment(job: Job, mpijob: str, at: _Where) -> list[Fact]:
    facts = []
    for var in job.env:
        value = (f"from Secret {var.secret.name}, key {var.secret.key}" if var.secret else
                 f"{env_value(job, var, mpijob)} (runRef {var.run_ref.value}: filled in with the {job.backend.noun}'s "
                 "name)" if var.run_ref else var.value)
        where = at("env", var.name)
        if var.origin.startswith(f"{job.source}: env"):
            said = var.origin.split(": ", 1)[1].replace("env", f"env.{var.name}", 1)
            origin: Said | str = Said(f"{where}: {said}", PROFILE) if where else _own(var.origin)
        else:
            origin = var.origin
        facts.append(_fact("environment", var.name, value, origin))
    return facts


def _mpi(job: Job, mpijob: str, at: _Where) -> list[Fact]:
    implementation = job.mpi_implementation
    facts = [_fact("mpi", "implementation", implementation.value,
                  _said(at("mpiImplementation"), "mpiImplementation", "default: OpenMPI"))]
    if implementation is MpiImplementation.OPENMPI:
        facts.append(_fact("mpi", "OpenMPI version", str(job.openmpi_version),
                          _said(at("openMPIVersion"), "openMPIVersion", f"default: {defaults.OPENMPI_VERSION}")))
        facts.append(_fact("mpi", "OpenMPI has UCX", "yes" if job.openmpi_ucx else "no",
                          _said(at("openMPIUcx"), "openMPIUcx", "default: true (NGC images and mpi-operator's "
                                "examples have it); decides OMPI_MCA_pml on RDMA rails")))
        placement = job.placement
        origin: Said | str
        if placement.rankfile:
            value, origin = (f"rankfile {names.RANKFILE_PATH}", "each rank bound to every core of the socket of its "
                             "GPU's NIC (the NIC's numaNode), where the host-side work of its GPU is fastest")
        else:
            value = " ".join(f for f in (f"--map-by {placement.map_by}" if placement.map_by else "",
                                         f"--bind-to {placement.bind_to.value}" if placement.bind_to else "") if f) \
                or "OpenMPI's own default"
            origin = _said(at("placement"), "placement", f"no rankfile: {placement.no_rankfile}")
        facts.append(_fact("mpi", "placement", value, origin))
    facts.append(_fact("mpi", "hostfile", f"{names.HOSTFILE_PATH} in ConfigMap {names.hostfile_configmap_name(mpijob)} "
                      f"({', '.join(configmap_keys(job))})", "one line per worker, in the format mpi-operator writes "
                      "(`host slots=N` for OpenMPI, `host:N` for Intel MPI and MPICH), given to mpigen's mpirun "
                      "explicitly: no controller's hostfile variable is relied on (OpenMPI 5 ignores ORTE's)"
                      + ("; its lines are those Trainer writes into its own (<trainjob>-mpi-hostfile, OpenMPI's "
                         "default hostfile on the launcher)" if job.backend is Backend.TRAINJOB else "")))
    facts.append(_sshd(job, at))
    command = plain(launcher_command(job, workers_variable(job)))
    origin = (_said(at("launcherCommand"), "launcherCommand", "") if job.launcher_command is not None else
              "mpirun with the hostfile, " + ("" if job.backend is Backend.TRAINJOB else "the rank count, ") +
              "the placement, every env variable exported by name "
              "(variables of a container do not reach processes started over ssh)"
              + (f"; {at('mpirunArgs')}: mpirunArgs" if at("mpirunArgs") else "")
              + (f"; {at('program')}: program" if at("program") else ""))
    facts.append(_fact("mpi", "launcher command", shlex.join(str(part) for part in command), origin))
    return facts


def _sshd(job: Job, at: _Where) -> Fact:
    """sshd's port in the workers, which mpirun's ssh connects to, and whether the workers' readiness probe waits for
    it."""
    port = job.ssh_port or mpi_operator.SSHD_PORT
    probe = job.readiness_port
    value = f"port {port}, " + ("readiness probe on it" if probe is not None else "no readiness probe")
    why = ("" if probe is not None else "; no probe: a workerCommand of the job's own, whose port only sshPort says"
           if job.worker_command is not None and not job.ssh_port_stated else
           f"; no probe: sshd run as user {job.run_as_user} cannot bind a port below 1024")
    default = (f"cluster {job.cluster.name}: network.sshPort (the nodes' network)" if job.ssh_port is not None else
               "default: 22, where mpi-operator's `sshd -De` listens unless the image's sshd_config says another")
    said = _said(at("sshPort"), "sshPort", default)
    return _fact("mpi", "workers' sshd", value, Said(said.text + why, said.kind))


def _security(job: Job, at: _Where) -> list[Fact]:
    rdma = bool(job.rails) and PROVIDERS[job.cluster.network.provider].rdma
    if job.privileged_reason is not None:
        return [_fact("security", "workers", "privileged",
                      _said(at("privileged", "reason"), f"privileged.reason: {job.privileged_reason}", ""))]
    facts = [_fact("security", "capabilities", "IPC_LOCK" if rdma else "none added",
                  "RDMA pins memory, which needs IPC_LOCK, and nothing more (not privileged)" if rdma
                  else "no RDMA rails: nothing beyond the runtime's defaults")]
    facts.append(_fact("security", "user", "root" if job.runs_as_root else str(job.run_as_user),
                      _said(at("runAsUser"), "runAsUser", "default: the image's user (sshd needs root unless the "
                            "image is built for another)")))
    return facts


def _scheduling(job: Job, at: _Where, at_cluster: _Where) -> list[Fact]:
    scheduler = job.cluster.scheduling.scheduler.value
    facts = [_fact("scheduling", "scheduler", scheduler,
                  _said(at_cluster("scheduling", "scheduler"), "scheduling.scheduler", "default: none"))]
    if job.scheduling.queue:
        facts.append(_fact("scheduling", "queue", job.scheduling.queue,
                          _said(at("scheduling", "queue"), "scheduling.queue",
                                f"the first queue of cluster {job.cluster.name} serving namespace {job.namespace}")))
    if job.scheduling.priority_class:
        facts.append(_fact("scheduling", "priority class", job.scheduling.priority_class,
                          _said(at("scheduling", "priorityClass"), "scheduling.priorityClass", "")))
    return facts + kueue_facts(job, at, at_cluster) + kai_facts(job, at, at_cluster)


def _selector_text(selector: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{key}={value}" for key, value in selector)


def _tolerations_text(pools: tuple[NodePool, ...]) -> str:
    return ", ".join(f"{t['key']}{'=' + t['value'] if 'value' in t else ''}:{t['effect']} ({t['operator']})"
                     for t in tolerations(pools))


def _taints_said(job: Job, pools: tuple[NodePool, ...], at_cluster: _Where) -> str:
    """`<path>:<line>: nodePools[i].taints` of each tainted pool, or the pools' names."""
    said = []
    for pool in pools:
        if pool.taints:
            index = next(i for i, p in enumerate(job.cluster.pools) if p.name == pool.name)
            said.append(str(_said(at_cluster("nodePools", index, "taints"), f"taints of pool {pool.name}",
                                  f"taints of pool {pool.name}")))
    return "; ".join(said)


def _placement(job: Job, at: _Where, at_cluster: _Where) -> list[Fact]:
    """Where the pods may run: the pools' node labels and the tolerations of their taints."""
    facts = []
    if job.pool.node_selector:
        facts.append(_fact("nodes", "worker node selector", _selector_text(job.pool.node_selector),
                           f"the node labels of pool {job.pool.name} (its hardware's and its own)"))
    if job.pool.taints:
        facts.append(_fact("nodes", "worker tolerations", _tolerations_text((job.pool,)),
                           _taints_said(job, (job.pool,), at_cluster) + ": a pod is not scheduled on a node with a "
                           "NoSchedule taint it does not tolerate, so each taint gets the toleration matching it "
                           "(Equal to its value, Exists without one)"))
    network = pod_network(job, job.name)
    host = network.host_network
    affinity = worker_affinity(job, job.name, network)  # what the workers' pod spec says, read back
    spread = ("one per node" if "podAntiAffinity" in affinity else
              "packed on as few nodes as they fit (preferred)" if "podAffinity" in affinity else
              "wherever the scheduler puts them")
    facts.append(_fact("nodes", "workers per node", f"{spread}; at most {job.workers_per_node}",
                       "host networking: two workers on a node would both bind sshd's port" if host else
                       _said(at("workerSpread"), "workerSpread", "default: the scheduler's own scoring")
                       + f"; pool {job.pool.name} holds {job.pool.nodes * job.workers_per_node} such workers"))
    pinned = launcher_pool(job)
    if pinned is not None:
        facts.append(_fact("nodes", "launcher node selector", _selector_text(pinned.node_selector),
                           _said(at_cluster("launcherPool"), f"launcherPool {pinned.name}: its node labels", "")))
    else:
        facts.append(_fact("nodes", "launcher node selector", "none", "default: the launcher runs wherever the "
                           "scheduler puts it (the cluster names no launcherPool)"
                           + ("; Kueue pins it to the nodes of the flavor it admits it on"
                              if job.cluster.scheduling.scheduler is Scheduler.KUEUE else "")))
    pools = launcher_pools(job)
    if any(pool.taints for pool in pools):
        why = ("the launcher runs on that pool" if pinned is not None else
               "the launcher may run on these pools (its job's" + (" and its queue's" if len(pools) > 1 else "")
               + "), so it tolerates their taints")
        facts.append(_fact("nodes", "launcher tolerations", _tolerations_text(pools),
                           _taints_said(job, pools, at_cluster) + f": {why}"))
    return facts


def _metadata(job: Job, at: _Where) -> list[Fact]:
    """The image pull policy, and the profile's labels and annotations on the job object and its pods."""
    facts = [_fact("metadata", "image pull policy", job.image_pull_policy or "Kubernetes' default",
                   _said(at("imagePullPolicy"), "imagePullPolicy", "default: left out, so Kubernetes pulls a "
                         "`:latest` or untagged image on every start (Always) and any other once a node (IfNotPresent)"))]
    both = f"on the {job.backend.noun} and every pod it makes (a running job's pods never get a change)"
    only = f"on the {job.backend.noun} only"
    for field, noun, pairs, where in (("labels", "label", job.labels, both),
                                      ("annotations", "annotation", job.annotations, both),
                                      ("objectLabels", "label", job.object_labels, only),
                                      ("objectAnnotations", "annotation", job.object_annotations, only)):
        facts += [_fact("metadata", f"{noun} {key}", value, _said(at(field, key), f"{field}.{key}", "") +
                        f": {where}; never renames the run") for key, value in pairs]
    return facts


