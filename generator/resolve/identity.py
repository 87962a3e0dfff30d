"""A run's identity: what the profiles ask the run to do, never what a release of mpigen compiles it to.

A job object's name carries the first characters of this digest (`<job>-<digest>`, naming `content-hash`).
No controller applies a spec edit to a run it started (mpi-operator keeps its launcher, Volcano's webhook refuses
the edit, Trainer builds its JobSet once), so a run whose identity changes must be a new object, which the GitOps
tool puts in place of the old one; and a run whose identity stays must keep its name whatever else changes,
above all a new mpigen release: its running job would be deleted and started again.

So the digest is taken over the profile text a run depends on, as written, never over compiled output:
- the job profile, but for the fields that only describe it (`DESCRIBING_JOB_FIELDS`);
- of its cluster: the node pool it runs in (and the launcher's), their hardware, the rails it attaches, the
  network settings its pods see, the scheduler and the queue and topology level it lands in, its podset
  slices where it has any, and what its workers claim through DRA where they claim anything (`CLUSTER_PARTS`,
  `POOL_PARTS`, `RAIL_PARTS`, `NETWORK_PARTS`, `SCHEDULING_PARTS`, `Resolved.claims`);
- a built-in hardware profile by its name only (its facts are the release's, and a release never renames a run).
Mappings are compared key by key (reordering keys changes nothing), lists item by item. A value equal to the
fixed default it stands for counts as left out (`FIXED_DEFAULTS`, frozen with the scheme: a later release that
changes a default does not move it); so does a job's `sshPort` equal to the port its sshd has anyway, where mpigen
starts sshd (`Resolved.implied_ssh_port`). `SCHEME` versions all of this: a release that must change it keeps the
old scheme's answer for runs named under it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mpigen.load import ProfileFile, to_plain
from mpigen.load.catalogue import is_builtin
from mpigen.model.devices import WorkerDevices
from mpigen.vocabulary import mpi_operator

SCHEME = "1"
"""The identity scheme: the first part of `mpigen/run-identity` (`1:<sha256>`)."""

DESCRIBING_JOB_FIELDS = {
    "apiVersion": "the profile's format, not the run",
    "kind": "the profile's kind, not the run",
    "description": "free text for people",
    "estimatedHours": "read by `mpigen plan` only",
    "labels": "describes the run; a running job's object gets it at once, its running pods never",
    "annotations": "describes the run; a running job's object gets it at once, its running pods never",
    "objectLabels": "on the job object only: it gets it at once",
    "objectAnnotations": "on the job object only: it gets it at once",
    "naming": "decides whether the name carries the identity at all",
    "allowRerunAfterTtl": "read by validation only",
}
"""Job profile fields that never rename a run, each with the reason. Every other field renames it."""
DESCRIBING_RUN_POLICY = {"suspend": "suspending and resuming from git must act on the same job object"}
SIZE_FIELDS = ("workers", "totalGpus", "gpusPerWorker", "slotsPerWorker")
"""Counted as the size they resolve to (workers, GPUs and slots of each): `totalGpus: 16` is `workers: 2` on
8-GPU nodes."""
RESOLVED_JOB_FIELDS = ("namespace", "backend")
"""Counted as what they resolve to (the profile's, else the cluster's default): writing the default is the same
run, and a cluster whose default changes under a job that leaves it out moves the job."""

CLUSTER_PARTS = {
    "nodePools": "the job's pool (and the launcher's): POOL_PARTS",
    "rails": "the rails the job attaches: RAIL_PARTS",
    "network": "NETWORK_PARTS",
    "scheduling": "SCHEDULING_PARTS, and the queue and topology level the job lands in",
    "jobBackend": "through the job's backend, where the job leaves it out",
    "launcherPool": "where the launcher runs",
    "cpuManagerPolicy": "how ranks are bound to cores",
    "dra": "through what the job's workers claim (`Resolved.claims`), never the block as written",
}
"""Cluster profile fields a run depends on. The others (`name`, `description`, `kubernetesVersion`, `namespaces`,
`existingNamespaces`, `podSecurity`, `gitops`) shape the infra chart or the delivery, never a run's pods; `acceptance`
shapes only the fabric acceptance charts, whose runs are named after their jobs (`naming: stable`)."""
CLUSTER_ELSEWHERE = ("apiVersion", "kind", "name", "description", "kubernetesVersion", "namespaces",
                     "existingNamespaces", "podSecurity", "gitops", "acceptance")
POOL_PARTS = ("name", "hardware", "nodeLabels", "taints")
"""Not `nodes`: a pool that grows or shrinks runs its jobs' pods as before; nor `acceptance` (as the cluster's)."""
RAIL_PARTS = ("name", "nic", "resourceName", "hostInterface")
"""Not `ipam`, `vlan`, `vlanQoS`: the network attachment's (the infra chart's); a running pod keeps its address."""
NETWORK_PARTS = ("provider", "resourcePrefix", "sshPort")
"""What a pod sees: how it gets its rails, the resource names it requests, the port the workers' sshd listens on.
The rest (`devicePluginNamespace`, `cniVersion`, `operatorNamespace`, `numVfs`, `infinibandGuids`) is infra."""
SCHEDULING_PARTS = ("scheduler", "schedulerName", "scheduleTimeoutSeconds")
"""Not `queues` or `priorityClasses`: a quota or a priority value changes admission, not a run's pods; nor
`waitForPodsReady` or `kueueVersion`, which say what the cluster's Kueue runs with (an upgraded Kueue, like a
new mpigen release, never renames a run: a spec it compiles otherwise waits for the run's next start)."""
HARDWARE_ELSEWHERE = ("description",)

FIXED_DEFAULTS: Mapping[tuple[str, ...], Any] = {
    ("job", "mpiImplementation"): mpi_operator.OPENMPI,
    ("job", "openMPIVersion"): 4,
    ("job", "openMPIUcx"): True,
    ("job", "rerun"): 0,
    ("job", "launcherCreationPolicy"): mpi_operator.WAIT_FOR_WORKERS_READY,
    ("job", "runPolicy", "cleanPodPolicy"): mpi_operator.CLEAN_POD_POLICY_RUNNING,
    ("job", "scheduling", "topology", "mode"): "required",
    ("network", "sshPort"): 2222,
    ("scheduling", "scheduler"): "none",
}
"""Scheme 1's defaults: writing one of these values is the same run as leaving it out. Upstream values are named by
their vocabulary's constants (an API never renames a value), never by generator/model/defaults.py, whose choices
may change."""


def hardware_parts(hardware: Mapping[str, ProfileFile], builtins: frozenset[str]) -> dict[str, Any]:
    """What each hardware profile (by name, merged: a `MergedDocument` says what it is made of) adds to the
    identity of a run on it: the user's profile as written, and each of its bases; a built-in by its name.
    Computed once per fleet (`builtins`: the names of the built-in profiles)."""
    return {name: _hardware_part(name, hardware, builtins) for name in hardware}


def run_identity(job: Mapping[str, Any], cluster: Mapping[str, Any], hardware: Mapping[str, Any],
                 resolved: Resolved) -> str:
    """`<SCHEME>:<sha256>` of what the profiles ask the run to do. `hardware`: `hardware_parts`; `resolved`: what
    the job resolved to, each a pure function of the profiles."""
    rails, queue, topology_label, backend = resolved.rails, resolved.queue, resolved.topology_label, resolved.backend
    launcher_pool = cluster.get("launcherPool")
    run = {
        "job": _job_part(job, resolved.implied_ssh_port),
        "size": list(resolved.size),
        "namespace": resolved.namespace,
        "backend": backend,
        "pool": _pool_part(cluster, job["pool"], hardware),
        "launcherPool": _pool_part(cluster, launcher_pool, hardware) if launcher_pool is not None else None,
        "rails": [_rail_part(cluster, name) for name in rails],
        "network": _defaulted("network", _pick(cluster.get("network", {}), NETWORK_PARTS)),
        "scheduling": {**_defaulted("scheduling", _pick(cluster.get("scheduling", {}), SCHEDULING_PARTS)),
                       "queue": queue, "topologyLabel": topology_label},
        "cpuManagerPolicy": cluster.get("cpuManagerPolicy"),
    }
    if resolved.slices is not None:  # only where there are slices: every other run keeps its name
        run["slices"] = list(resolved.slices)
    if resolved.claims is not None:  # only where the workers claim devices: every other run keeps its name
        run["claims"] = list(resolved.claims)
    canonical = json.dumps(run, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{SCHEME}:{hashlib.sha256(canonical.encode('utf-8')).hexdigest()}"


@dataclass(frozen=True)
class Resolved:
    """What a job resolved to that its identity counts instead of how the profile says it."""

    size: tuple[int, int, int]
    """Workers, GPUs of each, slots of each."""
    rails: tuple[str, ...]
    """The rails it attaches, in order."""
    queue: str | None
    topology_label: str | None
    """The node label of its topology level."""
    backend: str
    namespace: str
    """Its namespace: the profile's, else the cluster's first (a job that moves is a new object)."""
    slices: tuple[str, int] | None = None
    """Kueue podset slices (node label, pods a slice): they follow a cluster's `domainNodes` or the hardware's NVLink
    domain, which the other parts do not count; None without slices."""
    claims: tuple[str, ...] | None = None
    """What each worker claims through DRA (`claims_of`): the GPU and NIC DeviceClasses and the ComputeDomain channel;
    None where it claims nothing (a cluster's `dra` that gives the job no claim renames nothing). How the claim pairs
    them follows from the hardware, the rails and the size, which the other parts count."""
    implied_ssh_port: int = mpi_operator.SSHD_PORT
    """The workers' sshd port without `sshPort` (22, or the nodes' network's `network.sshPort`). Where mpigen starts
    sshd itself (no `workerCommand`), `sshPort` saying this port changes nothing, so it counts as left out."""


def claims_of(devices: WorkerDevices | None) -> tuple[str, ...] | None:
    """`Resolved.claims` of a worker's devices."""
    if devices is None or (not devices.pairs and not devices.channel):
        return None
    claims = [f"gpus:{devices.gpu_class}"] if devices.gpus else []
    claims += [f"nics:{devices.nic_class}"] if devices.nic_class is not None and devices.nics else []
    return (*claims, *(["channel"] if devices.channel else []))


def identity_digest(identity: str) -> str:
    """The hex part of an identity."""
    return identity.partition(":")[2]


def _job_part(job: Mapping[str, Any], implied_ssh_port: int) -> dict[str, Any]:
    part = {key: value for key, value in job.items()
            if key not in DESCRIBING_JOB_FIELDS and key not in SIZE_FIELDS and key not in RESOLVED_JOB_FIELDS}
    if "workerCommand" not in part and part.get("sshPort") == implied_ssh_port:
        del part["sshPort"]  # with a workerCommand, `sshPort` adds the readiness probe, whatever its port
    if isinstance(part.get("runPolicy"), dict):
        part["runPolicy"] = {k: v for k, v in part["runPolicy"].items() if k not in DESCRIBING_RUN_POLICY}
    return _defaulted("job", part)


def _pool_part(cluster: Mapping[str, Any], name: str, hardware: Mapping[str, Any]) -> dict[str, Any]:
    pool = next(p for p in cluster["nodePools"] if p["name"] == name)
    part = _pick(pool, POOL_PARTS)
    part["hardware"] = hardware.get(pool["hardware"], {"unknown": pool["hardware"]})
    return part


def _hardware_part(name: str, hardware: Mapping[str, ProfileFile], builtins: frozenset[str]) -> Any:
    """The user's profile as written, each of its bases too; a built-in by its name."""
    document = hardware.get(name)
    if document is None or is_builtin(document):
        return {"builtin": name} if name in builtins else {"unknown": name}
    chain = getattr(document, "chain", ()) or (document,)
    written: list[Any] = []
    for link in chain:
        if is_builtin(link):
            written.append({"builtin": link.data.get("name")})
            break
        written.append({k: v for k, v in to_plain(link.data).items() if k not in HARDWARE_ELSEWHERE})
    return written


def _rail_part(cluster: Mapping[str, Any], name: str) -> dict[str, Any]:
    rail = next(r for r in cluster.get("rails", []) if r["name"] == name)
    return _pick(rail, RAIL_PARTS)


def _pick(data: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {key: data[key] for key in keys if key in data}


def _defaulted(root: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` without the values equal to scheme 1's fixed defaults under `root`."""
    out = dict(data)
    for path, value in FIXED_DEFAULTS.items():
        if path[0] != root:
            continue
        _drop_default(out, path[1:], value)
    return out


def _drop_default(node: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    key = path[0]
    if key not in node:
        return
    if len(path) == 1:
        if node[key] == value and type(node[key]) is type(value):
            del node[key]
        return
    child = node[key]
    if isinstance(child, dict):
        node[key] = dict(child)
        _drop_default(node[key], path[1:], value)
        if not node[key]:
            del node[key]
