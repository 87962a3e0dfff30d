"""Reading nccl-tests' output (generator/verify/nccl_tests.py): DRANET's real logs (tests/data/verify/SOURCES.yaml), and
what today's nccl-tests prints besides, written here with the printf formats of NVIDIA/nccl-tests src/util.cu at
a0b82b2260cf5152b9f8c061bbf7eaf0ba096432 (2.19.6): the version and `Collective test` lines, per-iteration columns
(-I 1), timestamps (-Z 1); and what kubectl and mpirun do to a log."""

from __future__ import annotations

from conftest import log_text

from mpigen.verify.logtext import log_of
from mpigen.verify.nccl_tests import NcclTestsRun, parse_nccl_tests


def parsed(text: str) -> NcclTestsRun:
    return parse_nccl_tests(log_of("test.log", text.encode("utf-8")))


def rank_line(rank: int, host: str, device: int) -> str:
    """`#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s` (writeDeviceReport)."""
    return (f"#  Rank {rank:2d} Group {0:2d} Pid {4000 + rank:6d} on {host:>10} device {device:2d} "
            f"[{0:04x}:{0x18 + device:02x}:{0:02x}] NVIDIA H100 80GB HBM3")


def table_row(size: int, halves: list[tuple[float, float, float, int]], extra: str = "") -> str:
    """writeBenchmarkLinePreamble (`%12li  %12li  %8s  %6s  %6s`), then writeBenchmarkLineBody (`  %7s  %6s  %6s  %6g`)
    for out-of-place and in-place, each followed by `extra` (the per-iteration columns), and a timestamp (`%21s`)."""
    text = f"{size:12d}  {size // 4:12d}  {'float':>8}  {'sum':>6}  {-1:6d}"
    for time, algbw, busbw, wrong in halves:
        text += f"  {time:7.1f}  {algbw:6.2f}  {busbw:6.2f}  {wrong:6g}" + extra
    return text + f"{'2026-07-09 16:03:21':>21}"


CURRENT = "\n".join([
    "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803",
    "# Collective test starting: all_reduce_perf",
    "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0 unalign: 0",
    "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows ",
    "#",
    "# Using devices",
    *[rank_line(rank, f"accept-h100-all-reduce-pair-worker-{rank // 8}", rank % 8) for rank in range(16)],
    "#",
    f"# {'':>10}  {'':>12}  {'':>8}  {'':>6}  {'':>6}              out-of-place (+ per-iteration)",
    "# " + "  ".join(f"{word:>{width}}" for word, width in (
        ("size", 10), ("count", 12), ("type", 8), ("redop", 6), ("root", 6), ("time", 7), ("algbw", 6), ("busbw", 6),
        ("#wrong", 6), ("i_min", 7), ("i_max", 7), ("i_p99", 7), ("i_cv%", 7), ("time", 7), ("algbw", 6),
        ("busbw", 6), ("#wrong", 6), ("i_min", 7), ("i_max", 7), ("i_p99", 7), ("i_cv%", 7))) + f" {'timestamp':>19}",
    table_row(1073741824, [(5592.4, 192.0, 360.0, 0), (5560.2, 193.11, 362.08, 0)], "  5500.00  5700.00  5690.00     0.80"),
    table_row(2147483648, [(11000.1, 195.23, 366.05, 0), (10990.0, 195.41, 366.39, 0)],
              "  10900.0  11200.0  11190.0     0.50"),
    table_row(4294967296, [(21900.0, 196.12, 367.72, 0), (21850.0, 196.57, 368.56, 0)],
              "  21800.0  22100.0  22090.0     0.40"),
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 365.133 ",
    "#",
    "# Collective test concluded: all_reduce_perf",
    "",
])


def test_dranet_s_launcher_log_as_kubectl_logs_gives_it() -> None:
    """Under the `+ mpirun` line, ssh warnings and two Open MPI banners: its 2 ranks, the whole table, the summary."""
    run = parsed(log_text("dranet-h200-all-reduce.log"))
    assert run.headers == (31,) and (run.min_bytes, run.max_bytes, run.step, run.step_is_factor) == (1024, 2**33, 2, True)
    assert run.validation == 1 and run.table == 38 and not run.cut
    assert [(rank.rank, rank.host, rank.device, rank.gpu) for rank in run.ranks] == [
        (0, "nccl-test-dranet-1gpu-1nic-worker-0", 0, "NVIDIA H200"),
        (1, "nccl-test-dranet-1gpu-1nic-worker-1", 0, "NVIDIA H200")]
    assert len(run.rows) == 24 and run.rows[0].size == 1024 and run.rows[-1].size == 2**33
    last = run.rows[-1]
    assert (last.redop, last.root, last.out_of_place.busbw, last.in_place.busbw, last.in_place.wrong) == (
        "sum", -1, 31.89, 31.88, 0)
    assert (run.out_of_bounds, run.average_busbw, run.program, run.nccl_version) == (0, "15.5188", None, None)


def test_the_b200_logs_rows_of_nothing_the_nccl_version_and_a_cut_table() -> None:
    run = parsed(log_text("dranet-b200-all-gather.log"))
    assert run.nccl_version == "2.26.6+cuda12.8"
    assert [row.size for row in run.rows[:3]] == [0, 0, 32] and run.rows[0].redop == "none"
    assert len(run.rows) == 28 and run.average_busbw == "12.5463"
    cut = parsed(log_text("dranet-b200-all-gather-cut.log"))
    assert cut.table is not None and cut.rows == () and len(cut.ranks) == 4 and cut.average_busbw is None
    one = parsed(log_text("dranet-b200-all-gather-one-node.log"))
    assert len(one.rows) == 8 and {rank.host for rank in one.ranks} == {"nccl-gib-test-0"}  # the page's `...` is passed
    assert one.out_of_bounds is None and one.average_busbw is None


def test_what_nccl_tests_prints_today() -> None:
    """The version line, `Collective test starting/concluded`, four per-iteration columns after each #wrong, and a
    timestamp after the in-place columns: the in-place values are read from their own place."""
    run = parsed(CURRENT)
    assert run.program == "all_reduce_perf" and run.concluded and len(run.ranks) == 16
    assert run.ranks[15].host == "accept-h100-all-reduce-pair-worker-1" and run.ranks[15].device == 7
    assert [(row.size, row.out_of_place.busbw, row.in_place.busbw, row.in_place.wrong) for row in run.rows] == [
        (1073741824, 360.0, 362.08, 0), (2147483648, 366.05, 366.39, 0), (4294967296, 367.72, 368.56, 0)]
    assert run.average_busbw == "365.133"


def test_older_rank_lines_and_unchecked_results() -> None:
    """nccl-tests before 2.10 printed no Group and the bus id alone; `-c 0` prints N/A for #wrong."""
    run = parsed("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 0\n"
                 "#   Rank  0 Pid  47689 on      gpu32 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
                 "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                 "algbw   busbw #wrong\n"
                 "           8             2     float     sum      -1    19.90    0.00    0.00    N/A    18.96    "
                 "0.00    0.00    N/A\n")
    assert [(rank.rank, rank.host, rank.gpu) for rank in run.ranks] == [(0, "gpu32", "NVIDIA A100-SXM4-80GB")]
    assert run.validation == 0 and run.rows[0].out_of_place.wrong is None and run.rows[0].in_place.wrong is None


def test_kubectl_s_prefixes_carriage_returns_and_colours_are_taken_off() -> None:
    lines = CURRENT.splitlines()
    prefixed = "".join(f"[pod/accept-h100-all-reduce-pair-launcher-x7k2p/launcher] 2026-07-09T16:03:21.123456789Z "
                       f"\x1b[0m{line}\r\n" for line in lines)
    assert parsed(prefixed) == parsed(CURRENT)


def test_a_row_cut_mid_line_is_not_a_row() -> None:
    cut = CURRENT.split("\n# Out of bounds")[0]
    cut = cut[:cut.rindex("  0  ")]  # the last row stops in its in-place columns
    run = parsed(cut)
    assert [row.size for row in run.rows] == [1073741824, 2147483648] and len(run.cut) == 1


def test_a_memory_limit_lowers_the_largest_size() -> None:
    run = parsed(CURRENT.replace("# Per-Iteration", "#\n# Reducing maxBytes to 2147483648 due to memory limitation\n"
                                 "# Per-Iteration"))
    assert run.max_bytes == 2147483648


def test_nccl_tests_built_without_mpi_prints_one_run_a_process() -> None:
    """Each process of an mpirun of a build without MPI=1 runs its own one-rank test: two headers, rank 0 twice."""
    one = "\n".join(line for line in CURRENT.splitlines() if "Rank" not in line or "Rank  0" in line)
    run = parsed(one + "\n" + one.replace("worker-0", "worker-1"))
    assert len(run.headers) == 2 and [rank.rank for rank in run.ranks] == [0, 0]


def test_a_log_of_something_else_holds_nothing_of_nccl_tests() -> None:
    assert not parsed(log_text("perftest-edr-rail0.log")).found
    assert not parsed("").found
