"""The judgements of a perftest log of a rail's acceptance job: the log is of this rail, ib_write_bw printed its
result, on the rail's device and link type, reaching the rail's floor (model/floors.py); ib_read_lat's figures are
reported, not judged (no sourced ceiling for a rail's latency exists to judge them by)."""

from __future__ import annotations

from mpigen.model import Job, LinkType, RailAttachment, stated
from mpigen.model.acceptance import RailTest
from mpigen.model.floors import Floor, figure, rail_floor
from mpigen.support.diagnostics import one_line
from mpigen.verify.judgement import Judgement, Miss
from mpigen.verify.perftest import READ_LAT, WRITE_BW, PerftestRun

LINK_TYPES = {LinkType.INFINIBAND: "IB", LinkType.ETHERNET: "Ethernet"}
"""How perftest's `Link type` names each link (link_layer_str)."""


def judge_perftest(job: Job, run: PerftestRun) -> tuple[Judgement, ...]:
    test = stated(stated(job.acceptance).rail_test)
    attachment = next(a for a in job.rails if a.rail.name == test.rail)
    return (_rail(test, run), _write_bw(run), _device(test, attachment, run), _bandwidth(job, attachment, run),
            _latency(run))


def _rail(test: RailTest, run: PerftestRun) -> Judgement:
    others = sorted({rail for rail, _, _ in run.rails if rail != test.rail})
    if others:
        return Judgement("rail", f"the log tests rail {', '.join(one_line(rail) for rail in others)}", Miss.OTHER_JOB,
                         expected=f"a test of rail {test.rail} (`mpigen perftest: rail {test.rail}, ...`)")
    if not run.rails:
        return Judgement("rail", f"the log does not say its rail (no `mpigen perftest` line): read as rail {test.rail}")
    ranks = sorted({rank for _, rank, _ in run.rails})
    return Judgement("rail", f"rail {test.rail}, ranks {', '.join(one_line(rank) for rank in ranks)}")


def _write_bw(run: PerftestRun) -> Judgement:
    if run.bandwidth:
        return Judgement("ib_write_bw", f"{len(run.bandwidth)} result row(s)")
    printed = "printed its parameters but no result" if run.of(WRITE_BW) or run.bandwidth_tables else "printed nothing"
    return Judgement("ib_write_bw", f"truncated: ib_write_bw {printed}", Miss.TRUNCATED,
                     expected="ib_write_bw's table with its result row (`#bytes #iterations BW peak[Gb/sec] ...`)")


def _device(test: RailTest, attachment: RailAttachment, run: PerftestRun) -> Judgement:
    opened = run.of(WRITE_BW) + run.of(READ_LAT)
    devices = sorted({p.device for p in opened if p.device is not None})
    links = sorted({p.link_type for p in opened if p.link_type is not None})
    link = LINK_TYPES.get(attachment.nic.link_type) if attachment.nic.link_type is not None else None
    said = f"Device {_listed(devices)}, Link type {_listed(links)}"
    wanted = (f"Device {test.device}" if test.device is not None else "the rail's own VF") + \
        (f", Link type {link}" if link is not None else "")
    if (test.device is not None and any(device != test.device for device in devices)) or \
            (link is not None and any(found != link for found in links)):
        return Judgement("device", said, Miss.DEVICE, expected=f"{wanted}: NIC {attachment.nic.name} of rail "
                                                                f"{test.rail}")
    return Judgement("device", said)


def _listed(values: list[str]) -> str:
    return ", ".join(one_line(value) for value in values) or "(not printed)"


def _bandwidth(job: Job, attachment: RailAttachment, run: PerftestRun) -> Judgement:
    if not run.bandwidth:
        return Judgement("rail bandwidth", "not judged: ib_write_bw printed no result", Miss.TRUNCATED)
    best = max(run.bandwidth, key=lambda row: row.average_gbits)
    rows = tuple(f"{row.size} B x {row.iterations}: BW average {row.average_gbits:.2f} Gb/s (line {row.line})"
                 for row in run.bandwidth)
    at = f"BW average {best.average_gbits:.2f} Gb/s"
    floor = rail_floor(attachment, job.pool.hardware.name)
    if not isinstance(floor, Floor):
        return Judgement("rail bandwidth", f"{at}; no floor: {floor.reason}", measured=rows)
    chain = tuple(str(step) for step in floor.chain)
    if best.average_gbits >= floor.value:
        return Judgement("rail bandwidth", f"{at}: the floor is {floor.text}", floor=chain, measured=rows)
    share = f"{figure(100 * best.average_gbits / floor.line)}% of the rail's {floor.line:g} Gb/s"
    return Judgement("rail bandwidth", f"{at}: under the floor of {floor.text}, {share}", Miss.RAIL_BANDWIDTH,
                     expected=f"ib_write_bw's BW average at least {floor.text}", floor=chain, measured=rows)


def _latency(run: PerftestRun) -> Judgement:
    if not run.latency:
        printed = "printed its parameters but no result" if run.of(READ_LAT) or run.latency_tables else \
            "did not run (the job runs it after ib_write_bw)"
        return Judgement("latency", f"truncated: ib_read_lat {printed}", Miss.TRUNCATED,
                         expected="ib_read_lat's table with its result row (`#bytes #iterations t_min[usec] ...`)")
    return Judgement("latency", "reported, not judged: " + "; ".join(row.text for row in run.latency))
