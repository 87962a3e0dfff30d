"""Fabric acceptance jobs: what a cluster's `acceptance` asks of each GPU pool, as the job profiles that run it.

Before a team trusts a pool with a real job, it runs nccl-tests across two nodes and across the pool, and perftest
on each rail between two nodes. Hand-written, such jobs differ from the real ones in exactly the settings that matter
(rails, HCAs, NCCL variables, placement, gang settings), so a green run proves little. Here each acceptance job is a
Job profile like any other, built from the cluster's and pool's words: validate checks it, resolve derives its
settings, and the builders write it, through the same code as every real job of its pool. Only its program and its
place in the output (`<cluster>/acceptance/<job>`, delivered without automated sync) differ.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from enum import Enum
from typing import Any

from mpigen.model import names
from mpigen.model.hardware import LinkType
from mpigen.vocabulary.rdma import ROCE_GID_INDEX

COLLECTIVES = ("all_reduce", "all_gather", "alltoall")
"""nccl-tests collectives an acceptance job may run (`<dir>/<collective><suffix>`, e.g. all_reduce_perf)."""
DEFAULT_COLLECTIVES = ("all_reduce",)
DEFAULT_NCCL_TESTS_DIR = "/usr/local/bin"
DEFAULT_NCCL_TESTS_SUFFIX = "_perf"
"""nccl-tests' own build names its binaries `<collective>_perf`; NGC's containers ship MPI builds as `_perf_mpi`."""
DEFAULT_MIN_BYTES = "8"
DEFAULT_MAX_BYTES = "8G"
DEFAULT_STEP_FACTOR = 2
DEFAULT_ITERATIONS = 20
DEFAULT_WARMUP_ITERATIONS = 5
DEFAULT_PERFTEST_SECONDS = 10
DEFAULT_PERFTEST_BYTES = 1048576
DEFAULT_PERFTEST_QUEUE_PAIRS = 4
PERFTEST_CONNECT_ATTEMPTS = 30
"""The client retries while the server rank starts listening (perftest's client gives up on the first refusal)."""
PERFTEST_SERVER_VARIABLE = "PERFTEST_SERVER"
"""The server rank's host name, in both ranks' environment: worker 0's DNS name, fixed under stable naming."""
RANK_EXPRESSION = "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}"
"""A rank's number in its own environment: OpenMPI's variable, else the PMI one Intel MPI and MPICH set."""
PERFTEST_TOOLS = ("ib_write_bw", "ib_read_lat")


class Scope(str, Enum):
    """How many nodes a collective test spans."""

    PAIR = "pair"
    """Two nodes: the fabric between any two, with nothing else in the way."""
    POOL = "pool"
    """Every node of the pool (or `maxNodes`): the whole fabric, its switches and their oversubscription."""


@dataclass(frozen=True)
class CollectiveTest:
    """An nccl-tests run over whole nodes, one rank per GPU."""

    collective: str
    scope: Scope
    binary: str
    min_bytes: str
    max_bytes: str
    step_factor: int
    iterations: int
    warmup_iterations: int

    @property
    def program(self) -> tuple[str, ...]:
        """`-g 1`: one GPU per rank (mpirun starts a rank per GPU); `-c 1`: check every result (`#wrong`)."""
        return (self.binary, "-b", self.min_bytes, "-e", self.max_bytes, "-f", str(self.step_factor), "-g", "1",
                "-n", str(self.iterations), "-w", str(self.warmup_iterations), "-c", "1")


@dataclass(frozen=True)
class RailTest:
    """perftest between two nodes on one rail: ib_write_bw for bandwidth, then ib_read_lat for latency."""

    rail: str
    device: str | None
    """The HCA perftest opens (`-d`); None where the pod sees only the rail's own device (exclusive VFs, whose
    names the kernel numbers), which the script then finds in /sys/class/infiniband."""
    port: int
    gid_index: str | None
    """`-x`: RoCE's GID index, as NCCL_IB_GID_INDEX of a real job; None on InfiniBand."""
    seconds: int
    size_bytes: int
    queue_pairs: int


@dataclass(frozen=True)
class Acceptance:
    """What an acceptance job proves: a collective over its pool, or one rail between two nodes."""

    pool: str
    collective: CollectiveTest | None = None
    rail_test: RailTest | None = None

    @property
    def what(self) -> str:
        if self.collective is not None:
            return f"nccl-tests {self.collective.collective} over {self.collective.scope.value}"
        assert self.rail_test is not None
        return f"perftest on rail {self.rail_test.rail}"


@dataclass(frozen=True)
class AcceptanceProfile:
    """One acceptance job, as the Job profile validate and resolve read, and what it proves."""

    data: dict[str, Any]
    acceptance: Acceptance


def acceptance_job_name(pool: str, test: str) -> str:
    """`accept-<pool>-<test>`: one name per pool and test, stable across renders (the MPIJob is named after it)."""
    return f"accept-{pool}-{test}"


def collective_test_name(collective: str, scope: Scope) -> str:
    return f"{collective.replace('_', '-')}-{scope.value}"


def rail_test_name(rail: str) -> str:
    return f"perftest-{rail}"


def perftest_script(test: RailTest) -> str:
    """The shell program both ranks run: rank 0 serves, rank 1 connects to it (retrying while it starts), for
    each tool in turn. Every value is mpigen's or a number the schema checked; the device is quoted anyway."""
    device = shlex.quote(test.device) if test.device is not None else '"$(ls /sys/class/infiniband | head -n 1)"'
    common = f"-d {device} -i {test.port}" + (f" -x {test.gid_index}" if test.gid_index is not None else "") + " -F"
    tools = {
        "ib_write_bw": f"ib_write_bw {common} --report_gbits -D {test.seconds} -s {test.size_bytes} -q {test.queue_pairs}",
        "ib_read_lat": f"ib_read_lat {common}",
    }
    lines = ["set -u", f"echo \"mpigen perftest: rail {test.rail}, rank {RANK_EXPRESSION}\""]
    for tool in PERFTEST_TOOLS:
        lines += [
            f"if [ \"{RANK_EXPRESSION}\" = 0 ]; then",
            f"  {tools[tool]} || exit 1",
            "else",
            f"  for attempt in $(seq {PERFTEST_CONNECT_ATTEMPTS}); do",
            f"    {tools[tool]} \"${PERFTEST_SERVER_VARIABLE}\" && break",
            f"    [ \"$attempt\" = {PERFTEST_CONNECT_ATTEMPTS} ] && exit 1",
            "    sleep 2",
            "  done",
            "fi",
        ]
    return "\n".join(lines) + "\n"


def first_worker_host(job: str, namespace: str, backend: str) -> str:
    """Worker 0's DNS name under stable naming (the job object is named after the job): perftest's server."""
    return names.worker_host(job, namespace, 0, backend)


@dataclass(frozen=True)
class AcceptanceSettings:
    """A pool's `acceptance`, its cluster's merged under it (the pool's keys win)."""

    image: str
    namespace: str
    collectives: tuple[str, ...]
    nccl_tests_dir: str
    nccl_tests_suffix: str
    min_bytes: str
    max_bytes: str
    step_factor: int
    iterations: int
    warmup_iterations: int
    max_nodes: int | None
    perftest_seconds: int
    perftest_bytes: int
    perftest_queue_pairs: int


def pool_settings(cluster: dict[str, Any], pool: dict[str, Any]) -> AcceptanceSettings | None:
    """What the cluster (for every pool) and the pool ask; None where neither asks, or the pool says `false`."""
    own = pool.get("acceptance")
    shared = cluster.get("acceptance")
    if own is False or (own is None and not shared):
        return None
    given = {**(shared or {}), **(own if isinstance(own, dict) else {})}
    perftest = {**(shared or {}).get("perftest", {}), **(own.get("perftest", {}) if isinstance(own, dict) else {})}
    nccl_tests = {**(shared or {}).get("ncclTests", {}), **(own.get("ncclTests", {}) if isinstance(own, dict) else {})}
    return AcceptanceSettings(
        image=str(given.get("image", "")),
        namespace=str(given.get("namespace", cluster["namespaces"][0])),
        collectives=tuple(given.get("collectives", DEFAULT_COLLECTIVES)),
        nccl_tests_dir=str(nccl_tests.get("dir", DEFAULT_NCCL_TESTS_DIR)).rstrip("/") or "/",
        nccl_tests_suffix=str(nccl_tests.get("suffix", DEFAULT_NCCL_TESTS_SUFFIX)),
        min_bytes=str(given.get("minBytes", DEFAULT_MIN_BYTES)),
        max_bytes=str(given.get("maxBytes", DEFAULT_MAX_BYTES)),
        step_factor=int(given.get("stepFactor", DEFAULT_STEP_FACTOR)),
        iterations=int(given.get("iterations", DEFAULT_ITERATIONS)),
        warmup_iterations=int(given.get("warmupIterations", DEFAULT_WARMUP_ITERATIONS)),
        max_nodes=int(given["maxNodes"]) if "maxNodes" in given else None,
        perftest_seconds=int(perftest.get("seconds", DEFAULT_PERFTEST_SECONDS)),
        perftest_bytes=int(perftest.get("sizeBytes", DEFAULT_PERFTEST_BYTES)),
        perftest_queue_pairs=int(perftest.get("queuePairs", DEFAULT_PERFTEST_QUEUE_PAIRS)),
    )


def acceptance_profiles(cluster: dict[str, Any], hardware: dict[str, dict[str, Any]],
                        exclusive_devices: bool, claimed_nics: bool) -> list[AcceptanceProfile]:
    """Every acceptance job of a (schema-valid) cluster profile, in pool then test order.

    `hardware`: the plain hardware profiles by name; `exclusive_devices`: the network provider gives each pod only
    its rails' own VFs (perftest then opens the one device it sees); `claimed_nics`: workers claim each rail's NIC
    with the GPUs beside it through DRA, one worker a node (a rail test claims that one group), where otherwise a rail
    test takes whole nodes, so that nothing else shares their PCIe and NICs while it measures. Pools without GPUs,
    or with one node, have no fabric between GPUs to prove: none.
    """
    found: list[AcceptanceProfile] = []
    backend = str(cluster.get("jobBackend", "mpijob"))
    for pool in cluster.get("nodePools", []):
        settings = pool_settings(cluster, pool)
        node = hardware.get(pool["hardware"])
        if settings is None or node is None:
            continue
        gpus = int(node.get("gpu", {}).get("count", 0))
        nodes = int(pool["nodes"]) if settings.max_nodes is None else min(int(pool["nodes"]), settings.max_nodes)
        if gpus == 0 or nodes < 2:
            continue
        base = {"apiVersion": "mpigen/v1alpha1", "kind": "Job", "cluster": cluster["name"], "pool": pool["name"],
                "namespace": settings.namespace, "image": settings.image, "naming": "stable",
                "runPolicy": {"backoffLimit": 0, "cleanPodPolicy": "Running"}}
        scopes = [(Scope.PAIR, 2)] + ([(Scope.POOL, nodes)] if nodes > 2 else [])
        for collective in settings.collectives:
            for scope, workers in scopes:
                test = CollectiveTest(collective, scope, f"{settings.nccl_tests_dir.rstrip('/')}/{collective}"
                                      f"{settings.nccl_tests_suffix}", settings.min_bytes, settings.max_bytes,
                                      settings.step_factor, settings.iterations, settings.warmup_iterations)
                name = acceptance_job_name(pool["name"], collective_test_name(collective, scope))
                data = {**base, "name": name, "workers": workers, "gpusPerWorker": gpus, "program": list(test.program)}
                found.append(AcceptanceProfile(data, Acceptance(pool["name"], collective=test)))
        nics = {nic["name"]: nic for nic in node.get("nics", [])}
        pool_rails = [rail for rail in cluster.get("rails", []) if rail.get("nic") in nics]
        for rail in pool_rails:
            nic = nics[rail["nic"]]
            roce = nic.get("linkType") == LinkType.ETHERNET.value
            test_of_rail = RailTest(
                rail=rail["name"], device=None if exclusive_devices else nic.get("hca"), port=int(nic.get("port", 1)),
                gid_index=ROCE_GID_INDEX if roce else None, seconds=settings.perftest_seconds,
                size_bytes=settings.perftest_bytes, queue_pairs=settings.perftest_queue_pairs)
            name = acceptance_job_name(pool["name"], rail_test_name(rail["name"]))
            beside = (len(nic.get("gpus", [])) or max(1, gpus // len(pool_rails))) if claimed_nics else gpus
            data = {**base, "name": name, "workers": 2, "gpusPerWorker": beside, "slotsPerWorker": 1,
                    "workerSpread": "one-per-node", "rails": [rail["name"]],
                    "program": ["bash", "-c", perftest_script(test_of_rail)],
                    "env": {PERFTEST_SERVER_VARIABLE: first_worker_host(name, settings.namespace,
                                                                         str(cluster.get("jobBackend", backend)))}}
            found.append(AcceptanceProfile(data, Acceptance(pool["name"], rail_test=test_of_rail)))
    return found
