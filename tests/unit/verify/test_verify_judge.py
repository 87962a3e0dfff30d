"""The judgements of an acceptance job's log (generator/verify/): real logs pass or miss for the reasons each test
states, and every miss says what was expected, the floor's chain where a floor decided it, the rows it judged, and
the likely causes of its kind.

The DRANET logs are judged by the acceptance jobs of tests/data/verify/fleet (pools of one GPU and its 400 Gb/s RoCE
NIC a node, the setups they ran on), under the job's own worker names where a test says so (`as_workers_of`); the
perftest log by the example fleet's rail jobs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import DRANET_B200_PODS, DRANET_H200_WORKERS, as_workers_of, log_text

from mpigen.commands.pipeline import CompileResult
from mpigen.model import Job
from mpigen.verify import Judgement, LogError, LogVerdict, Miss, verify_log
from mpigen.verify.judgement import CAUSES
from mpigen.verify.logtext import log_of


def job_of(result: CompileResult, name: str, cluster: str | None = None) -> Job:
    assert result.fleet is not None
    return next(job for job in result.fleet.acceptance if job.name == name and cluster in (None, job.cluster.name))


def judged(job: Job, text: str) -> LogVerdict:
    return verify_log(job, log_of("test.log", text.encode("utf-8")))


def by_name(verdict: LogVerdict) -> dict[str, Judgement]:
    return {judgement.name: judgement for judgement in verdict.judgements}


def misses(verdict: LogVerdict) -> dict[str, Miss | None]:
    return {judgement.name: judgement.miss for judgement in verdict.judgements if judgement.miss is not None}


def assert_said_whole(judgement: Judgement) -> None:
    """A miss says what was expected and the likely causes of its kind."""
    assert judgement.miss is not None and judgement.expected and judgement.causes == CAUSES[judgement.miss]


def test_the_aligned_b200_all_gather_passes_on_its_job_s_workers(verify_fleet: CompileResult) -> None:
    """One B200 and its NIC under one PCIe root a pod: busbw 43.55 GB/s at 256 MiB to 1 GiB (the mean of each row's
    better busbw: 41.83, 43.67, 45.14 in-place), over the 40 GB/s floor of one 400 Gb/s rail."""
    job = job_of(verify_fleet, "accept-b200-all-gather-pair")
    verdict = judged(job, as_workers_of(log_text("dranet-b200-all-gather.log"), DRANET_B200_PODS, job.name))
    assert verdict.passed, verdict
    assert verdict.tool == "nccl-tests all_gather"
    bandwidth = by_name(verdict)["bus bandwidth"]
    assert bandwidth.summary == "busbw 43.55 GB/s at the largest sizes (256 MiB to 1 GiB): the floor is 40 GB/s"
    assert len(bandwidth.measured) == 3 and bandwidth.floor[-1].startswith("nccl-tests busbw reaches at least: 80%")


def test_the_h200_all_reduce_misses_its_floor(verify_fleet: CompileResult) -> None:
    """DRANET's MPIJob claims the NIC gpu2rdma0 by name and a GPU by count, so nothing puts them under one PCIe root:
    busbw 31.86 GB/s, 64% of the rail's 50 GB/s, where DRANET measured 94% aligned and 59% not."""
    job = job_of(verify_fleet, "accept-h200-all-reduce-pair")
    verdict = judged(job, as_workers_of(log_text("dranet-h200-all-reduce.log"), DRANET_H200_WORKERS, job.name))
    assert misses(verdict) == {"bus bandwidth": Miss.BUS_BANDWIDTH}
    bandwidth = by_name(verdict)["bus bandwidth"]
    assert bandwidth.summary == ("busbw 31.86 GB/s at the largest sizes (2 GiB to 8 GiB): under the floor of 40 GB/s, "
                                 "63.72% of the 50 GB/s the hardware gives")
    assert_said_whole(bandwidth)
    assert bandwidth.floor[0].startswith("the rails a worker drives: 1 x 400 Gb/s RoCE (Ethernet) (rail0): 400 Gb/s "
                                         "= 50 GB/s (hardware h200-slice")
    assert bandwidth.measured[-1] == "8589934592 B: busbw 31.89 out-of-place, 31.88 in-place GB/s (line 63)"
    assert "a GPU far from its NIC" in bandwidth.causes and "NCCL_IB_HCA" in bandwidth.causes


def test_a_log_of_another_job_misses_on_its_hosts(verify_fleet: CompileResult) -> None:
    """DRANET's own MPIJob's log, as it is: its workers are not this job's."""
    job = job_of(verify_fleet, "accept-h200-all-reduce-pair")
    hosts = by_name(judged(job, log_text("dranet-h200-all-reduce.log")))["hosts"]
    assert hosts.miss is Miss.OTHER_JOB
    assert hosts.summary == ("nccl-test-dranet-1gpu-1nic-worker-0, nccl-test-dranet-1gpu-1nic-worker-1: not among the "
                             "workers of job accept-h200-all-reduce-pair")
    assert hosts.expected == ("ranks on the job's workers accept-h200-all-reduce-pair-worker-0 .. "
                              "accept-h200-all-reduce-pair-worker-1")
    assert_said_whole(hosts)


def test_a_log_of_another_collective_misses_on_its_redop(verify_fleet: CompileResult) -> None:
    job = job_of(verify_fleet, "accept-b200-all-reduce-pair")
    verdict = judged(job, as_workers_of(log_text("dranet-b200-all-gather.log"), DRANET_B200_PODS, job.name))
    assert misses(verdict) == {"collective": Miss.OTHER_JOB}
    assert by_name(verdict)["collective"].summary == "redop none: another collective"


def test_wrong_results_miss(verify_fleet: CompileResult) -> None:
    """The H200 log with one stated edit: the 4 GiB row's in-place #wrong 0 -> 3, and `Out of bounds values : 3
    FAILED`, as nccl-tests prints a corrupted run."""
    job = job_of(verify_fleet, "accept-h200-all-reduce-pair")
    text = as_workers_of(log_text("dranet-h200-all-reduce.log"), DRANET_H200_WORKERS, job.name)
    row = ("  4294967296    1073741824     float     sum      -1   134734   31.88   31.88      0   135069   31.80   "
           "31.80      0")
    assert row in text
    text = text.replace(row, row[:-1] + "3").replace("values : 0 OK", "values : 3 FAILED")
    wrong = by_name(judged(job, text))["#wrong"]
    assert wrong.miss is Miss.WRONG_RESULTS
    assert wrong.summary == "1 row(s) with #wrong above 0; Out of bounds values: 3"
    assert wrong.measured == ("4294967296 B: #wrong 0 out-of-place, 3 in-place (line 62)",)
    assert_said_whole(wrong)


def test_unchecked_results_miss(verify_fleet: CompileResult) -> None:
    job = job_of(verify_fleet, "accept-h200-all-reduce-pair")
    text = as_workers_of(log_text("dranet-h200-all-reduce.log"), DRANET_H200_WORKERS, job.name)
    wrong = by_name(judged(job, text.replace("validation: 1", "validation: 0")))["#wrong"]
    assert wrong.miss is Miss.NOT_CHECKED and "-c 1" in wrong.causes


def test_a_truncated_log_misses_and_judges_no_bandwidth(verify_fleet: CompileResult) -> None:
    """The run over two pods of two B200 each that stopped after the table's header; judged as a job of two such
    workers (the fleet's has one GPU a worker: the stated change), only the table is missing."""
    job = job_of(verify_fleet, "accept-b200-all-gather-pair")
    job = replace(job, gpus_per_worker=2, slots_per_worker=2)
    verdict = judged(job, as_workers_of(log_text("dranet-b200-all-gather-cut.log"), DRANET_B200_PODS, job.name))
    assert misses(verdict) == {"table": Miss.TRUNCATED, "#wrong": Miss.TRUNCATED, "collective": Miss.TRUNCATED,
                               "bus bandwidth": Miss.TRUNCATED}
    table = by_name(verdict)["table"]
    assert table.summary == "truncated: the log stops after the table's header (line 18): no row was printed"
    assert_said_whole(table)
    assert by_name(verdict)["bus bandwidth"].summary.startswith("not judged: the log stops after the table's header")


@pytest.mark.parametrize(("edit", "stop"), [
    (lambda text: text.split("   268435456")[0], "the last row is of 128 MiB, where the run goes to 1 GiB"),
    (lambda text: text.replace("# Avg bus bandwidth    : 12.5463\n", ""), "no `# Avg bus bandwidth` line after the table"),
    (lambda text: text.split("# Out of bounds")[0][:-40], "ends in the middle of a row"),
], ids=["stopped-early", "no-average", "cut-mid-row"])
def test_a_log_cut_anywhere_is_truncated(verify_fleet: CompileResult, edit, stop: str) -> None:
    job = job_of(verify_fleet, "accept-b200-all-gather-pair")
    text = edit(as_workers_of(log_text("dranet-b200-all-gather.log"), DRANET_B200_PODS, job.name))
    table = by_name(judged(job, text))["table"]
    assert table.miss is Miss.TRUNCATED and stop in table.summary
    assert table.expected.startswith("every row from minBytes to maxBytes (8 B to 1 GiB), then")
    assert table.measured[0].startswith("the last row: ")


def test_a_single_node_run_mistaken_for_the_pair_misses(verify_fleet: CompileResult) -> None:
    """Two ranks, as the pair job has, but both on one pod (its NVLink busbw, 564 GB/s, would pass any fabric
    floor). The page's excerpt also ends after its last row: truncated too."""
    job = job_of(verify_fleet, "accept-b200-all-gather-pair")
    verdict = judged(job, as_workers_of(log_text("dranet-b200-all-gather-one-node.log"), DRANET_B200_PODS, job.name))
    nodes = by_name(verdict)["nodes"]
    assert nodes.miss is Miss.SINGLE_NODE
    assert nodes.summary == ("2 ranks on 1 host(s) (accept-b200-all-gather-pair-worker-0), where the job has 2 "
                             "workers")
    assert nodes.measured == ("rank 0 on accept-b200-all-gather-pair-worker-0, device 0 (line 9)",
                              "rank 1 on accept-b200-all-gather-pair-worker-0, device 1 (line 10)")
    assert_said_whole(nodes)
    assert by_name(verdict)["ranks"].passed and by_name(verdict)["hosts"].passed


def test_ranks_of_another_count_or_of_a_build_without_mpi_miss(verify_fleet: CompileResult) -> None:
    job = job_of(verify_fleet, "accept-b200-all-gather-pair")
    text = as_workers_of(log_text("dranet-b200-all-gather.log"), DRANET_B200_PODS, job.name)
    twice = by_name(judged(job, text.replace("#  Rank  1 Group  0 Pid   1415", "#  Rank  0 Group  0 Pid   1415")))
    assert twice["ranks"].miss is Miss.RANKS and twice["ranks"].summary == (
        "rank 0 is named 2 times: each process ran a test of its own")
    four = by_name(judged(replace(job, slots_per_worker=2), text))["ranks"]
    assert four.miss is Miss.RANKS and four.expected == "4 ranks: 2 workers of 2 slot(s)"


def test_a_perftest_log_passes_on_its_rail(example: CompileResult) -> None:
    job = job_of(example, "accept-dgx-perftest-rail0", "volcano-lab")
    verdict = judged(job, log_text("perftest-edr-rail0.log"))
    assert verdict.passed and verdict.tool == "perftest", verdict
    found = by_name(verdict)
    assert found["rail bandwidth"].summary == "BW average 98.39 Gb/s: the floor is 90 Gb/s"
    assert found["device"].summary == "Device mlx5_0, Link type IB"
    assert found["latency"].summary.startswith("reported, not judged: 2 B: t_typical 1.98 usec, t_avg 1.99")


def test_a_rail_under_its_floor_misses(example: CompileResult) -> None:
    """The log with one stated edit: ib_write_bw's BW average halved (49.20 Gb/s), what a port trained at half its
    width gives."""
    job = job_of(example, "accept-dgx-perftest-rail0", "volcano-lab")
    bandwidth = by_name(judged(job, log_text("perftest-edr-rail0.log").replace("98.39", "49.20")))["rail bandwidth"]
    assert bandwidth.miss is Miss.RAIL_BANDWIDTH
    assert bandwidth.summary == "BW average 49.20 Gb/s: under the floor of 90 Gb/s, 49.2% of the rail's 100 Gb/s"
    assert bandwidth.floor == (
        "rail rail0 over NIC ib0 (mlx5_0 port 1), InfiniBand EDR: 100 Gb/s (hardware dgx-1, speedGbps of NIC ib0; "
        "InfiniBand 4x data rates: EDR 100, HDR 200, NDR 400, XDR 800 Gb/s (IBTA roadmap))",
        "ib_write_bw reaches at least: 90% of it = 90 Gb/s (NVIDIA's NGC-Ready multi-node certification passes "
        "ib_write_bw at 90% of the port link speed (https://github.com/Mellanox/ngc_multinode_perf/tree/"
        "03f321e2041c8f66d3646ff6324a1a590626ab7e))")
    assert len(bandwidth.measured) == 2
    assert_said_whole(bandwidth)


def test_a_log_of_another_rail_or_device_misses(example: CompileResult) -> None:
    other_rail = by_name(judged(job_of(example, "accept-dgx-perftest-rail1", "volcano-lab"),
                                log_text("perftest-edr-rail0.log")))
    assert other_rail["rail"].miss is Miss.OTHER_JOB and other_rail["rail"].summary == "the log tests rail rail0"
    assert other_rail["device"].miss is Miss.DEVICE  # mlx5_0, where rail1's HCA is mlx5_1
    roce = by_name(judged(job_of(example, "accept-dgx-perftest-rail0", "netapp-lab"),
                          log_text("perftest-edr-rail0.log")))["device"]
    assert roce.miss is Miss.DEVICE and roce.expected == "Device mlx5_0, Link type Ethernet: NIC ib0 of rail rail0"
    assert_said_whole(roce)


def test_a_perftest_log_cut_short_misses(example: CompileResult) -> None:
    job = job_of(example, "accept-dgx-perftest-rail0", "volcano-lab")
    text = log_text("perftest-edr-rail0.log")
    before_results = by_name(judged(job, text.split(" #bytes")[0]))
    assert before_results["ib_write_bw"].miss is Miss.TRUNCATED
    assert before_results["ib_write_bw"].summary == "truncated: ib_write_bw printed its parameters but no result"
    assert before_results["rail bandwidth"].miss is Miss.TRUNCATED
    no_latency = by_name(judged(job, text.split("RDMA_Read")[0]))
    assert no_latency["rail bandwidth"].passed and no_latency["latency"].miss is Miss.TRUNCATED


def test_a_log_of_the_other_tool_is_another_job_s(example: CompileResult, verify_fleet: CompileResult) -> None:
    perftest = judged(job_of(verify_fleet, "accept-h200-all-reduce-pair"), log_text("perftest-edr-rail0.log"))
    assert perftest.tool == "perftest" and misses(perftest) == {"tool": Miss.OTHER_JOB}
    nccl = judged(job_of(example, "accept-dgx-perftest-rail0", "dgx-lab"), log_text("dranet-h200-all-reduce.log"))
    assert nccl.tool == "nccl-tests" and by_name(nccl)["tool"].expected == (
        "perftest output: job accept-dgx-perftest-rail0 runs perftest")


def test_a_log_of_neither_tool_cannot_be_judged(verify_fleet: CompileResult) -> None:
    with pytest.raises(LogError, match=r"test\.log: no nccl-tests output .*; give the log of job "
                                       r"accept-h200-all-reduce-pair's launcher"):
        judged(job_of(verify_fleet, "accept-h200-all-reduce-pair"), "Hello from nccl-gib-test-0\n")


def test_every_kind_of_miss_has_its_causes() -> None:
    assert set(CAUSES) == set(Miss) and all(len(causes) > 40 for causes in CAUSES.values())
