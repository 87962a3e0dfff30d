"""What `mpigen verify` says of a log: one judgement per thing it checks, each passing or missing, and a miss with
what was expected, the floor's chain where a floor decided it, the rows measured, and the likely causes of its kind,
which are spelt here once for every judge and report."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Miss(str, Enum):
    """The kinds of miss, each with its likely causes (CAUSES)."""

    TRUNCATED = "truncated"
    WRONG_RESULTS = "wrong results"
    NOT_CHECKED = "results not checked"
    RANKS = "ranks"
    SINGLE_NODE = "fewer nodes than workers"
    OTHER_JOB = "log of another job"
    BUS_BANDWIDTH = "bus bandwidth under the floor"
    RAIL_BANDWIDTH = "rail bandwidth under the floor"
    DEVICE = "another device"


CAUSES = {
    Miss.TRUNCATED: "the run stopped before its end: a rank died (out of memory, a GPU or NIC error, a failed "
                    "connection: read the lines above, and the workers' logs), the job reached its deadline or was "
                    "deleted, or the log was cut (`kubectl logs --tail`, or a log taken while the job ran): take the "
                    "launcher's whole log once the job has finished",
    Miss.WRONG_RESULTS: "data was corrupted on its way: a GPU or NVLink fault (`nvidia-smi -q` ECC and NVLink errors), "
                        "a NIC, cable or transceiver with errors (the port's error counters, `ibstat`), or GPUDirect "
                        "RDMA through a PCIe switch with ACS on or an IOMMU not in passthrough",
    Miss.NOT_CHECKED: "the run was told not to check its results (`-c 0`): the acceptance job's program runs `-c 1`; "
                      "run it unedited",
    Miss.RANKS: "mpirun started another number of ranks than the job's hostfile has slots (an -np or a hostfile of "
                "the program's own, -g or -t giving a process several GPUs), or nccl-tests was built without MPI "
                "(MPI=1), so each process ran a test of its own and the rank numbers repeat",
    Miss.SINGLE_NODE: "the ranks ran on fewer nodes than the job's workers: mpirun was given one host (a --host or "
                      "hostfile of the program's own), or this is a single-node run: its bandwidth is NVLink's, not "
                      "the fabric's",
    Miss.OTHER_JOB: "the log is of another job, another run or another test: give the log of this job's launcher "
                    "(of an MPIJob: `kubectl logs -n <namespace> job/<job>-launcher`), from a run of the charts as "
                    "rendered",
    Miss.BUS_BANDWIDTH: "a rail missing from NCCL_IB_HCA or NCCL_SOCKET_IFNAME (`mpigen explain` lists what the job "
                        "sets; NCCL_DEBUG=INFO shows the NICs NCCL chose), GPUDirect RDMA off (nvidia-peermem not "
                        "loaded, NCCL_NET_GDR_LEVEL under the GPU-NIC distance), a GPU far from its NIC (a claim or "
                        "device plugin that does not align them), ranks bound to the wrong socket (the rankfile, "
                        "--bind-to), a NIC trained at a lower speed or width (`ibstat` Rate), or other traffic on the "
                        "fabric; the job's rail tests show which rail, if one",
    Miss.RAIL_BANDWIDTH: "the port trained at a lower speed or width (`ibstat` Rate, `ethtool` on RoCE), a cable or "
                         "transceiver with errors (the port's error counters), the NIC in a narrower or slower PCIe "
                         "slot (`lspci -vv` LnkSta), the test on the far NUMA node, other traffic on the rail, or on "
                         "RoCE a fabric that drops packets (PFC and ECN not set up end to end)",
    Miss.DEVICE: "perftest opened another device than the rail's: the pod sees other HCAs than the rail's, or the "
                 "hardware profile's `hca` for this NIC is not what the node calls it (`ibdev2netdev` on the node)",
}
"""The likely causes of each kind of miss, said once after every judgement that misses that way."""


@dataclass(frozen=True)
class Judgement:
    name: str
    """What is judged: `table`, `#wrong`, `ranks`, `nodes`, `hosts`, `collective`, `bus bandwidth`, `ib_write_bw`,
    `device`, `rail`, `rail bandwidth`, `latency`."""
    summary: str
    """What was found, in one line."""
    miss: Miss | None = None
    expected: str = ""
    floor: tuple[str, ...] = ()
    """The floor's chain, step by step, where a floor decided the judgement."""
    measured: tuple[str, ...] = ()
    """The rows judged."""

    @property
    def passed(self) -> bool:
        return self.miss is None

    @property
    def causes(self) -> str:
        return CAUSES[self.miss] if self.miss is not None else ""


@dataclass(frozen=True)
class LogVerdict:
    log: str
    tool: str
    """`nccl-tests all_reduce_perf`, `perftest`: what the log was read as."""
    judgements: tuple[Judgement, ...]

    @property
    def passed(self) -> bool:
        return all(judgement.passed for judgement in self.judgements)


@dataclass(frozen=True)
class Verdict:
    job: str
    cluster: str
    what: str
    """What the job proves (`nccl-tests all_reduce over pair`)."""
    logs: tuple[LogVerdict, ...]

    @property
    def passed(self) -> bool:
        return all(log.passed for log in self.logs)

    @property
    def misses(self) -> int:
        return sum(not judgement.passed for log in self.logs for judgement in log.judgements)
