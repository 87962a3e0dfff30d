"""Reading perftest's output (generator/verify/perftest.py): an acceptance job's two ranks through one mpirun
(tests/data/verify/perftest-edr-rail0.log, composed in perftest 6.29's formats: SOURCES.yaml), its units, and what
interleaving does to its parameters."""

from __future__ import annotations

import pytest
from conftest import log_text

from mpigen.verify.logtext import log_of
from mpigen.verify.perftest import READ_LAT, WRITE_BW, PerftestRun, parse_perftest


def parsed(text: str) -> PerftestRun:
    return parse_perftest(log_of("test.log", text.encode("utf-8")))


def test_both_ranks_of_an_acceptance_job() -> None:
    run = parsed(log_text("perftest-edr-rail0.log"))
    assert [(rail, rank) for rail, rank, _ in run.rails] == [("rail0", "0"), ("rail0", "1")]
    assert [(p.device, p.link_type) for p in run.of(WRITE_BW)] == [("mlx5_0", "IB"), ("mlx5_0", "IB")]
    assert [(p.device, p.link_type) for p in run.of(READ_LAT)] == [("mlx5_0", "IB"), ("mlx5_0", "IB")]
    assert [(row.size, row.iterations, row.peak_gbits, row.average_gbits) for row in run.bandwidth] == [
        (1048576, 70371, 0.0, 98.39)] * 2  # the server prints the client's result too
    assert len(run.bandwidth_tables) == 2 and len(run.latency_tables) == 1
    (latency,) = run.latency
    assert (latency.size, latency.iterations, latency.t_min, latency.t_typical, latency.t_avg, latency.p99,
            latency.p999) == (2, 1000, 1.93, 1.98, 1.99, 2.10, 4.10)


@pytest.mark.parametrize("unit", ["MiB", "MB"])
def test_without_report_gbits_a_table_is_in_mebibytes(unit: str) -> None:
    """perftest's MiB/sec (`[MB/sec]` in older releases) are 2^20 bytes: linux-rdma/perftest#225's 11728.47 on a
    100 Gb/s card is 98.39 Gb/s."""
    text = log_text("perftest-edr-rail0.log").replace("[Gb/sec]", f"[{unit}/sec]").replace("98.39  ", "11728.47")
    (row, _) = parsed(text).bandwidth
    assert row.average_gbits == pytest.approx(11728.47 * 2**20 * 8 / 1e9) == pytest.approx(98.39, abs=0.01)


def test_interleaved_parameters_go_to_the_tools_in_the_order_they_began() -> None:
    """The server's and the client's titles, then their devices: each tool keeps its own."""
    text = ("                    RDMA_Write BW Test\n                    RDMA_Write BW Test\n"
            " Dual-port       : OFF\t\tDevice         : mlx5_0\n Dual-port       : OFF\t\tDevice         : mlx5_3\n"
            " Link type       : Ethernet\n Link type       : IB\n")
    assert [(p.device, p.link_type) for p in parsed(text).parameters] == [("mlx5_0", "Ethernet"), ("mlx5_3", "IB")]


def test_extra_columns_a_cpu_utilisation_and_a_per_port_table() -> None:
    text = (" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]    CPU_Util[%]\n"
            " 65536      5000             96.11              95.80  \t\t   0.182718\t    12.50\n")
    (row,) = parsed(text).bandwidth
    assert (row.size, row.average_gbits) == (65536, 95.80)


def test_a_log_of_something_else_holds_nothing_of_perftest() -> None:
    assert not parsed(log_text("dranet-h200-all-reduce.log")).found
    assert not parsed("").found
