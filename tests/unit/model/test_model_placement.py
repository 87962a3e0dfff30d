"""Rank placement (generator/model/placement.py, derive.nic_socket_problem): when ranks are bound to the
socket of their GPU's NIC, and what every other job gets."""

from __future__ import annotations

import re

import pytest
from conftest import PROFILES, TRAIN_JOB

from mpigen.commands.pipeline import compile_profiles
from mpigen.model import BindTo, Job, derive

TRAIN = TRAIN_JOB


def _job(profiles_copy, extra: str, name: str = "train", edits: dict[str, str | None] | None = None) -> Job:
    result = compile_profiles([profiles_copy({**(edits or {}), f"jobs/{name}.yaml": TRAIN + extra})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return next(job for job in result.fleet.jobs if job.name == name)


def test_whole_dgx_1_nodes_bind_each_rank_to_its_gpus_nic_socket(example):
    # profiles/hardware/dgx-1.yaml: ib0 (GPUs 0,1) and ib1 (2,3) on NUMA node 0, ib2 (4,5) and ib3 (6,7) on 1;
    # 20 cores a socket (Xeon E5-2698 v4).
    job = next(j for j in example.fleet.jobs if j.name == "resnet50-dgx")
    assert job.placement.bind_to is BindTo.GPU_NIC_SOCKET and job.placement.rankfile
    assert job.placement.rank_sockets == (0, 0, 0, 0, 1, 1, 1, 1)
    assert job.placement.cores_per_socket == 20
    assert job.placement.map_by is None, "the rankfile places every rank"


def test_part_of_a_node_is_not_bound_the_gpu_device_plugin_picks_the_gpus(profiles_copy):
    job = _job(profiles_copy, "gpusPerWorker: 2\nworkers: 4\n")
    assert (job.placement.bind_to, job.placement.map_by) == (BindTo.NONE, "slot")
    assert not job.placement.rankfile


def test_more_ranks_than_gpus_is_not_bound_to_gpus(profiles_copy):
    job = _job(profiles_copy, "workers: 2\nslotsPerWorker: 16\n")
    assert (job.placement.bind_to, job.placement.map_by) == (BindTo.NONE, "slot")


def test_unknown_topology_keeps_the_netapp_seeds_map_by_slot_bind_to_none(profiles_copy):
    # The built-in dgx-1 does not know which GPUs sit beside which NIC.
    dgx = (profiles_copy().joinpath("hardware", "dgx-1.yaml")).read_text(encoding="utf-8")
    unknown = "".join(line + "\n" for line in dgx.splitlines() if not line.startswith("    gpus:"))
    job = _job(profiles_copy, "workers: 2\n", edits={"hardware/dgx-1.yaml": unknown})
    assert (job.placement.bind_to, job.placement.map_by) == (BindTo.NONE, "slot")


def test_the_job_can_choose_its_own_binding(profiles_copy):
    job = _job(profiles_copy, "workers: 2\nplacement: {bindTo: socket, mapBy: numa}\n")
    assert (job.placement.bind_to, job.placement.map_by, job.placement.rankfile) == (BindTo.SOCKET, "numa", False)
    default_map = _job(profiles_copy, "workers: 2\nplacement: {bindTo: core}\n")
    assert (default_map.placement.bind_to, default_map.placement.map_by) == (BindTo.CORE, "slot")


def test_a_map_by_of_the_jobs_own_turns_the_rankfile_off(profiles_copy):
    job = _job(profiles_copy, "workers: 2\nplacement: {mapBy: socket}\n")
    assert (job.placement.bind_to, job.placement.map_by) == (BindTo.NONE, "socket")


def test_cpu_jobs_keep_openmpis_own_binding(example):
    job = next(j for j in example.fleet.jobs if j.name == "pi")
    assert (job.placement.bind_to, job.placement.map_by) == (None, None)


@pytest.mark.parametrize("implementation", ["Intel", "MPICH"])
def test_intel_and_mpich_place_ranks_themselves(profiles_copy, implementation):
    job = _job(profiles_copy, f"workers: 2\nmpiImplementation: {implementation}\n")
    assert (job.placement.bind_to, job.placement.map_by) == (None, None)
    assert job.openmpi_version is None


def test_gpu_sockets_need_every_gpu_named_by_a_nic_with_a_numa_node():
    base = {"name": "h", "gpu": {"count": 4}, "cpu": {"sockets": 2, "coresPerSocket": 8}}
    full = {**base, "nics": [{"name": "a", "numaNode": 0, "gpus": [0, 1]}, {"name": "b", "numaNode": 1, "gpus": [2, 3]}]}
    assert derive.gpu_sockets(full) == [0, 0, 1, 1]
    assert derive.nic_socket_problem(full, 4, 4) == ""
    missing_gpu = {**base, "nics": [{"name": "a", "numaNode": 0, "gpus": [0, 1]}, {"name": "b", "numaNode": 1,
                                                                                 "gpus": [2]}]}
    assert derive.gpu_sockets(missing_gpu) is None
    no_numa = {**base, "nics": [{"name": "a", "gpus": [0, 1, 2, 3]}]}
    assert derive.gpu_sockets(no_numa) is None
    assert "cpu.coresPerSocket" in derive.nic_socket_problem({**full, "cpu": {"sockets": 2}}, 4, 4)
    assert "2 of a node's 4 GPUs" in derive.nic_socket_problem(full, 2, 2)
    assert "not one rank per GPU" in derive.nic_socket_problem(full, 4, 8)


def test_a_worker_asking_for_cpus_gets_a_rankfile_only_where_the_cluster_says_policy_none(profiles_copy):
    # Under the static policy a Guaranteed pod with whole CPUs runs on exactly the cores it got: a rankfile naming
    # socket 0's cores 0-19 could name cores the container does not have, and OpenMPI would refuse to start.
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    assert "cpuManagerPolicy: none" in cluster
    asks = "workers: 2\nresources: {cpu: \"32\", memory: 64Gi}\n"
    for policy in ("cpuManagerPolicy: static", ""):  # static, and not stated
        edited = re.sub(r"cpuManagerPolicy: none[^\n]*\n", policy + ("\n" if policy else ""), cluster)
        assert edited != cluster
        confined = _job(profiles_copy, asks, edits={"clusters/dgx-lab.yaml": edited})
        assert (confined.placement.bind_to, confined.placement.map_by) == (BindTo.NONE, "slot"), policy
        free = _job(profiles_copy, "workers: 2\nresources: {memory: 64Gi}\n", edits={"clusters/dgx-lab.yaml": edited})
        assert free.placement.rankfile, "no CPU request: the worker may run on every core"
    assert _job(profiles_copy, asks).placement.rankfile, "policy none, stated: CPU quota only, every core"
