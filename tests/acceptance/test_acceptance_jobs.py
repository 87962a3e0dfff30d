"""The fabric acceptance jobs (generator/model/acceptance.py) are the real jobs of their pool in every setting that
matters to the fabric: a green acceptance run must prove something about the real jobs. For each example cluster
with a real GPU job, its two-node nccl-tests job is compared with that job, setting by setting, as compiled: the
derived NCCL / UCX / MPI variables, the rails, what a worker requests or claims, where its pods go, what they may do
(capabilities), the rankfile's binding and the gang's queue. Then the acceptance charts' own promises: never synced
by themselves, named after the job, perftest pinned to its one rail.
"""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.commands.pipeline import CompileResult
from mpigen.manifests import build_marked_job, job_chart_ref, pods_object
from mpigen.manifests.job import pod_specs
from mpigen.model import Job
from mpigen.model.acceptance import PERFTEST_SERVER_VARIABLE

# (cluster, the real job on the pool its acceptance jobs prove): each a whole-node GPU job over every rail of its pool.
REAL_JOBS = [("dgx-lab", "resnet50-dgx"), ("dgx-pod", "vision-resnet50"), ("h100-dra", "llm-pretrain"),
             ("gb200-rack", "mnnvl-allreduce"), ("volcano-lab", "volcano-allreduce"), ("netapp-lab", "netapp-resnet50")]


def _job(jobs: tuple[Job, ...], cluster: str, name: str) -> Job:
    (found,) = [job for job in jobs if job.cluster.name == cluster and job.name == name]
    return found


def _workers(job: Job) -> dict[str, Any]:
    """The worker pod spec as compiled (the last pod spec of the job object: the launcher's comes first)."""
    return pod_specs(pods_object(job, build_marked_job(job, job_chart_ref(job))))[-1]


def _said_by_profile(job: Job) -> set[str]:
    """Variables the real job's profile sets itself (`env`): its own choices, not the pool's."""
    return {var.name for var in job.env if var.origin.startswith(job.source) and "env" in var.origin}


@pytest.mark.parametrize(("cluster", "real"), REAL_JOBS, ids=[cluster for cluster, _ in REAL_JOBS])
def test_a_pair_run_has_the_settings_of_a_real_job_of_its_pool(example: CompileResult, cluster: str, real: str) -> None:
    job = _job(example.fleet.jobs, cluster, real)
    pool = job.pool.name
    accept = _job(example.fleet.acceptance, cluster, f"accept-{pool}-all-reduce-pair")
    assert accept.acceptance is not None and accept.acceptance.collective is not None
    # The model: shape of a worker, rails, placement, claims, backend, MPI.
    assert [a.rail.name for a in accept.rails] == [a.rail.name for a in job.rails] and job.rails
    assert (accept.gpus_per_worker, accept.slots_per_worker) == (job.gpus_per_worker, job.slots_per_worker)
    assert accept.devices == job.devices
    assert accept.backend is job.backend and accept.mpi_implementation is job.mpi_implementation
    if job.namespace == accept.namespace:
        assert accept.scheduling.queue == job.scheduling.queue
    own = _said_by_profile(job)
    derived = {var.name: var.value for var in accept.env}
    assert derived, "an acceptance job gets the derived variables"
    assert {name: value for name, value in derived.items() if name not in own} == {
        var.name: var.value for var in job.env if var.name in derived and var.name not in own}
    assert any(name.startswith("NCCL_") for name in derived)
    if not own:
        assert accept.placement == job.placement
    # The compiled worker pod: what it requests or claims, where it may run, what it may do.
    mine, theirs = _workers(accept), _workers(job)
    for key in ("nodeSelector", "tolerations", "hostNetwork", "dnsPolicy"):
        assert mine.get(key) == theirs.get(key), key
    (container,), (real_container,) = mine["containers"], theirs["containers"]
    assert container["resources"].get("limits", {}).keys() - {"cpu", "memory"} == \
        real_container["resources"].get("limits", {}).keys() - {"cpu", "memory"}
    for resource, amount in real_container["resources"].get("limits", {}).items():
        if resource not in ("cpu", "memory"):
            assert container["resources"]["limits"][resource] == amount, resource
    assert container.get("resources", {}).get("claims") == real_container.get("resources", {}).get("claims")
    assert container.get("securityContext") == real_container.get("securityContext")
    assert [c["name"] for c in mine.get("resourceClaims", [])] == [c["name"] for c in theirs.get("resourceClaims", [])]


def test_every_gpu_pool_of_two_nodes_or_more_gets_its_runs(example: CompileResult) -> None:
    """By the rule, by hand: per collective a pair run and (over two nodes) a pool run; a perftest run per rail."""
    expected = {
        "dgx-lab": ["all-gather-pair", "all-gather-pool", "all-reduce-pair", "all-reduce-pool"] + [
            f"perftest-rail{n}" for n in range(4)],
        "dgx-pod": ["all-reduce-pair", "all-reduce-pool"] + [f"perftest-rail{n}" for n in range(4)],
        "roce-lab": ["all-reduce-pair"] + [f"perftest-rail{n}" for n in range(4)],  # two nodes: the pair is the pool
        "netapp-lab": ["all-reduce-pair"] + [f"perftest-rail{n}" for n in range(4)],
        "volcano-lab": ["all-reduce-pair", "all-reduce-pool"] + [f"perftest-rail{n}" for n in range(4)],
        "h100-dra": ["all-reduce-pair", "all-reduce-pool"] + [f"perftest-rail{n}" for n in range(8)],
        "gb200-rack": ["all-reduce-pair", "all-reduce-pool"] + [f"perftest-rail{n}" for n in range(4)],
    }
    found: dict[str, list[str]] = {}
    for job in example.fleet.acceptance:
        found.setdefault(job.cluster.name, []).append(job.name.removeprefix(f"accept-{job.pool.name}-"))
    assert found == expected
    sizes = {(job.cluster.name, job.name): job.worker_count for job in example.fleet.acceptance}
    assert sizes[("dgx-pod", "accept-dgx-all-reduce-pool")] == 8  # every node of the pool
    assert sizes[("volcano-lab", "accept-dgx-all-reduce-pool")] == 4  # maxNodes: its queue holds four nodes
    assert sizes[("gb200-rack", "accept-gb200-all-reduce-pool")] == 18
    # No acceptance job is counted as a real one (plan, quotas, capacity read fleet.jobs).
    assert not {job.name for job in example.fleet.jobs} & {job.name for job in example.fleet.acceptance}


def test_a_rail_run_takes_its_one_rail_and_names_its_device(example: CompileResult) -> None:
    # dgx-lab, sriov-device-plugin: the pod sees only its VF, whose mlx5_N name the kernel numbers.
    lab = _job(example.fleet.acceptance, "dgx-lab", "accept-dgx-perftest-rail2")
    assert [a.rail.name for a in lab.rails] == ["rail2"] and lab.worker_count == 2 and lab.slots_per_worker == 1
    assert lab.acceptance is not None and lab.acceptance.rail_test is not None
    assert lab.acceptance.rail_test.device is None and lab.acceptance.rail_test.gid_index is None
    (container,) = _workers(lab)["containers"]
    assert container["resources"]["limits"]["nvidia.com/rdma_rail2"] == 1
    assert not any(key.startswith("nvidia.com/rdma_rail") and key != "nvidia.com/rdma_rail2"
                   for key in container["resources"]["limits"])
    env = {var.name: var.value for var in lab.env}
    assert env[PERFTEST_SERVER_VARIABLE] == "accept-dgx-perftest-rail2-worker-0.accept-dgx-perftest-rail2.ml-training.svc"
    # netapp-lab, host networking: the pod sees every HCA of the node, so perftest opens the rail's by name (RoCE).
    netapp = _job(example.fleet.acceptance, "netapp-lab", "accept-dgx-perftest-rail1")
    assert netapp.acceptance is not None and netapp.acceptance.rail_test is not None
    assert (netapp.acceptance.rail_test.device, netapp.acceptance.rail_test.gid_index) == ("mlx5_1", "3")
    assert "ib_write_bw -d mlx5_1 -i 1 -x 3 -F --report_gbits" in netapp.program[2]
    # h100-dra: the worker claims the rail's NIC with the GPU beside it, one worker a node.
    dra = _job(example.fleet.acceptance, "h100-dra", "accept-h100-perftest-rail5")
    assert dra.devices is not None and dra.gpus_per_worker == 1
    assert [(pair.rail, pair.gpus, pair.nic) for pair in dra.devices.pairs] == [("rail5", 1, "nic5")]


def test_acceptance_objects_are_named_after_their_jobs(example: CompileResult) -> None:
    for job in example.fleet.acceptance:
        obj = pods_object(job, build_marked_job(job, job_chart_ref(job)))
        if job.backend.value != "trainjob":
            assert obj["metadata"]["name"] == job.name
