"""What the fabric should give, as numbers with their sources: a link's line rate, the share of it ib_write_bw and
nccl-tests reach on healthy hardware, NVLink's bandwidth by generation, and how nccl-tests and perftest say what they
measured. model/floors.py turns them into a rail's and a job's floors; `mpigen verify` judges logs by them.

Each fraction is named here once, with why it is what it is. They are floors an acceptance test must pass on healthy
hardware, not what a tuned system reaches: a floor that healthy hardware sometimes misses teaches a team to ignore it.

Sources:
- InfiniBand data rates of a 4x port, as the IBTA's roadmap names them and NVIDIA's adapters and switches are sold:
  EDR 100, HDR 200, NDR 400, XDR 800 Gb/s (data rates after encoding; ibstat's `Rate`). Ethernet (RoCE) runs at the
  port's speed (`ethtool`'s Speed).
- NVIDIA/nccl-tests @ a0b82b2260cf5152b9f8c061bbf7eaf0ba096432 (NCCL_TESTS_VERSION 2.19.6): doc/PERFORMANCE.md (bus
  bandwidth, "we can compare it with the hardware peak bandwidth, independently of the number of ranks used"; its
  factor per collective); src/util.cu (what a run prints: the header, the `#  Rank` lines, the table, `# Out of bounds
  values`, `# Avg bus bandwidth`, `# Collective test starting/concluded`).
- linux-rdma/perftest @ 00b55b6660d0170dabe2c1b49193e8fbe265086e (version 6.29): src/perftest_parameters.h (RESULT_FMT,
  RESULT_FMT_G, RESULT_FMT_LAT, REPORT_FMT), src/perftest_parameters.c (ctx_print_test_info: `Device`, `Link type`;
  print_report_bw: `--report_gbits` divides bytes by 125,000,000, so Gb/sec is 10^9 bits; without it MiB/sec, 2^20
  bytes, which older releases print as `[MB/sec]`).
- Mellanox/ngc_multinode_perf @ 03f321e2041c8f66d3646ff6324a1a590626ab7e, README.md: NVIDIA's NGC-Ready multi-node
  certification runs ib_write_bw between two hosts, "Pass criterion is 90% of the port link speed".
- NVIDIA's NCCL maintainers on what a healthy NIC gives NCCL: NVIDIA/nccl-tests#290 ("For NDR @ 400Gbps you should
  see 46-48GB/s per NIC", i.e. 92-96% of its 50 GB/s); NVIDIA/nccl#412 ("24GB/s inter-node" on HDR's 25 GB/s, 96%;
  "If the NIC is attached to the CPU getting 16 GB/s is normal", 64%: no GPUDirect RDMA).
- google/dranet @ 7b7661a153a6815194e957bd33147b538675e56e, site/content/docs/concepts/hardware-efficiency.md: one GPU
  and one RDMA NIC a worker, all_reduce busbw 46.93 GB/s with the GPU and NIC under one PCIe root, 29.68 GB/s without;
  on GKE's A3 Ultra and A4 machines, whose eight ConnectX-7 NICs give 3,200 Gbps, 400 Gb/s each, one beside each GPU
  (Google Cloud, "Networking and GPU machines"): 94% and 59% of the NIC's 50 GB/s.
- NVLink per GPU, both directions together (NVIDIA's NVLink page and the GPUs' data sheets): 2nd generation (V100) 300
  GB/s, 3rd (A100) 600 GB/s, 4th (H100, H200) 900 GB/s, 5th (B200, GB200) 1,800 GB/s; half of it each way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

BITS_PER_BYTE = 8

INFINIBAND_GENERATIONS = {100: "EDR", 200: "HDR", 400: "NDR", 800: "XDR"}
"""A 4x InfiniBand port's data rate in Gb/s, by the name of its generation (the IBTA roadmap)."""
INFINIBAND_RATES_SOURCE = "InfiniBand 4x data rates: EDR 100, HDR 200, NDR 400, XDR 800 Gb/s (IBTA roadmap)"
ETHERNET_RATE_SOURCE = "RoCE runs at the Ethernet port's speed"

IB_WRITE_BW_FRACTION = 0.90
"""The share of a rail's line rate ib_write_bw's `BW average` must reach between two nodes. NVIDIA certifies a port
for NGC-Ready multi-node systems at 90% of its link speed; ib_write_bw's payload over a 4 KiB MTU is 96-98% of the
data rate on a healthy port (headers take the rest), so 90% passes healthy hardware and fails a port trained at a
lower speed or width, a NIC in a narrower PCIe slot, or a lossy RoCE fabric."""
IB_WRITE_BW_SOURCE = ("NVIDIA's NGC-Ready multi-node certification passes ib_write_bw at 90% of the port link speed "
                      "(https://github.com/Mellanox/ngc_multinode_perf/tree/03f321e2041c8f66d3646ff6324a1a590626ab7e)")

DRANET_EFFICIENCY_PAGE = ("https://github.com/google/dranet/blob/7b7661a153a6815194e957bd33147b538675e56e/site/"
                          "content/docs/concepts/hardware-efficiency.md")
"""DRANET's measurement of NCCL over aligned and unaligned GPU-NIC pairs: the project's page, not mpigen's provider."""
NCCL_BUS_BANDWIDTH_EFFICIENCY = 0.80
"""The share of the line rate of the rails a worker drives that nccl-tests' bus bandwidth must reach at the largest
sizes. NVIDIA's NCCL maintainers expect 92-96% of a healthy NIC's line rate (46-48 GB/s per NDR NIC, 24 GB/s per HDR
NIC); DRANET measured 94% with the GPU beside its NIC and 59% without. The floor sits at 80%: under what healthy
hardware gives, with room for a run across a pool's switches, and above what a fabric with GPUDirect RDMA off (NCCL
copies through host memory: 64%), a rail in two missing, or a GPU far from its NIC gives. One rail in eight missing
(87%) can pass it: each rail's own perftest floor is what catches that."""
NCCL_BUS_BANDWIDTH_SOURCE = ("NCCL's maintainers expect 46-48 GB/s per NDR NIC and 24 GB/s per HDR NIC, 92-96% "
                             "(NVIDIA/nccl-tests#290, NVIDIA/nccl#412); DRANET measured 94% aligned, 59% not "
                             f"({DRANET_EFFICIENCY_PAGE}); 80% keeps healthy hardware above it")

BUS_BANDWIDTH_FACTORS: dict[str, tuple[str, Callable[[int], float]]] = {
    "all_reduce": ("2(n-1)/n", lambda n: 2 * (n - 1) / n),
    "all_gather": ("(n-1)/n", lambda n: (n - 1) / n),
    "alltoall": ("(n-1)/n", lambda n: (n - 1) / n)}
"""nccl-tests' busbw = algbw x this factor of the rank count n, per collective (doc/PERFORMANCE.md), so that busbw
compares with the hardware's peak bandwidth whatever the rank count."""
BUS_BANDWIDTH_SOURCE = ("nccl-tests' performance notes (https://github.com/NVIDIA/nccl-tests/blob/"
                        "a0b82b2260cf5152b9f8c061bbf7eaf0ba096432/doc/PERFORMANCE.md): busbw compares with the "
                        "hardware's peak, whatever the ranks")
RING_COLLECTIVES = ("all_reduce", "all_gather")
"""Collectives whose bus bandwidth a worker's rails bound together: NCCL runs a ring (or tree) per NIC, each crossing
the node boundary through its own NIC, so busbw reaches the rails' summed rate. alltoall sends each rank's share
straight to every other rank: its busbw is bounded by one GPU's share of the rails."""

REDUCTION_NONE = "none"
"""The `redop` nccl-tests prints for a collective that reduces nothing (all_gather, alltoall)."""


@dataclass(frozen=True)
class NvLink:
    generation: int
    total_gbytes: int
    """GB/s per GPU, both directions together, as NVIDIA states it."""

    @property
    def each_way_gbytes(self) -> float:
        """What one GPU sends (or receives) at once: what a ring's busbw through it is bounded by."""
        return self.total_gbytes / 2


NVLINK_BY_GPU = (("V100", NvLink(2, 300)), ("A100", NvLink(3, 600)), ("H100", NvLink(4, 900)),
                 ("H200", NvLink(4, 900)), ("GB200", NvLink(5, 1800)), ("B200", NvLink(5, 1800)))
"""The NVLink of the SXM parts of each GPU, found in a GPU model (GFD's product label: `Tesla-V100-SXM2-16GB`,
`NVIDIA-H100-80GB-HBM3`), in this order. Export variants (A800, H800) have narrower NVLink and are not listed."""
NVLINK_SOURCE = "NVIDIA's NVLink page: 300, 600, 900, 1,800 GB/s per GPU for NVLink 2 to 5, half each way"
PCIE_CARD_MARK = "PCIE"
"""In a GPU model: a PCIe card, whose GPUs talk over PCIe (or a bridge between two), not the NVLink of its SXM part."""


def nvlink_of(model: str) -> NvLink | None:
    """The NVLink of the GPU model, None for a PCIe card or a model not listed."""
    upper = model.upper()
    if PCIE_CARD_MARK in upper:
        return None
    return next((link for name, link in NVLINK_BY_GPU if name in upper), None)


PERFTEST_GBIT = 10**9
"""perftest's `--report_gbits`: `[Gb/sec]` of 10^9 bits (format_factor 125000000 bytes)."""
PERFTEST_MEBIBYTE = 2**20
"""perftest's default unit: `[MiB/sec]` (`[MB/sec]` before 4.5-0.2), 2^20 bytes (format_factor 0x100000)."""

LARGEST_SIZES_SHARE = 0.25
"""nccl-tests' busbw is judged on the rows of at least this share of the largest size the run printed (with the
default step factor of 2: the last three). Bandwidth has reached its plateau there (PERFORMANCE.md: on large sizes the
time is linear in the size, so "it makes more sense to look at the bandwidth"); several rows, averaged, keep one lucky
or unlucky size from deciding; each row gives the better of its out-of-place and in-place busbw, which cross the
fabric alike (out-of-place also copies within the GPU's memory)."""
