"""perftest's output (linux-rdma/perftest, see vocabulary/fabric.py): each tool prints its test's title (`RDMA_Write BW
Test`, `RDMA_Read Latency Test`) and parameters (`Device`, `Link type`, `Transport type`, ...), then a table: ib_write_bw
`#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]` (`[MiB/sec]`, once `[MB/sec]`, without
`--report_gbits`), ib_read_lat `#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec]
99% percentile[usec] 99.9% percentile[usec]`.

An acceptance job's two ranks print through one mpirun, so the server's and the client's lines interleave (both print
the parameters, and ib_write_bw's server prints the client's result too); each line is recognised by its own shape,
and a result row belongs to the table whose column header came last. The job's script says which rail each rank
tests (`mpigen perftest: rail <rail>, rank <rank>`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from mpigen.verify.logtext import Log
from mpigen.vocabulary import fabric

TITLE = re.compile(r"^\s*([A-Za-z_]+(?: [A-Za-z_]+)*?) (BW|Latency) Test\s*$")
DEVICE = re.compile(r"\bDevice\s*:\s*(\S+)")
LINK_TYPE = re.compile(r"^\s*Link type\s*:\s*(\S+)")
BANDWIDTH_TABLE = re.compile(r"#bytes\s+#iterations\s+BW peak\[(Gb|MiB|MB)/sec\]\s+BW average\[(Gb|MiB|MB)/sec\]")
LATENCY_TABLE = re.compile(r"#bytes\s+#iterations\s+t_min\[(usec|cycles)\]")
NUMBERS = re.compile(r"^\s*\d+\s+\d+(?:\s+-?\d[\d.eE+-]*)+\s*$")
RAIL = re.compile(r"mpigen perftest: rail (\S+), rank (\S*)")
"""The line the acceptance job's script echoes first on each rank (model/acceptance.py perftest_script)."""
WRITE_BW = ("RDMA_Write", "BW")
READ_LAT = ("RDMA_Read", "Latency")
LATENCY_COLUMNS = 9
GBITS_PER_UNIT = {"Gb": 1.0, "MiB": fabric.PERFTEST_MEBIBYTE * fabric.BITS_PER_BYTE / fabric.PERFTEST_GBIT,
                  "MB": fabric.PERFTEST_MEBIBYTE * fabric.BITS_PER_BYTE / fabric.PERFTEST_GBIT}
"""A table's unit in Gb/s (10^9 bits): perftest's MiB and MB are both 2^20 bytes."""


@dataclass(frozen=True)
class Parameters:
    """What one tool printed of its test: its title's verb and kind, the device it opened and its link type."""

    verb: str
    kind: str
    line: int
    device: str | None = None
    link_type: str | None = None

    @property
    def tool(self) -> tuple[str, str]:
        return (self.verb.split()[0], self.kind)


@dataclass(frozen=True)
class BandwidthRow:
    size: int
    iterations: int
    peak_gbits: float
    average_gbits: float
    line: int


@dataclass(frozen=True)
class LatencyRow:
    size: int
    iterations: int
    t_min: float
    t_max: float
    t_typical: float
    t_avg: float
    t_stdev: float
    p99: float
    p999: float
    line: int

    @property
    def text(self) -> str:
        return (f"{self.size} B: t_typical {self.t_typical:g} usec, t_avg {self.t_avg:g}, t_min {self.t_min:g}, "
                f"t_max {self.t_max:g}, 99% {self.p99:g}, 99.9% {self.p999:g} (line {self.line})")


@dataclass(frozen=True)
class PerftestRun:
    parameters: tuple[Parameters, ...] = ()
    bandwidth_tables: tuple[int, ...] = ()
    latency_tables: tuple[int, ...] = ()
    bandwidth: tuple[BandwidthRow, ...] = ()
    latency: tuple[LatencyRow, ...] = ()
    rails: tuple[tuple[str, str, int], ...] = ()
    """Each `mpigen perftest` line: the rail, the rank, the line."""

    @property
    def found(self) -> bool:
        return bool(self.parameters or self.bandwidth_tables or self.latency_tables)

    def of(self, tool: tuple[str, str]) -> tuple[Parameters, ...]:
        return tuple(parameters for parameters in self.parameters if parameters.tool == tool)


@dataclass
class _Reading:
    parameters: list[Parameters] = field(default_factory=list)
    bandwidth_tables: list[int] = field(default_factory=list)
    latency_tables: list[int] = field(default_factory=list)
    bandwidth: list[BandwidthRow] = field(default_factory=list)
    latency: list[LatencyRow] = field(default_factory=list)
    rails: list[tuple[str, str, int]] = field(default_factory=list)
    table: str = ""
    unit: float = 1.0

    def amend(self, device: str | None = None, link_type: str | None = None) -> None:
        """A fact a header printed after its title, given to the first tool still without it: two ranks printing
        their headers at once give their facts in the order they printed their titles."""
        for index, known in enumerate(self.parameters):
            if device is not None and known.device is None:
                self.parameters[index] = replace(known, device=device)
                return
            if link_type is not None and known.link_type is None:
                self.parameters[index] = replace(known, link_type=link_type)
                return


def _row(reading: _Reading, words: list[str], number: int) -> None:
    try:
        values = [float(word) for word in words]
    except ValueError:
        return
    if reading.table == "bandwidth" and len(values) >= 5:
        reading.bandwidth.append(BandwidthRow(int(values[0]), int(values[1]), values[2] * reading.unit,
                                              values[3] * reading.unit, number))
    elif reading.table == "latency" and len(values) >= LATENCY_COLUMNS:
        t_min, t_max, t_typical, t_avg, t_stdev, p99, p999 = values[2:LATENCY_COLUMNS]
        reading.latency.append(LatencyRow(int(values[0]), int(values[1]), t_min, t_max, t_typical, t_avg, t_stdev, p99,
                                          p999, number))


def _read_line(reading: _Reading, number: int, line: str) -> None:
    if match := RAIL.search(line):
        reading.rails.append((match.group(1), match.group(2), number))
    elif match := TITLE.match(line):
        reading.parameters.append(Parameters(match.group(1), match.group(2), number))
    elif match := BANDWIDTH_TABLE.search(line):
        reading.bandwidth_tables.append(number)
        reading.table, reading.unit = "bandwidth", GBITS_PER_UNIT[match.group(2)]
    elif LATENCY_TABLE.search(line):
        reading.latency_tables.append(number)
        reading.table = "latency"
    elif NUMBERS.match(line):
        _row(reading, line.split(), number)
    else:
        if match := DEVICE.search(line):
            reading.amend(device=match.group(1))
        if match := LINK_TYPE.match(line):
            reading.amend(link_type=match.group(1))


def parse_perftest(log: Log) -> PerftestRun:
    """What of perftest the log holds (an empty run where it holds nothing of it)."""
    reading = _Reading()
    for number, line in log.lines:
        _read_line(reading, number, line)
    return PerftestRun(tuple(reading.parameters), tuple(reading.bandwidth_tables), tuple(reading.latency_tables),
                       tuple(reading.bandwidth), tuple(reading.latency), tuple(reading.rails))
