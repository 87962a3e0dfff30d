"""The judgements of an nccl-tests log of an acceptance job: the table is whole, no result was wrong, the ranks are
the job's (as many, on as many pods, named as its workers are), the collective is the job's, and the bus bandwidth at
the largest sizes reaches the floor model/floors.py derives from the hardware."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpigen.manifests.run_name import mpijob_name
from mpigen.model import Job, names, stated
from mpigen.model.acceptance import CollectiveTest
from mpigen.model.floors import Floor, bus_bandwidth_floor, figure
from mpigen.support.diagnostics import one_line
from mpigen.verify.judgement import Judgement, Miss
from mpigen.verify.nccl_tests import NcclTestsRun, Row
from mpigen.vocabulary import fabric

RATIO_TOLERANCE = 0.03
"""How far busbw/algbw of the largest row may be from the collective's factor: the table prints both rounded to two
decimals (at the largest sizes, tens of GB/s: well within 1%)."""
BINARY_UNITS = ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def size_text(size: int) -> str:
    """`8 GiB`, `256 MiB`, `1.5 KiB`, `24 B`."""
    for unit, name in BINARY_UNITS:
        if size >= unit:
            return f"{figure(size / unit)} {name}"
    return f"{size} B"


def judge_nccl_tests(job: Job, run: NcclTestsRun) -> tuple[Judgement, ...]:
    test = stated(stated(job.acceptance).collective)
    stop = _stop(run)
    return (_table(run, stop), _wrong(run), _ranks(job, run), _nodes(job, run), _hosts(job, run),
            _collective(test, run), _bandwidth(job, run, stop))


def _stop(run: NcclTestsRun) -> str:
    """Why the table is not whole ('' where it is)."""
    if run.table is None:
        return "the log holds no table (no `#  size  count  type  redop  root` header)"
    if not run.rows:
        return f"the log stops after the table's header (line {run.table}): no row was printed"
    if run.cut:
        return f"line {run.cut[0]} ends in the middle of a row"
    largest = max(row.size for row in run.rows)
    if run.max_bytes is not None and run.step:
        last_step = run.max_bytes / run.step if run.step_is_factor else run.max_bytes - run.step
        if largest <= last_step:
            return f"the last row is of {size_text(largest)}, where the run goes to {size_text(run.max_bytes)}"
    if run.average_busbw is None:
        return "no `# Avg bus bandwidth` line after the table"
    return ""


def _table(run: NcclTestsRun, stop: str) -> Judgement:
    if stop:
        last = (f"the last row: {max(run.rows, key=lambda row: row.line).text}",) if run.rows else ()
        span = f" ({size_text(run.min_bytes)} to {size_text(run.max_bytes)})" if run.min_bytes is not None and \
            run.max_bytes is not None else ""
        return Judgement("table", f"truncated: {stop}", Miss.TRUNCATED, measured=last,
                         expected=f"every row from minBytes to maxBytes{span}, then `# Out of bounds values` and "
                                  "`# Avg bus bandwidth`")
    sizes = [row.size for row in run.rows]
    return Judgement("table", f"{len(run.rows)} rows, {size_text(min(sizes))} to {size_text(max(sizes))}; "
                              f"Avg bus bandwidth {one_line(run.average_busbw or '')} GB/s over every size "
                              "(not judged: the small sizes measure latency)")


def _no_rows(name: str) -> Judgement:
    return Judgement(name, "not judged: the log holds no row of the table", Miss.TRUNCATED)


def _wrong(run: NcclTestsRun) -> Judgement:
    if not run.rows:
        return _no_rows("#wrong")
    unchecked = [row for row in run.rows if row.out_of_place.wrong is None or row.in_place.wrong is None]
    if run.validation == 0 or unchecked:
        return Judgement("#wrong", "the run did not check its results: #wrong is N/A", Miss.NOT_CHECKED,
                         expected="#wrong 0 in every row (the run checks its results with -c 1)",
                         measured=tuple(f"{row.size} B: #wrong N/A (line {row.line})" for row in unchecked[:3]))
    wrong = [row for row in run.rows if row.out_of_place.wrong or row.in_place.wrong]
    if wrong or run.out_of_bounds:
        found = f"{len(wrong)} row(s) with #wrong above 0" if wrong else "no row with #wrong above 0"
        return Judgement("#wrong", f"{found}; Out of bounds values: {run.out_of_bounds}", Miss.WRONG_RESULTS,
                         expected="#wrong 0 in every row, out-of-place and in-place, and `Out of bounds values: 0`",
                         measured=tuple(f"{row.size} B: #wrong {row.out_of_place.wrong} out-of-place, "
                                        f"{row.in_place.wrong} in-place (line {row.line})" for row in wrong))
    bounds = f"; Out of bounds values: {run.out_of_bounds}" if run.out_of_bounds is not None else ""
    return Judgement("#wrong", f"0 in all {len(run.rows)} rows, out-of-place and in-place{bounds}")


def _expected_ranks(job: Job) -> str:
    return f"{job.worker_count * job.slots_per_worker} ranks: {job.worker_count} workers of {job.slots_per_worker} slot(s)"


def _ranks(job: Job, run: NcclTestsRun) -> Judgement:
    expected = job.worker_count * job.slots_per_worker
    numbers = [rank.rank for rank in run.ranks]
    if not numbers:
        return Judgement("ranks", "the log names no rank (no `#  Rank N ... on <host>` line)", Miss.RANKS,
                         expected=_expected_ranks(job))
    repeated = sorted({number for number in numbers if numbers.count(number) > 1})
    if repeated or len(run.headers) > 1:
        said = f"rank {repeated[0]} is named {numbers.count(repeated[0])} times" if repeated else \
            f"{len(run.headers)} runs printed their header (lines {', '.join(map(str, run.headers))})"
        return Judgement("ranks", f"{said}: each process ran a test of its own", Miss.RANKS,
                         expected=_expected_ranks(job) + ", in one run",
                         measured=_rank_lines(run))
    if len(numbers) != expected:
        return Judgement("ranks", f"{len(numbers)} ranks", Miss.RANKS, expected=_expected_ranks(job),
                         measured=_rank_lines(run))
    return Judgement("ranks", f"{len(numbers)} ranks: {job.worker_count} workers of {job.slots_per_worker} slot(s)")


def _hosts_of(run: NcclTestsRun) -> list[str]:
    return list(dict.fromkeys(rank.host for rank in run.ranks))


def _rank_lines(run: NcclTestsRun) -> tuple[str, ...]:
    """The log's rank lines, the first and the last four where there are more."""
    said = [f"rank {rank.rank} on {one_line(rank.host)}, device {rank.device} (line {rank.line})" for rank in run.ranks]
    return tuple(said if len(said) <= 8 else [*said[:4], f"... {len(said) - 8} more", *said[-4:]])


def _nodes(job: Job, run: NcclTestsRun) -> Judgement:
    hosts = _hosts_of(run)
    if not hosts:
        return Judgement("nodes", "the log names no host (no `#  Rank` line)", Miss.RANKS,
                         expected=f"ranks on {job.worker_count} worker pods")
    listed = ", ".join(one_line(host) for host in hosts)
    if len(hosts) < job.worker_count:
        return Judgement("nodes", f"{len(run.ranks)} ranks on {len(hosts)} host(s) ({listed}), where the job has "
                                  f"{job.worker_count} workers", Miss.SINGLE_NODE, measured=_rank_lines(run),
                         expected=f"ranks on each of the job's {job.worker_count} worker pods, one a node")
    return Judgement("nodes", f"ranks on {len(hosts)} hosts ({listed})")


def _worker_names(job: Job) -> list[str]:
    run = mpijob_name(job)
    return [names.worker_name(run, index, job.backend.value) for index in range(job.worker_count)]


def _hosts(job: Job, run: NcclTestsRun) -> Judgement:
    workers = _worker_names(job)
    theirs = f"{workers[0]} .. {workers[-1]}" if len(workers) > 1 else workers[0]
    hosts = _hosts_of(run)
    if not hosts:
        return Judgement("hosts", "the log names no host (no `#  Rank` line)", Miss.RANKS,
                         expected=f"ranks on the job's workers {theirs}")
    strangers = [host for host in hosts if not any(host == name or host.startswith(f"{name}.") for name in workers)]
    if strangers:
        listed = ", ".join(one_line(host) for host in strangers)
        return Judgement("hosts", f"{listed}: not among the workers of job {job.name}", Miss.OTHER_JOB,
                         expected=f"ranks on the job's workers {theirs}", measured=_rank_lines(run))
    return Judgement("hosts", f"every rank on a worker of job {job.name} ({theirs})")


def _collective(test: CollectiveTest, run: NcclTestsRun) -> Judgement:
    program = PurePosixPath(test.binary).name
    if run.program is not None and PurePosixPath(run.program).name != program:
        return Judgement("collective", f"the log is of {one_line(run.program)}", Miss.OTHER_JOB,
                         expected=f"a run of {program}")
    if not run.rows:
        return _no_rows("collective")
    largest = max(run.rows, key=lambda row: row.size)
    reduces = test.collective == "all_reduce"
    if (largest.redop != fabric.REDUCTION_NONE) != reduces:
        return Judgement("collective", f"redop {one_line(largest.redop)}: another collective", Miss.OTHER_JOB,
                         expected=f"{test.collective}, whose redop is " + ("an operation (sum)" if reduces else
                                                                            fabric.REDUCTION_NONE))
    formula, factor = fabric.BUS_BANDWIDTH_FACTORS[test.collective]
    ranks = len(run.ranks)
    said = f"{test.collective}: redop {one_line(largest.redop)}"
    if ranks < 2 or largest.out_of_place.algbw <= 0:
        return Judgement("collective", said)
    ratio = largest.out_of_place.busbw / largest.out_of_place.algbw
    if abs(ratio - factor(ranks)) > RATIO_TOLERANCE * factor(ranks):
        return Judgement("collective", f"busbw/algbw is {figure(ratio)} at {size_text(largest.size)}, where "
                                       f"{test.collective} over {ranks} ranks gives {formula} = {figure(factor(ranks))}",
                         Miss.OTHER_JOB, expected=f"a run of {test.collective} over the ranks the log names",
                         measured=(largest.text,))
    return Judgement("collective", f"{said}, busbw = algbw x {formula} over {ranks} ranks")


def _bandwidth(job: Job, run: NcclTestsRun, stop: str) -> Judgement:
    if stop:
        return Judgement("bus bandwidth", f"not judged: {stop}", Miss.TRUNCATED)
    largest = max(row.size for row in run.rows)
    least = largest * fabric.LARGEST_SIZES_SHARE
    judged: list[Row] = [row for row in run.rows if row.size >= least]
    measured = sum(row.busbw for row in judged) / len(judged)
    rows = tuple(row.text for row in judged)
    at = f"busbw {figure(measured)} GB/s at the largest sizes ({size_text(int(least))} to {size_text(largest)})"
    floor = bus_bandwidth_floor(job)
    if not isinstance(floor, Floor):
        return Judgement("bus bandwidth", f"{at}; no floor: {floor.reason}", measured=rows)
    if measured >= floor.value:
        return Judgement("bus bandwidth", f"{at}: the floor is {floor.text}", floor=_chain(floor), measured=rows)
    return Judgement("bus bandwidth", f"{at}: under the floor of {floor.text}, {_share(measured, floor)}",
                     Miss.BUS_BANDWIDTH,
                     expected=f"busbw at least {floor.text}: the mean, over the rows of {size_text(int(least))} and "
                              "more, of each row's better busbw (out-of-place or in-place)",
                     floor=_chain(floor), measured=rows)


def _share(measured: float, floor: Floor) -> str:
    """`64% of the 50 GB/s the hardware gives`: a measure as a share of what the floor is a share of."""
    return f"{figure(100 * measured / floor.line)}% of the {figure(floor.line)} {floor.unit} the hardware gives"


def _chain(floor: Floor) -> tuple[str, ...]:
    return tuple(str(step) for step in floor.chain)
