"""GPU-NIC topology: rank placement a job asks for, and rails that may not sit beside a worker's GPUs.

Kubernetes' device plugins hand out GPUs and rail devices independently: a worker with part of a node
gets whichever GPUs are free, with no regard to which NIC sits beside them. mpigen therefore attaches every
rail of the pool by default (NCCL then finds the NIC beside whichever GPUs the worker got) and warns where a
job's own choice of rails leaves GPUs without one.
"""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import Backend, NetworkProvider, defaults, derive
from mpigen.support.diagnostics import Diagnostic, Severity, raises
from mpigen.support.profile_rules import TOPOLOGY
from mpigen.vocabulary import mpi_operator

# OpenMPI's mapping and binding options, which mpigen derives from `placement`.
PLACEMENT_FLAGS = ("--map-by", "-map-by", "--bind-to", "-bind-to", "--rankfile", "-rf", "--rank-by", "-rank-by")


@raises(TOPOLOGY)
def check_hardware_topology(document: ProfileFile, hardware: dict[str, Any]) -> list[Diagnostic]:
    """A NIC's NUMA node is one of the node's sockets, and a GPU beside two NICs has one socket."""
    found: list[Diagnostic] = []
    sockets = hardware.get("cpu", {}).get("sockets")
    numa_nodes = sockets * int(hardware["cpu"].get("numaNodesPerSocket", 1)) if sockets is not None else None
    socket_of: dict[int, tuple[int, str]] = {}
    for i, nic in enumerate(hardware.get("nics", [])):
        numa = nic.get("numaNode")
        if numa is None:
            continue
        if numa_nodes is not None and numa >= numa_nodes:
            found.append(Diagnostic(document.location("nics", i, "numaNode"),
                                    f"NIC '{nic['name']}' is on NUMA node {numa}, but the node has {numa_nodes} NUMA "
                                    f"node(s): {sockets} socket(s) of cpu.numaNodesPerSocket "
                                    f"{hardware['cpu'].get('numaNodesPerSocket', 1)}",
                                    f"use 0 to {numa_nodes - 1} (`cat /sys/class/infiniband/<hca>/device/numa_node`), "
                                    "or set cpu.numaNodesPerSocket (`lscpu`)"))
        for j, gpu in enumerate(nic.get("gpus", [])):
            socket = derive.socket_of_numa_node(hardware, numa)
            earlier = socket_of.setdefault(gpu, (socket, nic["name"]))
            if earlier[0] != socket:
                found.append(Diagnostic(document.location("nics", i, "gpus", j),
                                        f"GPU {gpu} is beside NIC '{earlier[1]}' on socket {earlier[0]} and beside "
                                        f"NIC '{nic['name']}' on socket {socket}",
                                        "a GPU hangs off one socket: correct `gpus` or `numaNode` from "
                                        "`nvidia-smi topo -m`"))
    return found


@raises(TOPOLOGY)
def check_job_topology(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], pool: dict[str, Any],
                       hardware: dict[str, Any], shape: derive.Layout) -> list[Diagnostic]:
    found = _check_mpi_options(document, job, cluster, hardware, shape)
    found += _check_locality(document, job, cluster, pool, hardware, shape)
    return found


MCA_FLAGS = ("-mca", "--mca", "-gmca", "--gmca")


def _mca_set_by_mpigen(job: dict[str, Any], cluster: dict[str, Any], hardware: dict[str, Any]) -> dict[str, str]:
    """OpenMPI's MCA parameters mpigen sets for this job, each with where and why (resolve/nccl.py's OpenMPI
    variables, and the host network's ssh port on mpirun's command line)."""
    version = job.get("openMPIVersion", defaults.OPENMPI_VERSION)
    attached = job.get("rails", [r["name"] for r in derive.pool_rails(cluster, hardware)])
    found = {"pml": "OMPI_MCA_pml, from the job's rails and openMPIUcx (ucx with rails and UCX, else ob1)"}
    if not attached or not job.get("openMPIUcx", defaults.OPENMPI_UCX):
        found["btl"] = "OMPI_MCA_btl (OpenMPI's transports over TCP)"
        found["btl_tcp_if_include"] = "OMPI_MCA_btl_tcp_if_include (the interfaces MPI's TCP traffic takes)"
    backend = derive.backend_of(job, cluster)
    if version < 5 and backend == Backend.VOLCANO_JOB.value:
        for name in ("orte_default_hostfile", "orte_keep_fqdn_hostnames", "orte_set_default_slots",
                     "plm_rsh_args"):
            found[name] = f"OMPI_MCA_{name}, which no controller sets for a Volcano Job"
    own_port = job.get("sshPort", mpi_operator.SSHD_PORT) != mpi_operator.SSHD_PORT
    if version < 5 and own_port:
        found["plm_rsh_args"] = ("`--mca plm_rsh_args` on mpirun's command line (the job's sshPort: OpenMPI aborts "
                                 "when a parameter is listed twice, 'MCA parameters can only be listed once')")
    elif version < 5 and cluster.get("network", {}).get("provider") == NetworkProvider.HOST_NETWORK.value:
        found["plm_rsh_args"] = ("`--mca plm_rsh_args` on mpirun's command line (sshd's port on the nodes' network: "
                                 "OpenMPI aborts when a parameter is listed twice, 'MCA parameters can only be "
                                 "listed once')")
    return found


def _check_mca_args(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any],
                    hardware: dict[str, Any]) -> list[Diagnostic]:
    """`-mca NAME VALUE` in mpirunArgs for a parameter mpigen sets itself: OpenMPI takes the command line's value
    over the environment's without a word, and aborts on one listed twice on it. One place says each value: the
    profile's `env` replaces a derived variable, and `explain` shows which won."""
    if "launcherCommand" in job:
        return []
    args = job.get("mpirunArgs", [])
    ours = _mca_set_by_mpigen(job, cluster, hardware)
    found: list[Diagnostic] = []
    for i, arg in enumerate(args[:-1]):
        name = args[i + 1]
        if arg not in MCA_FLAGS or name not in ours:
            continue
        fix = (("set the ssh port with `sshPort`" if "sshPort" in job else "set the ssh port with the cluster's "
                "`network.sshPort`") if name == "plm_rsh_args" and ours[name].startswith("`--mca") else
               f"set `OMPI_MCA_{name}` in the job's `env` instead: the profile's value replaces mpigen's")
        found.append(Diagnostic(document.location("mpirunArgs", i + 1), f"`{arg} {name}` in mpirunArgs sets "
                                f"what mpigen already sets: {ours[name]}", fix))
    return found


def _check_mpi_options(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], hardware: dict[str, Any],
                       shape: derive.Layout) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    implementation = job.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION)
    if implementation != mpi_operator.OPENMPI:
        for key, hint in (("openMPIVersion", "remove it"), ("openMPIUcx", "remove it"),
                          ("placement", "remove it; Intel MPI pins ranks with I_MPI_PIN_DOMAIN in `env`, MPICH with "
                           "mpirunArgs such as `-bind-to`")):
            if key in job:
                found.append(Diagnostic(document.location(key, at_key=True),
                                        f"`{key}` is for OpenMPI, and this job uses {implementation}", hint))
        return found
    found += _check_mca_args(document, job, cluster, hardware)
    for i, arg in enumerate(job.get("mpirunArgs", [])):
        flag = arg.split("=", 1)[0]
        if flag in PLACEMENT_FLAGS and "launcherCommand" not in job:
            found.append(Diagnostic(document.location("mpirunArgs", i),
                                    f"`{flag}` in mpirunArgs clashes with the placement flags mpigen gives mpirun",
                                    "use the job's `placement` (bindTo, mapBy) instead"))
    placement = job.get("placement", {})
    if placement.get("bindTo") != "gpu-nic-socket":
        return found
    if "mapBy" in placement:
        found.append(Diagnostic(document.location("placement", "mapBy", at_key=True),
                                "`mapBy` has no effect with `bindTo: gpu-nic-socket`: the rankfile places every rank",
                                "remove mapBy"))
    problem = derive.nic_socket_problem(hardware, shape.gpus_per_worker, shape.slots_per_worker,
                                        job.get("resources", {}).get("cpu"), cluster.get("cpuManagerPolicy"))
    if problem:
        found.append(Diagnostic(document.location("placement", "bindTo"),
                                f"ranks cannot be bound to their GPU's NIC socket: {problem}",
                                "state it in the hardware profile, or choose another bindTo (e.g. `none`)"))
    return found


def _check_locality(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], pool: dict[str, Any],
                    hardware: dict[str, Any], shape: derive.Layout) -> list[Diagnostic]:
    """Warn where a job's own rail choice leaves a worker's GPUs without the NIC beside them. Not where the workers
    claim their rails' NICs through DRA: the claim puts the GPUs beside them (validate/devices.py)."""
    if "rails" not in job or not shape.gpus_per_worker or shape.per_node_bound == derive.ONE_PER_NODE_CLAIMED_NICS:
        return []
    usable = derive.pool_rails(cluster, hardware)
    chosen = set(job["rails"])
    if not chosen <= {rail["name"] for rail in usable}:
        return []  # an unknown rail is an error of its own
    left_out = [rail["name"] for rail in usable if rail["name"] not in chosen]
    if not chosen or not left_out:
        return []
    gpus = derive.gpu_count(hardware)
    nics = {nic["name"]: nic for nic in hardware.get("nics", [])}
    attached_nics = [nics[rail["nic"]] for rail in usable if rail["name"] in chosen]
    beside = {gpu for nic in attached_nics for gpu in nic.get("gpus", [])}
    where = document.location("rails", at_key=True)
    if shape.gpus_per_worker < gpus:
        return [Diagnostic(where, f"a worker gets {shape.gpus_per_worker} of a node's {gpus} GPUs, chosen by the GPU "
                           f"device plugin without regard to rails, so they may sit away from the NICs of "
                           f"{', '.join(sorted(chosen))}; traffic between them then crosses the CPU's host bridge or "
                           f"socket link",
                           f"leave `rails` out to attach every rail of pool '{pool['name']}' (NCCL then uses the NIC "
                           "beside whichever GPUs a worker gets), or run with the kubelet's Topology Manager policy "
                           "`single-numa-node`", Severity.WARNING)]
    if not any("gpus" in nic for nic in hardware.get("nics", [])):
        return []
    far = sorted(set(range(gpus)) - beside)
    if not far:
        return []
    return [Diagnostic(where, f"GPU(s) {', '.join(map(str, far))} have no attached rail beside them (rails "
                       f"{', '.join(left_out)} are left out): their traffic crosses the CPU's host bridge or socket link",
                       f"leave `rails` out to attach every rail of pool '{pool['name']}'", Severity.WARNING)]
