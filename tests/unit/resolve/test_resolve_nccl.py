"""NCCL settings derived from the attached rails (generator/resolve/nccl.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mpigen.model import LinkType, MpiImplementation, NetworkProvider, PciDistance
from mpigen.resolve.nccl import derived_env, hca_family


@pytest.mark.parametrize(("hca", "family"), [("mlx5_0", "mlx5"), ("mlx5_17", "mlx5"), ("bnxt_re0", None),
                                             ("rocep12s0f0", None), ("mlx5", None), ("irdma1", None)])
def test_hca_family_only_for_kernel_numbered_names(hca, family):
    # VFs get their own kernel-numbered names (mlx5_N); a persistent PF name says nothing about them.
    assert hca_family(hca) == family


def _rails(example, job_name="resnet50-dgx"):
    return next(j for j in example.fleet.jobs if j.name == job_name).rails


def _env(rails, uses_gpus=True, provider=NetworkProvider.SRIOV_DEVICE_PLUGIN,
         implementation=MpiImplementation.OPENMPI) -> dict[str, str]:
    return {name: value for name, value, _ in derived_env(rails, uses_gpus, provider, implementation)}


def test_infiniband_rails(example):
    # SR-IOV, exclusive mode: the pod sees only its VFs (own mlx5_N names), so the family; OpenMPI over UCX; no
    # UCX_NET_DEVICES, which would have to name the VFs' devices, unknown until the pod starts.
    assert _env(_rails(example)) == {"NCCL_IB_HCA": "mlx5", "NCCL_SOCKET_IFNAME": "=rail0,rail1,rail2,rail3",
                                     "OMPI_MCA_pml": "ucx"}
    assert _env(_rails(example), provider=NetworkProvider.SRIOV_NETWORK_OPERATOR) == _env(_rails(example))


def test_roce_adds_the_gid_index(example):
    rails = tuple(replace(r, nic=replace(r.nic, link_type=LinkType.ETHERNET)) for r in _rails(example))
    assert _env(rails)["NCCL_IB_GID_INDEX"] == "3"
    assert "NCCL_IB_GID_INDEX" not in _env(_rails(example)), "never on InfiniBand"


def test_persistent_hca_names_leave_nccl_ib_hca_unset(example):
    rails = tuple(replace(r, nic=replace(r.nic, hca=f"ibp{i}s0")) for i, r in enumerate(_rails(example)))
    assert [name for name in _env(rails) if name.startswith("NCCL_")] == ["NCCL_SOCKET_IFNAME"]


def test_gpu_job_without_rails_uses_sockets_and_cpu_job_gets_no_nccl(example):
    # OpenMPI's btl list: TCP between nodes, its shared-memory transport (`vader` in 4.x, renamed `sm` in 5.x,
    # OpenMPI 5 release notes) between the ranks of one worker, `self` to a rank itself.
    assert _env(()) == {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0", "OMPI_MCA_pml": "ob1",
                        "OMPI_MCA_btl": "vader,tcp,self", "OMPI_MCA_btl_tcp_if_include": "eth0"}
    assert _env(_rails(example), uses_gpus=False) == {"OMPI_MCA_pml": "ucx"}
    five = {name: value for name, value, _ in derived_env((), False, openmpi_version=5)}
    assert five["OMPI_MCA_btl"] == "sm,tcp,self"  # OpenMPI 5 renamed vader to sm


def test_shared_devices_name_the_hcas_exactly(example):
    # rdma-shared: the pod sees every HCA of the node under its own name, so the exact list (hca:port), for NCCL
    # and UCX alike; the sockets are still the pod's rail interfaces (macvlan/ipoib, named after the rails).
    env = _env(_rails(example), provider=NetworkProvider.RDMA_SHARED)
    assert env == {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1",
                   "NCCL_SOCKET_IFNAME": "=rail0,rail1,rail2,rail3", "OMPI_MCA_pml": "ucx",
                   "UCX_NET_DEVICES": "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"}


def test_host_network_names_the_nodes_interfaces(example):
    rails = _rails(example)
    rails = (replace(rails[0], rail=replace(rails[0].rail, host_interface="enp5s0.3091")), *rails[1:])
    env = _env(rails, provider=NetworkProvider.HOST_NETWORK)
    # The profile's hostInterface for rail0, the NICs' PF names (dgx-1.yaml: ib1..ib3) for the others.
    assert env["NCCL_SOCKET_IFNAME"] == "=enp5s0.3091,ib1,ib2,ib3"
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"


@pytest.mark.parametrize("implementation", [MpiImplementation.INTEL, MpiImplementation.MPICH])
def test_openmpi_variables_only_for_openmpi(example, implementation):
    assert not [n for n in _env(_rails(example), implementation=implementation) if n.startswith("OMPI_")]
    assert not [n for n in _env((), implementation=implementation) if n.startswith("OMPI_")]


# --- GPU-NIC distance ---------------------------------------------------------------------------------------


def test_gdr_level_is_the_hardwares_gpu_nic_distance(example):
    # docs/facts.md section 4: on a DGX-1 every two GPUs share a PCIe switch with one IB card, distance PIX. NCCL then
    # uses GPUDirect RDMA between a GPU and the NIC on its switch, and never across the CPU (PHB/SYS).
    env = derived_env(_rails(example), True, nic_distance=PciDistance.PIX)
    assert ("NCCL_NET_GDR_LEVEL", "PIX") in [(name, value) for name, value, _ in env]
    pxb = derived_env(_rails(example), True, nic_distance=PciDistance.PXB)
    assert dict((n, v) for n, v, _ in pxb)["NCCL_NET_GDR_LEVEL"] == "PXB"


def test_no_gdr_level_where_the_distance_is_unknown_or_nothing_uses_it(example):
    assert "NCCL_NET_GDR_LEVEL" not in _env(_rails(example)), "unknown: NCCL decides from the topology it detects"
    no_rails = derived_env((), True, nic_distance=PciDistance.PIX)
    assert "NCCL_NET_GDR_LEVEL" not in [n for n, _, _ in no_rails], "no rails, no GPUDirect RDMA"
    cpu_job = derived_env(_rails(example), False, nic_distance=PciDistance.PIX)
    assert not [n for n, _, _ in cpu_job if n.startswith("NCCL_")]


def test_example_dgx_job_gets_pix_from_its_hardware(example):
    job = next(j for j in example.fleet.jobs if j.name == "resnet50-dgx")
    assert job.pool.hardware.gpu.nic_distance is PciDistance.PIX
    assert {v.name: v.value for v in job.env}["NCCL_NET_GDR_LEVEL"] == "PIX"


# --- OpenMPI 5 ----------------------------------------------------------------------------------------------


def _openmpi(rails, version, ssh_port=None, slots=8):
    return {name: value for name, value, _ in derived_env(
        rails, True, openmpi_version=version, slots_per_worker=slots, ssh_port=ssh_port)}


def test_openmpi_5_gets_the_operators_orte_settings_under_their_prte_names(example):
    # mpi-operator #842 / kubeflow/trainer #4029: OpenMPI 5 ignores OMPI_MCA_orte_default_hostfile,
    # orte_keep_fqdn_hostnames, orte_set_default_slots and plm_rsh_args; PRRTE reads these instead.
    env = _openmpi(_rails(example), 5)
    assert {n: v for n, v in env.items() if n.startswith("PRTE_")} == {
        "PRTE_MCA_prte_default_hostfile": "/etc/mpigen/hostfile",
        "PRTE_MCA_prte_keep_fqdn_hostnames": "true",
        "PRTE_MCA_prte_set_default_slots": "8",
        "PRTE_MCA_plm_ssh_args": "-o ConnectionAttempts=10",
    }
    assert env["OMPI_MCA_pml"] == "ucx", "the pml is OpenMPI's own, in 5 as in 4"
    assert not [n for n in _openmpi(_rails(example), 4) if n.startswith("PRTE_")], "OpenMPI 4 reads ORTE's"


def test_openmpi_5_under_host_networking_gives_ssh_the_port(example):
    assert _openmpi(_rails(example), 5, ssh_port=2222)["PRTE_MCA_plm_ssh_args"] == "-p 2222 -o ConnectionAttempts=10"


# --- Intel MPI ------------------------------------------------------------------------------------------------


def test_intel_mpi_uses_libfabric_mlx_over_rails_and_tcp_without(example):
    with_rails = _env(_rails(example), implementation=MpiImplementation.INTEL)
    assert (with_rails["I_MPI_FABRICS"], with_rails["FI_PROVIDER"]) == ("shm:ofi", "mlx")
    without = _env((), implementation=MpiImplementation.INTEL)
    assert (without["I_MPI_FABRICS"], without["FI_PROVIDER"], without["FI_TCP_IFACE"]) == ("shm:ofi", "tcp", "eth0")
    mpich = _env(_rails(example), implementation=MpiImplementation.MPICH)
    assert not [n for n in mpich if n.startswith(("I_MPI_", "FI_"))], "MPICH's fabric is chosen when it is built"


@pytest.mark.parametrize("distance", [PciDistance.PHB, PciDistance.NODE, PciDistance.SYS])
def test_no_gdr_level_where_the_nearest_nic_is_across_the_cpu(example, distance):
    # Setting the level to PHB or SYS would turn GPUDirect RDMA on through the CPU, which NCCL's own default (PXB)
    # avoids; NODE is not a level NCCL reads at all.
    env = derived_env(_rails(example), True, nic_distance=distance)
    assert "NCCL_NET_GDR_LEVEL" not in [name for name, _, _ in env]


def test_an_openmpi_without_ucx_runs_mpi_over_tcp_on_the_rails(example):
    # OpenMPI selects a pml by name from OMPI_MCA_pml; one built without its UCX component has no `ucx` pml and
    # MPI_Init aborts ("PML ucx cannot be selected"). So `openMPIUcx: false` gives ob1 with the TCP btl (and shared
    # memory within a worker) over the rails' interfaces; NCCL's own RDMA settings stay as they are.
    rails = _rails(example)
    env = {name: value for name, value, _ in derived_env(rails, True, ucx=False)}
    assert env["OMPI_MCA_pml"] == "ob1"
    assert env["OMPI_MCA_btl"] == "vader,tcp,self"
    assert env["OMPI_MCA_btl_tcp_if_include"] == "rail0,rail1,rail2,rail3"
    assert env["NCCL_IB_HCA"] == "mlx5", "NCCL keeps RDMA: it does not go through OpenMPI's transports"
    assert {name: value for name, value, _ in derived_env(rails, True)}["OMPI_MCA_pml"] == "ucx", "the default"
    on_nodes = tuple(replace(r, rail=replace(r.rail, host_interface=f"enp{i}s0.309{i}")) for i, r in enumerate(rails))
    host = {name: value for name, value, _ in derived_env(on_nodes, True, NetworkProvider.HOST_NETWORK, ucx=False)}
    assert host["OMPI_MCA_btl_tcp_if_include"] == "enp0s0.3090,enp1s0.3091,enp2s0.3092,enp3s0.3093", \
        "on the nodes' network, the nodes' own interfaces of the rails"


def test_multi_node_nvlink_is_on_only_where_a_compute_domain_backs_it():
    """NVIDIA/nccl src/mnnvl.cc (at 5067397c, and since v2.27.3): NCCL_MNNVL_ENABLE 1 checks always and fails if the
    IMEX channel is not working; its default 2 fails the same on a GB200 node without a channel (2.25-2.26 fell back
    quietly); 0 turns it off. MNNVL needs the cuMem allocator (NCCL_CUMEM_ENABLE, src/mnnvl.cc:15)."""
    def mnnvl(compute_domain: bool | None) -> dict[str, str]:
        return {name: value for name, value, _ in derived_env((), True, compute_domain=compute_domain)
                if name in ("NCCL_MNNVL_ENABLE", "NCCL_CUMEM_ENABLE")}

    assert mnnvl(True) == {"NCCL_MNNVL_ENABLE": "1", "NCCL_CUMEM_ENABLE": "1"}
    assert mnnvl(False) == {"NCCL_MNNVL_ENABLE": "0"}
    assert mnnvl(None) == {}
    assert not [name for name, _, _ in derived_env((), False, compute_domain=True) if "MNNVL" in name]  # no GPUs
