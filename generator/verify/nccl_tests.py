"""nccl-tests' output, as its rank 0 prints it (NVIDIA/nccl-tests src/util.cu, see vocabulary/fabric.py): the
`# nThread` header with the sizes, one `#  Rank` line per rank with its host, the table (size, count, type, redop,
root, then out-of-place and in-place time, algbw, busbw and #wrong, each followed by four per-iteration columns under
`-I 1`, and a timestamp under `-Z`), `# Out of bounds values`, `# Avg bus bandwidth`. Older releases print no
`Group` on a rank line and the bus id as `[0x1a]`; the `# nccl-tests version` and `# Collective test` lines are new.

Every other line (ssh warnings, Open MPI's banners, `+ mpirun`, NCCL's own INFO lines from any rank) is passed over:
lines are recognised by their own shape, not by where they stand."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from mpigen.verify.logtext import Log

HEADER = re.compile(r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)\s+step:\s*(\d+)"
                    r"\((factor|bytes)\)(?:.*?validation:\s*(\d+))?")
REDUCED = re.compile(r"^#\s*Reducing maxBytes to (\d+)")
RANK = re.compile(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]"
                  r"\s*(.*)$")
TABLE = re.compile(r"^#\s*size\s+count\s+type\s+redop\s+root\s")
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([A-Za-z]\w*)\s+([A-Za-z]\w*)\s+(-?\d+)\s+(.*)$")
OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
AVERAGE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
CONCLUDED = re.compile(r"^#\s*Collective test concluded:")
NCCL_VERSION = re.compile(r"\bNCCL version (\d[\w.+-]*)")
PER_ITERATION = "i_min"
"""A column of the table header under `-I 1`: four per-iteration columns follow each #wrong."""
NOT_CHECKED = "N/A"
"""#wrong where the run did not check its results (`-c 0`)."""


@dataclass(frozen=True)
class RankLine:
    rank: int
    host: str
    device: int
    gpu: str
    line: int


@dataclass(frozen=True)
class Measured:
    """One half of a row: the out-of-place or the in-place run of a size."""

    time_us: float
    algbw: float
    busbw: float
    wrong: int | None
    """None: not checked (`N/A`)."""


@dataclass(frozen=True)
class Row:
    size: int
    count: int
    type: str
    redop: str
    root: int
    out_of_place: Measured
    in_place: Measured
    line: int

    @property
    def busbw(self) -> float:
        """The better of the two: both cross the fabric alike (vocabulary/fabric.py LARGEST_SIZES_SHARE)."""
        return max(self.out_of_place.busbw, self.in_place.busbw)

    @property
    def text(self) -> str:
        return (f"{self.size} B: busbw {self.out_of_place.busbw:g} out-of-place, {self.in_place.busbw:g} in-place "
                f"GB/s (line {self.line})")


@dataclass(frozen=True)
class NcclTestsRun:
    headers: tuple[int, ...] = ()
    """The lines of each `# nThread` header: more than one, and several runs printed into one log."""
    min_bytes: int | None = None
    max_bytes: int | None = None
    step: int | None = None
    step_is_factor: bool = True
    validation: int | None = None
    program: str | None = None
    """`all_reduce_perf`, where the run says (`# Collective test starting:`, nccl-tests 2.17 and later)."""
    nccl_version: str | None = None
    ranks: tuple[RankLine, ...] = ()
    table: int | None = None
    """The line of the table's column header."""
    rows: tuple[Row, ...] = ()
    cut: tuple[int, ...] = ()
    """Lines that start a row and end before its in-place columns: a log cut mid-line."""
    out_of_bounds: int | None = None
    average_busbw: str | None = None
    concluded: bool = False

    @property
    def found(self) -> bool:
        """Anything of nccl-tests in the log."""
        return bool(self.headers or self.table is not None or self.ranks)


@dataclass
class _Reading:
    """The parse's own state: the facts so far (a run whose lists are filled in at the end), and the lists."""

    run: NcclTestsRun = field(default_factory=NcclTestsRun)
    headers: list[int] = field(default_factory=list)
    ranks: list[RankLine] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    cut: list[int] = field(default_factory=list)
    block: int = 4

    def learn(self, **facts: Any) -> None:
        self.run = replace(self.run, **facts)


def _measured(tokens: list[str]) -> Measured | None:
    try:
        wrong = None if tokens[3] == NOT_CHECKED else int(float(tokens[3]))
        return Measured(float(tokens[0]), float(tokens[1]), float(tokens[2]), wrong)
    except (ValueError, IndexError, OverflowError):
        return None


def _row(match: re.Match[str], block: int, number: int) -> Row | None:
    tokens = match.group(6).split()
    if len(tokens) < 2 * block:
        return None
    out_of_place, in_place = _measured(tokens[:4]), _measured(tokens[block:block + 4])
    if out_of_place is None or in_place is None:
        return None
    return Row(int(match.group(1)), int(match.group(2)), match.group(3), match.group(4), int(match.group(5)),
               out_of_place, in_place, number)


def _read_line(reading: _Reading, number: int, line: str) -> None:
    if line.lstrip().startswith("#"):
        _read_comment(reading, number, line)
    elif reading.run.table is not None and (match := ROW.match(line)):
        row = _row(match, reading.block, number)
        if row is None:
            reading.cut.append(number)
        else:
            reading.rows.append(row)
    elif reading.run.nccl_version is None and (match := NCCL_VERSION.search(line)):
        reading.learn(nccl_version=match.group(1))


def _read_comment(reading: _Reading, number: int, line: str) -> None:
    if match := HEADER.match(line):
        reading.headers.append(number)
        reading.learn(min_bytes=int(match.group(3)), max_bytes=int(match.group(4)), step=int(match.group(5)),
                      step_is_factor=match.group(6) == "factor",
                      validation=int(match.group(7)) if match.group(7) is not None else None)
    elif match := REDUCED.match(line):
        reading.learn(max_bytes=int(match.group(1)))
    elif match := RANK.match(line):
        reading.ranks.append(RankLine(int(match.group(1)), match.group(4), int(match.group(5)), match.group(7), number))
    elif TABLE.match(line):
        if reading.run.table is None:
            reading.learn(table=number)
        reading.block = 8 if PER_ITERATION in line.split() else 4
    elif match := OUT_OF_BOUNDS.match(line):
        reading.learn(out_of_bounds=int(match.group(1)))
    elif match := AVERAGE.match(line):
        reading.learn(average_busbw=match.group(1))
    elif match := STARTING.match(line):
        reading.learn(program=match.group(1))
    elif CONCLUDED.match(line):
        reading.learn(concluded=True)


def parse_nccl_tests(log: Log) -> NcclTestsRun:
    """What of nccl-tests the log holds (an empty run where it holds nothing of it)."""
    reading = _Reading()
    for number, line in log.lines:
        _read_line(reading, number, line)
    return replace(reading.run, headers=tuple(reading.headers), ranks=tuple(reading.ranks), rows=tuple(reading.rows),
                   cut=tuple(reading.cut))
