"""GPU-NIC topology checks (generator/validate/topology.py): placement a job asks for, rails chosen away from a
worker's GPUs, and NUMA facts that contradict each other. Each message is checked with its file:line:col."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PROFILES, TRAIN_JOB

from mpigen.commands.pipeline import check_profiles, compile_profiles
from mpigen.support.diagnostics import Diagnostic, Severity

TRAIN = TRAIN_JOB
DGX_1 = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
assert DGX_1.splitlines()[25:27] == ["    numaNode: 0", "    gpus: [0, 1]"]  # lines 26, 27: the first NIC's


def _diagnostics(profiles_copy, edits: dict[str, str | None]) -> tuple[Path, list[Diagnostic]]:
    root = profiles_copy(edits)
    return root, check_profiles([root]).diagnostics


def _shown(root: Path, diagnostics: list[Diagnostic]) -> list[str]:
    return [d.format().replace(f"{root}/", "") for d in diagnostics]


def test_partial_node_workers_on_some_rails_are_warned_that_locality_is_not_guaranteed(profiles_copy):
    root, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + "gpusPerWorker: 2\nworkers: 4\n"
                                                                   "rails: [rail0]\n"})
    assert [d.severity for d in found] == [Severity.WARNING]
    (shown,) = _shown(root, found)
    assert shown.startswith("jobs/train.yaml:10:1: warning: a worker gets 2 of a node's 8 GPUs, chosen by the GPU "
                            "device plugin without regard to rails, so they may sit away from the NICs of rail0")
    assert "leave `rails` out to attach every rail of pool 'dgx'" in shown and "single-numa-node" in shown


def test_partial_node_workers_on_every_rail_are_not_warned(profiles_copy):
    # The default: every rail attached, so NCCL finds the NIC beside whichever GPUs the worker gets.
    _, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + "gpusPerWorker: 2\nworkers: 4\n"})
    assert found == []
    _, listed = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + "gpusPerWorker: 2\nworkers: 4\n"
                                                                     "rails: [rail0, rail1, rail2, rail3]\n"})
    assert listed == []


def test_whole_node_workers_name_the_gpus_left_without_a_nic(profiles_copy):
    root, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + "workers: 2\nrails: [rail0, rail2]\n"})
    (shown,) = _shown(root, found)
    # rail0 is ib0 (GPUs 0, 1) and rail2 is ib2 (GPUs 4, 5): 2, 3, 6 and 7 have no NIC of their own.
    assert shown.startswith("jobs/train.yaml:9:1: warning: GPU(s) 2, 3, 6, 7 have no attached rail beside them "
                            "(rails rail1, rail3 are left out)")


def test_gpu_nic_socket_binding_that_the_hardware_cannot_support_is_refused(profiles_copy):
    root, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + "gpusPerWorker: 4\nworkers: 2\n"
                                                                   "placement: {bindTo: gpu-nic-socket}\n"})
    assert _shown(root, found) == [
        "jobs/train.yaml:10:21: error: ranks cannot be bound to their GPU's NIC socket: a worker has 4 of a node's 8 "
        "GPUs, and the GPU device plugin chooses which, so local rank i need not drive GPU i; state it in the hardware "
        "profile, or choose another bindTo (e.g. `none`)"]


def test_map_by_beside_a_rankfile_is_refused(profiles_copy):
    root, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + "workers: 2\n"
                                                                   "placement:\n  bindTo: gpu-nic-socket\n  mapBy: slot\n"})
    assert _shown(root, found) == ["jobs/train.yaml:11:3: error: `mapBy` has no effect with `bindTo: gpu-nic-socket`: "
                                   "the rankfile places every rank; remove mapBy"]


@pytest.mark.parametrize("key", ["openMPIVersion: 5", "openMPIUcx: false", "placement: {bindTo: core}"])
def test_openmpi_options_on_another_mpi_are_refused(profiles_copy, key):
    root, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + f"workers: 2\nmpiImplementation: Intel\n{key}\n"})
    (shown,) = _shown(root, found)
    name = key.split(":")[0]
    assert shown.startswith(f"jobs/train.yaml:10:1: error: `{name}` is for OpenMPI, and this job uses Intel; remove it")


def test_a_nic_on_a_numa_node_the_node_does_not_have(profiles_copy):
    root, found = _diagnostics(profiles_copy, {"hardware/dgx-1.yaml": DGX_1.replace("    numaNode: 0\n",
                                                                                     "    numaNode: 2\n", 1)})
    assert ("hardware/dgx-1.yaml:26:15: error: NIC 'ib0' is on NUMA node 2, but the node has 2 NUMA node(s): 2 "
            "socket(s) of cpu.numaNodesPerSocket 1; use 0 to 1") in "\n".join(_shown(root, found))


def test_numa_nodes_per_socket_map_a_nics_numa_node_to_its_socket(profiles_copy):
    # AMD EPYC with NPS2: NUMA nodes 0-1 on socket 0, 2-3 on socket 1. GPUs 4-7 (NICs on NUMA node 3) bind to 1.
    text = DGX_1.replace("  sockets: 2\n", "  sockets: 2\n  numaNodesPerSocket: 2\n").replace(
        "    numaNode: 1\n", "    numaNode: 3\n")
    root, found = _diagnostics(profiles_copy, {"hardware/dgx-1.yaml": text})
    assert found == [], _shown(root, found)
    result = compile_profiles([root])
    job = next(j for j in result.fleet.jobs if j.name == "resnet50-dgx")
    assert job.placement.rank_sockets == (0, 0, 0, 0, 1, 1, 1, 1)


def test_a_gpu_beside_nics_on_two_sockets(profiles_copy):
    # ib2 (NUMA node 1) claims GPU 0, which ib0 (NUMA node 0) has.
    text = DGX_1.replace("    gpus: [4, 5]\n", "    gpus: [4, 5, 0]\n")
    root, found = _diagnostics(profiles_copy, {"hardware/dgx-1.yaml": text})
    line = text.splitlines().index("    gpus: [4, 5, 0]") + 1
    assert (f"hardware/dgx-1.yaml:{line}:18: error: GPU 0 is beside NIC 'ib0' on socket 0 and beside NIC 'ib2' on "
            "socket 1; a GPU hangs off one socket") in "\n".join(_shown(root, found))


@pytest.mark.parametrize("flag", ["--map-by", "-bind-to", "--rankfile"])
def test_placement_flags_in_mpirun_args_are_refused(profiles_copy, flag):
    root, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + f"workers: 2\nmpirunArgs: [{flag}, x]\n"})
    assert _shown(root, found) == [f"jobs/train.yaml:9:14: error: `{flag}` in mpirunArgs clashes with the placement "
                                   "flags mpigen gives mpirun; use the job's `placement` (bindTo, mapBy) instead"]
    other_args = "workers: 2\nmpirunArgs: [-mca, orte_base_help_aggregate, '0']\n"  # a parameter mpigen leaves alone
    _, other = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + other_args})
    assert other == []


def test_openmpi_without_ucx_is_compiled_to_tcp_and_its_btl_is_refused_in_mpirun_args(profiles_copy):
    # The job says its image's OpenMPI has no UCX: mpigen sets the btl itself then, so `-mca btl` on the command
    # line would silently win over it (OpenMPI prefers the command line to the environment).
    root, found = _diagnostics(profiles_copy, {"jobs/train.yaml": TRAIN + "workers: 2\nopenMPIUcx: false\n"
                                                                   "mpirunArgs: [-mca, btl, 'tcp,self']\n"})
    (shown,) = _shown(root, found)
    assert shown.startswith("jobs/train.yaml:10:20: error: `-mca btl` in mpirunArgs sets what mpigen already sets: "
                            "OMPI_MCA_btl"), shown
    root = profiles_copy({"jobs/train.yaml": TRAIN + "workers: 2\nopenMPIUcx: false\n"})
    (job,) = [j for j in compile_profiles([root]).fleet.jobs if j.source.endswith("/train.yaml")]
    env = {var.name: var.value for var in job.env}
    assert env["OMPI_MCA_pml"] == "ob1" and env["OMPI_MCA_btl_tcp_if_include"].startswith("rail0")
    assert job.openmpi_ucx is False
