"""Floors derived from the hardware (generator/model/floors.py), worked by hand from the example fleet's hardware:
a DGX-1's four EDR rails, a DGX H100's eight NDR rails, a DGX-1's ports as 100 Gb/s RoCE; then NVLink bounding a floor,
and the reasons no floor can be derived."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mpigen.commands.pipeline import CompileResult
from mpigen.model import EnvVar, Job
from mpigen.model.floors import Floor, NoFloor, bus_bandwidth_floor, figure, rail_floor


def acceptance_job(example: CompileResult, cluster: str, name: str) -> Job:
    assert example.fleet is not None
    return next(job for job in example.fleet.acceptance if job.cluster.name == cluster and job.name == name)


def floor_of(found: Floor | NoFloor) -> Floor:
    assert isinstance(found, Floor), found
    return found


def test_a_dgx1_pair_over_four_edr_rails(example: CompileResult) -> None:
    """4 rails x 100 Gb/s = 400 Gb/s = 50 GB/s; x 0.80 = 40 GB/s. V100's NVLink 2 gives 150 GB/s each way, x 0.80 =
    120 GB/s: higher, no bound. Each rail: 100 Gb/s x 0.90 = 90 Gb/s."""
    job = acceptance_job(example, "dgx-lab", "accept-dgx-all-reduce-pair")
    floor = floor_of(bus_bandwidth_floor(job))
    assert (floor.value, floor.unit, floor.line, floor.text) == (40.0, "GB/s", 50.0, "40 GB/s")
    steps = [str(step) for step in floor.chain]
    assert steps[0].startswith("the rails a worker drives: 4 x 100 Gb/s InfiniBand EDR (rail0, rail1, rail2, rail3): "
                               "400 Gb/s = 50 GB/s (hardware dgx-1, speedGbps of NIC ib0, ib1, ib2, ib3; ")
    assert "EDR 100" in steps[0]
    assert steps[1].startswith("nccl-tests busbw reaches at least: 80% of it = 40 GB/s (")
    assert steps[2].startswith("NVLink 2 of Tesla-V100-SXM2-16GB, 150 GB/s each way, at the same share: 120 GB/s, "
                               "higher: no bound (")
    rail = floor_of(rail_floor(job.rails[0], job.pool.hardware.name))
    assert (rail.value, rail.unit, rail.text) == (90.0, "Gb/s", "90 Gb/s")
    assert str(rail.chain[0]) == (
        "rail rail0 over NIC ib0 (mlx5_0 port 1), InfiniBand EDR: 100 Gb/s (hardware dgx-1, speedGbps of NIC ib0; "
        "InfiniBand 4x data rates: EDR 100, HDR 200, NDR 400, XDR 800 Gb/s (IBTA roadmap))")
    assert "90% of it = 90 Gb/s" in str(rail.chain[1]) and "ngc_multinode_perf" in str(rail.chain[1])


def test_all_gather_is_bounded_by_the_rails_alike_and_alltoall_by_one_gpu_s_share(example: CompileResult) -> None:
    """all_gather's ring crosses the rails as all_reduce's does: 40 GB/s. alltoall sends each GPU's share on its own:
    50 GB/s / 8 GPUs = 6.25 GB/s, x 0.80 = 5 GB/s."""
    job = acceptance_job(example, "dgx-lab", "accept-dgx-all-gather-pair")
    assert floor_of(bus_bandwidth_floor(job)).value == 40.0
    alltoall = floor_of(bus_bandwidth_floor(job, "alltoall"))
    assert (alltoall.value, alltoall.line) == (5.0, 6.25)
    assert "alltoall: one GPU's share of them: / 8 GPUs = 6.25 GB/s" in alltoall.reasons


def test_a_dgx_h100_pair_over_eight_ndr_rails(example: CompileResult) -> None:
    """8 x 400 Gb/s = 3200 Gb/s = 400 GB/s; x 0.80 = 320 GB/s; H100's NVLink 4: 450 GB/s each way, x 0.80 = 360:
    higher. Each rail: 400 x 0.90 = 360 Gb/s."""
    job = acceptance_job(example, "h100-dra", "accept-h100-all-reduce-pair")
    floor = floor_of(bus_bandwidth_floor(job))
    assert (floor.value, floor.line) == (320.0, 400.0)
    assert "8 x 400 Gb/s InfiniBand NDR" in floor.reasons and "3200 Gb/s = 400 GB/s" in floor.reasons
    assert "NVLink 4 of NVIDIA-H100-80GB-HBM3, 450 GB/s each way, at the same share: 360 GB/s, higher" in floor.reasons
    rail_job = acceptance_job(example, "h100-dra", "accept-h100-perftest-rail5")
    assert floor_of(rail_floor(rail_job.rails[0], rail_job.pool.hardware.name)).value == 360.0


def test_a_roce_rail_runs_at_its_port_speed(example: CompileResult) -> None:
    """The DGX-1's ports in Ethernet mode (hardware dgx-1-roce): 100 Gb/s each, x 0.90 = 90 Gb/s; four of them
    carry nccl-tests as four EDR rails do: 40 GB/s."""
    job = acceptance_job(example, "roce-lab", "accept-dgx-perftest-rail2")
    rail = floor_of(rail_floor(job.rails[0], job.pool.hardware.name))
    assert rail.value == 90.0
    assert str(rail.chain[0]) == ("rail rail2 over NIC ib2 (mlx5_2 port 1), RoCE (Ethernet): 100 Gb/s (hardware "
                                  "dgx-1-roce, speedGbps of NIC ib2; RoCE runs at the Ethernet port's speed)")
    pair = acceptance_job(example, "roce-lab", "accept-dgx-all-reduce-pair")
    assert floor_of(bus_bandwidth_floor(pair)).value == 40.0


def test_nvlink_bounds_the_floor_where_it_is_lower(example: CompileResult) -> None:
    """The DGX-1's rails at XDR's 800 Gb/s: 3200 Gb/s = 400 GB/s x 0.80 = 320 GB/s, above what V100's NVLink lets
    a GPU send (150 GB/s x 0.80 = 120): the floor is NVLink's."""
    job = acceptance_job(example, "dgx-lab", "accept-dgx-all-reduce-pair")
    faster = tuple(replace(a, nic=replace(a.nic, speed_gbps=800)) for a in job.rails)
    floor = floor_of(bus_bandwidth_floor(replace(job, rails=faster)))
    assert (floor.value, floor.line) == (120.0, 150.0)
    assert "4 x 800 Gb/s InfiniBand XDR" in floor.reasons and "120 GB/s, lower: the floor" in floor.reasons


def test_a_worker_of_fewer_gpus_than_rails_drives_one_rail_a_gpu(example: CompileResult) -> None:
    job = acceptance_job(example, "dgx-lab", "accept-dgx-all-reduce-pair")
    floor = floor_of(bus_bandwidth_floor(replace(job, gpus_per_worker=1, slots_per_worker=1)))
    assert (floor.value, floor.line) == (10.0, 12.5)
    assert "of the job's rails, at most one a GPU: 1 of 4" in floor.reasons


def test_a_pcie_card_or_an_unknown_model_has_no_nvlink_bound(example: CompileResult) -> None:
    job = acceptance_job(example, "dgx-lab", "accept-dgx-all-reduce-pair")
    for model, words in (("NVIDIA-H100-PCIe", "GPU model NVIDIA-H100-PCIe: no NVLink figure"),
                         ("", "GPU model (not stated): no NVLink figure")):
        gpu = replace(job.pool.hardware.gpu, model=model)
        hardware = replace(job.pool.hardware, gpu=gpu)
        floor = floor_of(bus_bandwidth_floor(replace(job, pool=replace(job.pool, hardware=hardware))))
        assert floor.value == 40.0 and words in floor.reasons


def test_multi_node_nvlink_says_the_floor_is_the_rails(example: CompileResult) -> None:
    job = acceptance_job(example, "gb200-rack", "accept-gb200-all-reduce-pair")
    assert job.devices is not None and job.devices.channel
    floor = floor_of(bus_bandwidth_floor(job))
    assert floor.value == 160.0  # 4 x 400 Gb/s = 200 GB/s x 0.80
    assert "NCCL crosses nodes over NVLink here" in floor.reasons


@pytest.mark.parametrize(("change", "reason"), [
    (lambda job: replace(job, rails=tuple(replace(a, nic=replace(a.nic, speed_gbps=None)) for a in job.rails)),
     "NIC ib0 of hardware dgx-1 (rail rail0) states no speedGbps"),
    (lambda job: replace(job, env=(*job.env, EnvVar("NCCL_IB_DISABLE", "1", "test"))),
     "NCCL_IB_DISABLE=1: NCCL crosses nodes over sockets"),
    (lambda job: replace(job, worker_count=1), "one worker: nothing crosses nodes"),
    (lambda job: replace(job, workers_per_node=2, worker_spread=None), "up to 2 of its workers may share a node"),
    (lambda job: replace(job, rails=()), "no rails: NCCL crosses nodes over the cluster network"),
    (lambda job: replace(job, gpus_per_worker=0), "it runs no GPUs"),
], ids=["no-speed", "sockets", "one-worker", "shared-nodes", "no-rails", "no-gpus"])
def test_no_floor_where_none_can_be_derived_says_why(example: CompileResult, change, reason: str) -> None:
    job = change(acceptance_job(example, "dgx-lab", "accept-dgx-all-reduce-pair"))
    found = bus_bandwidth_floor(job)
    assert isinstance(found, NoFloor) and reason in found.reason, found


def test_a_rail_without_a_speed_has_no_floor(example: CompileResult) -> None:
    job = acceptance_job(example, "dgx-lab", "accept-dgx-perftest-rail0")
    unknown = replace(job.rails[0], nic=replace(job.rails[0].nic, speed_gbps=None))
    found = rail_floor(unknown, "dgx-1")
    assert isinstance(found, NoFloor) and "add it to the hardware profile" in found.reason


def test_figures_are_said_without_trailing_zeros() -> None:
    assert [figure(v) for v in (40.0, 6.25, 100 / 3, 0.0, 90.0)] == ["40", "6.25", "33.33", "0", "90"]
