"""NCCL, UCX and MPI settings that follow from the rails a job's workers attach (NCCL's and UCX's environment variables).

Under the SR-IOV device plugin with the `rdma` CNI in exclusive mode, a pod sees only the RDMA
devices of the VFs it was given, and those VFs carry their own `mlx5_N` names, not the PF's
`mlx5_0`. An exact `NCCL_IB_HCA==mlx5_0:1` list would therefore match nothing and NCCL would fall
back to sockets without a word; the device-family prefix (`mlx5`) matches exactly the attached VFs.
Bootstrap and socket traffic go over the rails' own interfaces, which mpigen names explicitly.
"""

from __future__ import annotations

import re

from mpigen.model import LinkType, MpiImplementation, NetworkProvider, PciDistance, RailAttachment, derive, names, stated
from mpigen.providers import DEFAULT_PROVIDER, PROVIDERS, Provider
from mpigen.vocabulary.multus import CLUSTER_NETWORK_INTERFACE
from mpigen.vocabulary.rdma import ROCE_GID_INDEX

# GPU-NIC distances at which mpigen sets NCCL_NET_GDR_LEVEL to the distance. Farther than PXB, GPUDirect RDMA
# would cross the CPU (PHB, NODE, SYS), which NCCL's own default (PXB) already avoids; and NODE is no level
# NCCL reads.
GDR_LEVELS = (PciDistance.PIX, PciDistance.PXB)


_NUMBERED_HCA = re.compile(r"^([a-z][a-z0-9]*)_[0-9]+$")


def hca_family(hca: str) -> str | None:
    """`mlx5_0` -> `mlx5`: the prefix NCCL matches against the device names it finds.

    Only kernel-numbered names (`<driver>_<n>`) have a family that VFs share; a persistent name
    such as `rocep12s0f0` says nothing about its VFs' names, so no prefix is guessed from it.
    """
    match = _NUMBERED_HCA.match(hca)
    return match.group(1) if match else None


def _exact_hcas(rails: tuple[RailAttachment, ...]) -> str:
    return ",".join(f"{r.nic.hca}:{r.nic.port}" for r in rails)


def rail_host_interface(rail: RailAttachment) -> str:
    """The node's interface of a rail: the profile's `hostInterface`, else the NIC's PF."""
    return rail.rail.host_interface or stated(rail.nic.pf_name)


RAIL_FACTS = ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX", "NCCL_NET_GDR_LEVEL", "NCCL_IB_DISABLE",
              "UCX_NET_DEVICES")
"""The variables `derived_env` takes from the rails a job attaches and their NICs: facts of the nodes' network, which
a hand-written job states for the nodes it was written for (an import leaves them to mpigen)."""


SHARED_MEMORY_BTL = {False: "vader", True: "sm"}
"""OpenMPI's shared-memory transport between ranks of one node, keyed by whether the version is 5 or later:
`vader` in OpenMPI 4, renamed `sm` in 5."""


def derived_env(rails: tuple[RailAttachment, ...], uses_gpus: bool,
                provider: NetworkProvider = DEFAULT_PROVIDER,
                implementation: MpiImplementation = MpiImplementation.OPENMPI, *,
                nic_distance: PciDistance | None = None, openmpi_version: int = 4, slots_per_worker: int = 1,
                ssh_port: int | None = None, operator: bool = True, ucx: bool = True,
                compute_domain: bool | None = None) -> list[tuple[str, str, str]]:
    """(name, value, why) for each NCCL, UCX and MPI variable, in a fixed order.

    `ssh_port`: sshd's port on the workers where it is not 22 (host networking). `operator`: the job's controller
    sets OpenMPI 4's ORTE variables on the launcher itself (mpi-operator for an MPIJob, Trainer's MPI plugin for a
    TrainJob); where none does (a Volcano Job), mpigen sets them. `ucx`: the image's OpenMPI has the UCX component
    (the job's `openMPIUcx`). `compute_domain`: on multi-node NVLink hardware, whether a ComputeDomain's IMEX channel
    backs the workers; None on other hardware.
    """
    env: list[tuple[str, str, str]] = []
    if uses_gpus:
        env += _nccl(rails, PROVIDERS[provider], nic_distance)
        if compute_domain is not None:
            env += _mnnvl(compute_domain)
    if implementation is MpiImplementation.OPENMPI:
        env += _openmpi(rails, openmpi_version, slots_per_worker, ssh_port, operator, ucx,
                        PROVIDERS[provider].host_network)
    elif implementation is MpiImplementation.INTEL:
        env += _intel_mpi(rails)
    if not operator and implementation is not MpiImplementation.OPENMPI:
        variable = "I_MPI_HYDRA_HOST_FILE" if implementation is MpiImplementation.INTEL else "HYDRA_HOST_FILE"
        env.append((variable, names.HOSTFILE_PATH, "the hostfile, for an mpirun that does not name one (mpi-operator "
                    "sets it for an MPIJob; here no controller does)"))
    if rails and not PROVIDERS[provider].exclusive_devices:
        env.append(("UCX_NET_DEVICES", _exact_hcas(rails), "the attached rails' HCAs and ports: the pod sees every "
                    "HCA of the node"))
    return env


def _openmpi(rails: tuple[RailAttachment, ...], version: int, slots: int, ssh_port: int | None,
             operator: bool, ucx: bool, host_network: bool) -> list[tuple[str, str, str]]:
    if rails and ucx:
        env = [("OMPI_MCA_pml", "ucx", "RDMA rails, and the image's OpenMPI has UCX (openMPIUcx, default true): "
                "OpenMPI's point-to-point over UCX")]
    else:
        # OpenMPI without its UCX component aborts in MPI_Init when told `pml=ucx` ("PML ucx cannot be selected"):
        # its point-to-point goes over TCP, on the rails where there are some; NCCL still talks RDMA on its own.
        if rails:
            why = "openMPIUcx: false, the image's OpenMPI has no UCX: MPI over TCP"
            interfaces = ",".join(rail_host_interface(r) if host_network else r.interface for r in rails)
            where = (f"the rails' interfaces on the node: MPI's TCP traffic on the rails ({why})" if host_network else
                     f"the rails' interfaces in the pod: MPI's TCP traffic on the rails ({why})")
        else:
            why, interfaces, where = "no RDMA rails", CLUSTER_NETWORK_INTERFACE, "the cluster network's interface in the pod"
        env = [("OMPI_MCA_pml", "ob1", f"{why}: OpenMPI's TCP transport"),
               ("OMPI_MCA_btl", f"{SHARED_MEMORY_BTL[version >= 5]},tcp,self", f"{why}: TCP between nodes, "
                "and shared memory between the ranks of one worker (`vader` in OpenMPI 4, `sm` in 5); without it "
                "they would talk over TCP loopback"),
               ("OMPI_MCA_btl_tcp_if_include", interfaces, where)]
    if version < 5 and not operator:
        # What mpi-operator appends to an MPIJob's launcher (its newLauncherPodTemplate); no controller does it for a
        # Volcano Job. mpigen's mpirun names the hostfile itself; a profile's own launcherCommand may not.
        env += [("OMPI_MCA_orte_default_hostfile", names.HOSTFILE_PATH, "the hostfile, for an mpirun that does not "
                 "name one (mpi-operator sets it for an MPIJob; here no controller does)"),
                ("OMPI_MCA_orte_keep_fqdn_hostnames", "true", "the hostfile's names are the workers' DNS names, "
                 "kept whole (mpi-operator sets it for an MPIJob; here no controller does)"),
                ("OMPI_MCA_orte_set_default_slots", str(slots), "slots per worker (mpi-operator sets it for an "
                 "MPIJob; here no controller does)"),
                ("OMPI_MCA_plm_rsh_args", derive.OPERATOR_SSH_ARGS, "ssh retries while the workers' names appear "
                 "(mpi-operator's own value for an MPIJob; here no controller sets it)")]
    if version >= 5:
        # OpenMPI 5 runs on PRRTE and ignores the OMPI_MCA_orte_* variables mpi-operator sets (mpi-operator
        # #842): the same settings under their PRTE names (kubeflow/trainer #4029).
        ssh = f"-p {ssh_port} {derive.OPERATOR_SSH_ARGS}" if ssh_port is not None else derive.OPERATOR_SSH_ARGS
        env += [("PRTE_MCA_prte_default_hostfile", names.HOSTFILE_PATH,
                 "OpenMPI 5 ignores OMPI_MCA_orte_default_hostfile: the hostfile under its PRTE name"),
                ("PRTE_MCA_prte_keep_fqdn_hostnames", "true", "OpenMPI 5: the hostfile's names are the workers' "
                 "DNS names, kept whole (OMPI_MCA_orte_keep_fqdn_hostnames under its PRTE name)"),
                ("PRTE_MCA_prte_set_default_slots", str(slots), "OpenMPI 5: slots per worker "
                 "(OMPI_MCA_orte_set_default_slots under its PRTE name)"),
                ("PRTE_MCA_plm_ssh_args", ssh, "OpenMPI 5: ssh options (OMPI_MCA_plm_rsh_args under its PRTE name)"
                 + (f"; sshd listens on port {ssh_port}" if ssh_port is not None else ""))]
    return env


def _mnnvl(compute_domain: bool) -> list[tuple[str, str, str]]:
    """NCCL's multi-node NVLink (NVIDIA/nccl src/mnnvl.cc, init.cc): it needs an IMEX channel
    (/dev/nvidia-caps-imex-channels), which a ComputeDomain's channel claim gives each worker, and the cuMem allocator.
    From NCCL 2.27.3 its default (2: on where the job spans nodes) stops communicator init on a GB200 node without a
    channel; before, it fell back to the network without a word."""
    if not compute_domain:
        return [("NCCL_MNNVL_ENABLE", "0", "multi-node NVLink hardware, but no ComputeDomain backs the workers: no IMEX "
                 "channel, so NCCL's default would stop at init (NCCL 2.27.3 and later); NVLink stays within a node")]
    return [("NCCL_MNNVL_ENABLE", "1", "every worker claims its ComputeDomain's IMEX channel: NVLink between nodes, and "
             "a broken channel stops NCCL at init rather than falling back to the network"),
            ("NCCL_CUMEM_ENABLE", "1", "multi-node NVLink needs NCCL's cuMem allocator (its default where the CUDA "
             "driver supports it; set, so an image that turns it off does not silently lose NVLink between nodes)")]


def _intel_mpi(rails: tuple[RailAttachment, ...]) -> list[tuple[str, str, str]]:
    """Intel MPI 2019 and later: shared memory within a node, libfabric between nodes."""
    env = [("I_MPI_FABRICS", "shm:ofi", "Intel MPI: shared memory within a worker, libfabric between workers")]
    if rails:
        env.append(("FI_PROVIDER", "mlx", "RDMA rails: libfabric's mlx provider (InfiniBand and RoCE through UCX)"))
    else:
        env += [("FI_PROVIDER", "tcp", "no RDMA rails: libfabric over TCP"),
                ("FI_TCP_IFACE", CLUSTER_NETWORK_INTERFACE, "the cluster network's interface in the pod")]
    return env


def _nccl(rails: tuple[RailAttachment, ...], provider: Provider,
          nic_distance: PciDistance | None) -> list[tuple[str, str, str]]:
    if not rails:
        return [
            ("NCCL_IB_DISABLE", "1", "no RDMA rails attached: NCCL uses sockets"),
            ("NCCL_SOCKET_IFNAME", CLUSTER_NETWORK_INTERFACE,
             f"no rails: the cluster network ({CLUSTER_NETWORK_INTERFACE}) carries NCCL"),
        ]
    env = []
    if provider.exclusive_devices:
        families = {hca_family(stated(r.nic.hca)) for r in rails}
        named = {family for family in families if family is not None}
        if named == families:
            env.append(("NCCL_IB_HCA", ",".join(sorted(named)),
                        "the attached rails' HCA family: only their VFs are visible in the pod"))
    else:
        env.append(("NCCL_IB_HCA", f"={_exact_hcas(rails)}",
                    "exactly the attached rails' HCAs and ports: the pod sees every HCA of the node"))
    if provider.host_network:
        interfaces = ",".join(rail_host_interface(r) for r in rails)
        env.append(("NCCL_SOCKET_IFNAME", f"={interfaces}", "the rails' interfaces on the node, exactly"))
    else:
        interfaces = ",".join(r.interface for r in rails)
        env.append(("NCCL_SOCKET_IFNAME", f"={interfaces}", "the rails' interfaces in the pod, exactly"))
    if any(r.nic.link_type is LinkType.ETHERNET for r in rails):
        env.append(("NCCL_IB_GID_INDEX", ROCE_GID_INDEX, "RoCEv2 over IPv4"))
    if nic_distance in GDR_LEVELS:
        env.append(("NCCL_NET_GDR_LEVEL", nic_distance.value, "GPUDirect RDMA between each GPU and the NIC beside "
                    f"it (the hardware's GPU-NIC distance, {nic_distance.value}), never farther"))
    return env
