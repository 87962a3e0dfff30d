"""What `mpigen explain` and `mpigen plan` say of a job's devices under Dynamic Resource Allocation: for each rail,
the chain from the hardware profile's line that pairs its NIC with GPUs, to the claim's requests and constraint, to
the NCCL and UCX variables that name the NIC; where the ComputeDomain and its channel claim come from; and why the
worker asks for no `nvidia.com/gpu`. The claim itself is model/devices.py's, the objects manifests/devices.py's: the
words here read the same pairs."""

from __future__ import annotations

from mpigen.insight.explanation import Fact
from mpigen.insight.facts import Where, fact, own, said
from mpigen.manifests.devices import nic_selector
from mpigen.model import Hardware, Job, names, stated
from mpigen.model.devices import NIC_DISTANCE, Alignment, DevicePair, WorkerDevices, hardware_groups
from mpigen.vocabulary import dra

SECTION = "devices"
ALIGNMENT_WORDS = {Alignment.PCIE_ROOT: "same PCIe root", Alignment.NUMA_NODE: "same NUMA node",
                   Alignment.NONE: "not aligned"}
"""How plan and the picture say what a pair's GPUs and NIC share."""
NAMING_VARIABLES = ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "UCX_NET_DEVICES")
"""The variables that name a rail's NIC: its interface in the pod (sockets, bootstrap), its HCA (RDMA)."""


def pair_text(pair: DevicePair) -> str:
    """`rail0 NIC nic0 (ibp24s0) + 1 GPU (same PCIe root)`; GPUs claimed alone: `8 GPUs (no NIC)`."""
    gpus = _gpus(pair.gpus)
    if pair.rail is None or pair.nic is None:
        return f"{gpus} (no NIC)"
    interface = f" ({pair.interface})" if pair.interface else ""
    if not pair.gpus:  # a CPU worker's NIC: nothing to pair it with
        return f"{pair.rail} NIC {pair.nic}{interface}"
    return f"{pair.rail} NIC {pair.nic}{interface} + {gpus} ({ALIGNMENT_WORDS[pair.alignment]})"


def _gpus(count: int) -> str:
    return f"{count} GPU" + ("s" if count != 1 else "")


def claims_text(devices: WorkerDevices) -> str:
    """What one worker claims, for plan: each pair, and the ComputeDomain's channel."""
    return ", ".join([pair_text(pair) for pair in devices.pairs]
                     + (["its ComputeDomain's IMEX channel"] if devices.channel else []))


def nic_index(hardware: Hardware, nic: str) -> int:
    """The position of NIC `nic` in the hardware profile's `nics` (where its line is)."""
    return next(i for i, n in enumerate(hardware.nics) if n.name == nic)


def fact_keys(hardware: Hardware, pair: DevicePair) -> tuple[str | int, ...]:
    """Where in the hardware profile the pair's fact (`DevicePair.fact`) is written: the NIC's `gpus`, the GPUs'
    `nicDistance`, the NIC's `numaNode`, or the NIC itself (model/devices.py `nic_groups`, most precise first)."""
    basis = hardware_groups(hardware)[stated(pair.nic)].basis
    if basis == NIC_DISTANCE:
        return NIC_DISTANCE
    return ("nics", nic_index(hardware, stated(pair.nic)), *basis)


def claimed_rail(job: Job, rail: str) -> str | None:
    """How a rail reaches the pod where the claim holds its NIC (dranet): the request and the interface DRANET names;
    None where the rail is attached some other way."""
    devices = job.devices
    pair = next((p for p in devices.pairs if p.rail == rail), None) if devices and devices.nic_class else None
    if pair is None:
        return None
    return (f"DRANET device of request {pair.nic_request} in claim {names.DEVICES_CLAIM}, interface "
            f"{names.rail_interface(rail)} in the pod")


def gpu_resource_fact(job: Job, at_cluster: Where) -> Fact:
    """Why a worker under DRA has no `nvidia.com/gpu` limit (nor any rail's resource)."""
    devices = stated(job.devices)
    resource = stated(job.pool.hardware.gpu).resource
    return fact("worker resources", resource, f"none: {job.gpus_per_worker} GPUs claimed through DRA (claim "
                f"{names.DEVICES_CLAIM})",
                said(at_cluster("dra"), "dra", f"cluster {job.cluster.name}'s dra")
                + f": the GPUs come from DeviceClass {devices.gpu_class}, which stands for {dra.GPU_EXTENDED_RESOURCE} "
                "(its extendedResourceName): a limit on it as well would allocate the GPUs twice"
                + (", and the rails' NICs are in the claim too, so no rail's resource is asked for either"
                   if devices.nic_class else ""))


def device_facts(job: Job, run: str, at: Where, at_cluster: Where, at_hw: Where) -> list[Fact]:
    """The devices section of explain: the claim, each pair's chain, the ComputeDomain; nothing without DRA."""
    devices = job.devices
    if devices is None or not devices.pairs:
        return _domain_facts(job, run, at_cluster, at_hw)
    classes = said(at_cluster("dra", "gpuDeviceClass"), "dra.gpuDeviceClass",
                   f"default: {dra.GPU_DEVICE_CLASS} (NVIDIA's GPU DRA driver installs it)")
    facts = [fact(SECTION, "claim", f"ResourceClaimTemplate {names.device_claim_template_name(run)}: one ResourceClaim "
                  f"a worker, pod claim {names.DEVICES_CLAIM}",
                  said(at_cluster("dra"), "dra", f"cluster {job.cluster.name}'s dra")
                  + ": the workers' GPUs" + (" and NICs" if devices.nic_class else "") + " are allocated through "
                  "Dynamic Resource Allocation, each request counted exactly"),
             fact(SECTION, "GPU DeviceClass", devices.gpu_class, classes)]
    if devices.nic_class:
        facts.append(fact(SECTION, "NIC DeviceClass", devices.nic_class,
                          said(at_cluster("dra", "nicDeviceClass"), "dra.nicDeviceClass",
                               f"default: {dra.NIC_DEVICE_CLASS}, which the infra chart writes (DRANET's RDMA NICs)")))
    for pair in devices.pairs:
        facts += _pair_facts(job, devices, pair, at_cluster, at_hw)
    return facts + _domain_facts(job, run, at_cluster, at_hw)


def _pair_facts(job: Job, devices: WorkerDevices, pair: DevicePair, at_cluster: Where, at_hw: Where) -> list[Fact]:
    """A pair's chain: the hardware line that pairs them, the claim's requests, the variables that name the NIC."""
    gpus = f"{pair.gpus} x {devices.gpu_class}"
    if pair.rail is None or pair.nic is None or devices.nic_class is None:
        why = (f"network.provider {job.cluster.network.provider.value} gives pods the rails some other way"
               if job.rails else "the job attaches no rails")
        return [fact(SECTION, "GPUs", f"request {pair.gpu_request} ({gpus}), no constraint",
                     f"{why}: the claim holds the GPUs alone, and nothing places them beside a NIC")]
    hardware = job.pool.hardware
    index = nic_index(hardware, pair.nic)
    nic = hardware.nics[index]
    share = f"; the worker's {job.gpus_per_worker} GPUs spread evenly over its {len(devices.pairs)} rails"
    pairing = said(at_hw(*fact_keys(hardware, pair)), pair.fact, pair.fact) + share
    attribute = pair.alignment.attribute
    constraint = f", matchAttribute {attribute}" if attribute else ", no constraint (the hardware says not where)"
    selector = f", {nic_selector(pair)}" if pair.interface else ""
    interface = names.rail_interface(pair.rail)
    rail_index = next(i for i, r in enumerate(job.cluster.rails) if r.name == pair.rail)
    rail = job.cluster.rails[rail_index]
    selected = (said(at_cluster("rails", rail_index, "hostInterface"), f"hostInterface {rail.host_interface} of rail "
                     f"{pair.rail}", "") if rail.host_interface else
                said(at_hw("nics", index, "pfName"), f"pfName {nic.pf_name} of NIC {nic.name}", "")
                if nic.pf_name else own(f"NIC {nic.name} names no interface (pfName)"))
    requests = fact(SECTION, f"{pair.rail} claim", f"requests {pair.gpu_request} ({gpus}) and {pair.nic_request} (1 x "
                    f"{devices.nic_class}{selector}){constraint}; DRANET names it {interface} in the pod",
                    selected + ": the NIC's interface on the node, which the request selects it by; the claim's "
                    f"opaque config (driver {dra.NIC_DRIVER}) names it {interface} in the pod")
    named = _naming(job, interface, nic.hca, nic.port)
    hca = said(at_hw("nics", index, "hca"), f"hca {nic.hca} of NIC {nic.name}", f"NIC {nic.name}")
    variables = fact(SECTION, f"{pair.rail} in NCCL and UCX", named or "no variable names it (the job's env says "
                     "otherwise)", hca + f"; NCCL_SOCKET_IFNAME names the interface {interface}, and the selector "
                     "pins the NIC, so NCCL_IB_HCA and UCX_NET_DEVICES name its HCA exactly")
    return [fact(SECTION, f"{pair.rail} pairing", f"NIC {pair.nic} + {_gpus(pair.gpus)}, "
                 f"{ALIGNMENT_WORDS[pair.alignment]}", pairing), requests, variables]


def _naming(job: Job, interface: str, hca: str | None, port: int) -> str:
    """`NCCL_SOCKET_IFNAME rail0; NCCL_IB_HCA mlx5_0:1; ...`: each variable of the job whose value names the rail's
    interface (or its NIC's HCA)."""
    named = []
    values = {var.name: var.value for var in job.env if var.secret is None and var.run_ref is None}
    for name in NAMING_VARIABLES:
        for item in values.get(name, "").lstrip("=^").split(","):
            wanted = interface if name == "NCCL_SOCKET_IFNAME" else hca
            if wanted and item.split(":")[0] == wanted:
                named.append(f"{name} {item}")
    return "; ".join(named)


def _domain_facts(job: Job, run: str, at_cluster: Where, at_hw: Where) -> list[Fact]:
    """On multi-node NVLink: the ComputeDomain every worker joins, or why there is none."""
    hardware = job.pool.hardware
    gpu = hardware.gpu
    if job.devices is None or not job.uses_gpus or gpu is None or not gpu.multi_node_nvlink:
        return []
    nvlink = said(at_hw("gpu", "nvlinkDomainGpus"), f"gpu.nvlinkDomainGpus {gpu.nvlink_domain_gpus} of hardware "
                  f"{hardware.name}", f"hardware {hardware.name}") + \
        f": NVLink joins {gpu.nvlink_domain_gpus} GPUs across nodes ({gpu.count} a node)"
    switch = said(at_cluster("dra", "computeDomains"), "dra.computeDomains", "default: dra.computeDomains true")
    if not job.devices.channel:
        return [fact(SECTION, "ComputeDomain", "none", nvlink + f"; {switch}: no IMEX channel, so NCCL keeps NVLink "
                     "within a node (NCCL_MNNVL_ENABLE 0)")]
    return [fact(SECTION, "ComputeDomain", f"{names.compute_domain_name(run)}; every worker claims its IMEX channel "
                 f"(ResourceClaimTemplate {names.channel_template_name(run)}, pod claim {names.CHANNEL_CLAIM})",
                 nvlink + f"; {switch}: NCCL opens NVLink between nodes only through the channel (NCCL_MNNVL_ENABLE 1)")]
