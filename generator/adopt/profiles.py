"""Pools -> the YAML text of Hardware and Cluster profiles, every value with a comment naming the object and field
it came from, or marked a guess (GUESS) with what to read to replace it, as `mpigen init`'s starting fleet does.

Rounding: a GPU's memory (GFD's `nvidia.com/gpu.memory`, MiB) to the nearest GiB, a node's (`.status.capacity
.memory`) down to a whole GiB, so that no quota counts memory the node does not have.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from mpigen.adopt.node_facts import NodeFacts
from mpigen.adopt.pools import GPU_COUNT, GPU_MEMORY, GPU_PRODUCT, Pool
from mpigen.adopt.result import ProfileText
from mpigen.inventory.operators import PfState
from mpigen.model.cluster import NetworkProvider
from mpigen.support.diagnostics import one_line
from mpigen.vocabulary.kubernetes import quantity, whole_quantity
from mpigen.vocabulary.node_facts import GUESS_MARK, READ_ON_NODE

GUESS = GUESS_MARK
STAMP = "# written by `mpigen import`; edit freely: a re-import then asks for --force. digest "
GPU_RESOURCE = "nvidia.com/gpu"
_BYTES_PER_GIB = 1024 ** 3
MELLANOX_VENDOR = "15b3"
VF_DEVICE_IDS = {"1013": "1014", "1015": "1016", "1017": "1018", "1019": "101a", "101b": "101c", "101d": "101e",
                 "101f": "101e", "1021": "101e", "1023": "101e", "1025": "101e", "a2d6": "101e", "a2dc": "101e"}
"""The SR-IOV VF device id of each NVIDIA (Mellanox, vendor 15b3) PF the SR-IOV network operator supports,
ConnectX-4 to ConnectX-9 and the BlueField-2/3 NICs, as its `supported-nic-ids` ConfigMap lists them
(copied as deployment__chart__templates__configmap__supported-nic-ids.yaml beside the operator's CRDs in
tests/upstream/network/):
for a guess where the export shows no VF. Other vendors' device ids overlap these (Intel's 8086:1015 is an 82540EM)."""
GUESSED_DEVICE_ID = "1021"
"""A ConnectX-7, guessed where the export names no PCI device id at all."""


def q(value: object) -> str:
    """A YAML scalar: numbers bare, strings double-quoted (JSON's form is YAML's)."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else json.dumps(str(value))


def node_field(pool: Pool, path: str) -> str:
    return f"Node {pool.first.name} {path}"


def _memory_gib(raw: str | None) -> int | None:
    """A Node's memory quantity (`2113389776Ki`, `2Ti`, `512G`) in whole GiB, rounded down; None where it is none,
    or under one GiB (which no profile takes)."""
    try:
        gib = int(quantity(raw)) // _BYTES_PER_GIB if raw is not None else 0
    except ValueError:
        return None
    return gib if gib > 0 else None


class _Text:
    """Lines of a profile and how many values in it are guesses."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.guesses = 0

    def fact(self, indent: str, key: str, value: object, origin: str) -> None:
        self.lines.append(f"{indent}{key}: {q(value)}  # {origin}")

    def guess(self, indent: str, key: str, value: object, read: str) -> None:
        self.guesses += 1
        self.lines.append(f"{indent}{key}: {q(value)}  # {GUESS} {read}")

    def text(self) -> str:
        """The lines, each kept one line (`one_line`): a comment names nodes, labels and objects as exported, and a
        newline in one of them would start a line of YAML the export wrote."""
        return stamped("\n".join(one_line(line) for line in self.lines) + "\n")


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def stamped(body: str) -> str:
    """The text with a last line holding a digest of the lines above: a later import tells a file it wrote (and may
    replace) from one a person has edited since (which it refuses without --force)."""
    return f"{body}{STAMP}{_digest(body)}\n"


def edited_since_import(text: str) -> bool:
    """Whether a profile's text is no longer what an import wrote: its stamp is missing or does not match."""
    body, _, last = text.rstrip("\n").rpartition("\n")
    return not last.startswith(STAMP) or last[len(STAMP):] != _digest(body + "\n")


def _nic_of(pool: Pool, interface: str) -> PfState | None:
    return next((pf for pf in pool.states if pf.name == interface), None)


def hardware_text(pool: Pool, facts: NodeFacts | None = None) -> tuple[ProfileText, int]:
    """The pool's Hardware profile and the number of its guesses; `facts`: what the tools printed on one of its
    nodes (--node-facts)."""
    node, out = pool.first, _Text()
    out.lines += [f"# The {len(pool.nodes)} node(s) of pool {pool.name}, as exported; facts are the first node's "
                  f"({node.name}), the pool's nodes agree on them.",
                  "apiVersion: mpigen/v1alpha1", "kind: Hardware", f"name: {pool.name}"]
    count = whole_quantity(node.labels.get(GPU_COUNT)) if GPU_COUNT in node.labels else None
    gpus = node.offers(GPU_RESOURCE)
    if count or gpus:
        out.lines.append("gpu:" + (f"  # {GUESS} the GPUs are partitioned ({node.gpus_partitioned}): the count and model "
                                   "below are the slices GFD labels, not whole GPUs; turn MIG and sharing off on these "
                                   "nodes, or read the whole GPUs from `nvidia-smi -L`" if node.gpus_partitioned else ""))
        out.guesses += 1 if node.gpus_partitioned else 0
        if count:
            out.fact("  ", "count", count, node_field(pool, f'.metadata.labels["{GPU_COUNT}"]'))
        else:
            out.fact("  ", "count", gpus, node_field(pool, f'.status.allocatable["{GPU_RESOURCE}"]'))
        if GPU_PRODUCT in node.labels:
            out.fact("  ", "model", node.labels[GPU_PRODUCT], node_field(pool, f'.metadata.labels["{GPU_PRODUCT}"]'))
        else:
            out.guess("  ", "model", "unknown", f"the label {GPU_PRODUCT} (GPU feature discovery) of a node")
        mib = whole_quantity(node.labels.get(GPU_MEMORY)) if GPU_MEMORY in node.labels else None
        if mib is not None:
            out.fact("  ", "memoryGiB", max(1, round(mib / 1024)),
                     node_field(pool, f'.metadata.labels["{GPU_MEMORY}"]') + f" = {mib} MiB, to the nearest GiB")
        if gpus is not None:
            out.fact("  ", "resource", GPU_RESOURCE, node_field(pool, f'.status.allocatable["{GPU_RESOURCE}"]'))
    _nics(pool, out, facts or NodeFacts(pool.first.name))
    _cpu(pool, out, facts)
    memory = _memory_gib(node.capacity.get("memory") or node.allocatable.get("memory"))
    if memory is not None:
        out.fact("", "memoryGiB", memory, node_field(pool, ".status.capacity.memory") + ", down to a whole GiB")
    if pool.selector:
        out.lines.append("nodeLabels:" + ("" if pool.apart else f"  # {GUESS} no label tells these nodes from another "
                                          "pool's; give them one (`kubectl label node`) and select it here"))
        out.guesses += 0 if pool.apart else 1
        for key, value in pool.selector:
            out.fact("  ", q(key), value, node_field(pool, f'.metadata.labels["{key}"]'))
    elif not pool.apart:  # the nodes share no label at all: still said, or the pool would pick every node unmarked
        out.guesses += 1
        out.lines.append(f"# nodeLabels: {{}}  # {GUESS} the nodes share no label that tells them from another pool's; "
                         "give them one (`kubectl label node`) and select it here")
    return ProfileText("Hardware", pool.name, out.text()), out.guesses


def _cpu(pool: Pool, out: _Text, facts: NodeFacts | None = None) -> None:
    """A Node says only its logical CPUs: sockets and threads stay guesses, the cores per socket follow from them;
    `nvidia-smi topo -m` says how many NUMA nodes there are at least (its highest NUMA affinity), and so how many
    each of the guessed sockets has (an EPYC in NPS4 has four)."""
    out.lines.append("cpu:")
    out.guess("  ", "model", "unknown", "`lscpu`: Model name")
    out.guess("  ", "sockets", 2, "`lscpu`: Socket(s)")
    logical = whole_quantity(pool.first.capacity.get("cpu")) if "cpu" in pool.first.capacity else None
    if logical and logical % 4 == 0:
        out.guess("  ", "coresPerSocket", logical // 4, node_field(pool, f".status.capacity.cpu = {logical} logical "
                  "CPUs over the guessed sockets and threads; `lscpu`: Core(s) per socket"))
    out.guess("  ", "threadsPerCore", 2, "`lscpu`: Thread(s) per core")
    topo = facts.topo if facts is not None else None
    numa = [n for n in (*topo.gpu_numa.values(), *topo.nic_numa.values()) if n is not None] if topo is not None else []
    if numa and max(numa) + 1 > 2 and (max(numa) + 1) % 2 == 0:
        out.guess("  ", "numaNodesPerSocket", (max(numa) + 1) // 2,
                  f"{facts.topo_source if facts else ''}: NUMA affinity up to {max(numa)}, over the guessed sockets; "
                  "`lscpu`: NUMA node(s)")


def _nics(pool: Pool, out: _Text, facts: NodeFacts) -> None:
    if not pool.rdma:
        return
    out.lines.append("nics:  # one per RDMA resource the nodes advertise")
    for index, resource in enumerate(pool.rdma):
        nad = pool.attachments.get(resource.resource)
        interface = resource.interfaces[0] if len(resource.interfaces) == 1 else (nad.master if nad else None)
        pf = _nic_of(pool, interface) if interface else None
        out.lines.append(f"  - name: {q(interface or f'nic{index}')}  # {resource.where}")
        port = facts.port_of(interface) if interface else None
        if port is not None:
            out.fact("    ", "hca", port.hca, f"{facts.ports_source}:{port.line} (ibdev2netdev on {facts.node})")
            out.fact("    ", "port", port.port, f"{facts.ports_source}:{port.line}")
        else:
            out.guess("    ", "hca", f"mlx5_{index}", READ_ON_NODE["hca"])
        if interface:
            out.fact("    ", "pfName", interface, resource.where + (".selectors" if len(resource.interfaces) == 1
                                                                       else f" via {nad.where if nad else ''} master"))
        vendor = pf.vendor if pf and pf.vendor else (resource.vendors[0] if len(resource.vendors) == 1 else None)
        if vendor:
            out.fact("    ", "vendorId", vendor,
                     f"{pf.where}.vendor" if pf and pf.vendor else f"{resource.where}.selectors.vendors")
        else:
            out.guess("    ", "vendorId", MELLANOX_VENDOR, READ_ON_NODE["vendorId"])
        device = pf.device_id if pf else None
        listed = facts.device_of(pf.pci_address if pf else None)
        if device:
            out.fact("    ", "deviceId", device, f"{pf.where}.deviceID" if pf else "")
        elif listed is not None:
            device = listed.device_id
            out.fact("    ", "deviceId", device, f"{facts.pci_source}:{listed.line} (lspci -nn on {facts.node})")
        else:
            device = GUESSED_DEVICE_ID
            out.guess("    ", "deviceId", device, READ_ON_NODE["deviceId"])
        if pf and pf.vf_device_id:
            out.fact("    ", "vfDeviceId", pf.vf_device_id, f"{pf.where}.Vfs[].deviceID")
        elif len(resource.devices) == 1 and resource.plugin != NetworkProvider.RDMA_SHARED.value:
            out.fact("    ", "vfDeviceId", resource.devices[0], f"{resource.where}.selectors.devices")
        elif resource.plugin != NetworkProvider.RDMA_SHARED.value and len(facts.vf_device_ids(vendor)) == 1:
            out.fact("    ", "vfDeviceId", facts.vf_device_ids(vendor)[0], f"{facts.pci_source} (lspci -nn on "
                     f"{facts.node}: its one Virtual Function id)")
        elif (resource.plugin != NetworkProvider.RDMA_SHARED.value and vendor in (None, MELLANOX_VENDOR)
              and device in VF_DEVICE_IDS):
            out.guess("    ", "vfDeviceId", VF_DEVICE_IDS[device],
                      f"the VF id of a {device} PF; " + READ_ON_NODE["vfDeviceId"])
        if pf and pf.driver:
            out.fact("    ", "driver", pf.driver, f"{pf.where}.driver")
        if pf and pf.link_type:
            out.fact("    ", "linkType", pf.link_type, f"{pf.where}.linkType")
        elif nad and nad.cni_type in ("ipoib", "ib-sriov"):
            out.fact("    ", "linkType", "InfiniBand", f"{nad.where} type {nad.cni_type} (IP over InfiniBand)")
        else:
            out.guess("    ", "linkType", "InfiniBand", READ_ON_NODE["linkType"])
        if pf and pf.speed_gbps:
            out.fact("    ", "speedGbps", pf.speed_gbps, f"{pf.where}.linkSpeed")
        if port is not None and facts.numa_of(port.hca) is not None:
            out.fact("    ", "numaNode", facts.numa_of(port.hca),
                     f"{facts.topo_source} (nvidia-smi topo -m on {facts.node})")
        if port is not None and facts.gpus_near(port.hca):
            near = ", ".join(str(gpu) for gpu in facts.gpus_near(port.hca))
            out.lines.append(f"    gpus: [{near}]  # {facts.topo_source}: the GPUs nearest {port.hca} (PIX, PXB, PHB)")
    railed = {r.interfaces[0] for r in pool.rdma if len(r.interfaces) == 1}
    for pf in pool.states:
        if pf.name not in railed:
            out.lines.append(f"  # not a rail: {pf.name} ({pf.link_type or 'link type unknown'}; {pf.where}) has no "
                             "device plugin resource, e.g. a storage NIC")


def _oldest(kubelets: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The oldest kubelet's major.minor and its node, compared as numbers (`v1.9.3` is older than `v1.10.0`, which
    sorts first as text); None where no kubeletVersion reads as one (`v1.31.4-eks-...` reads as 1.31)."""
    versions = []
    for node, raw in kubelets:
        parts = raw.lstrip("v").split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            versions.append((int(parts[0]), int(parts[1]), node))
    if not versions:
        return None
    major, minor, node = min(versions)
    return f"{major}.{minor}", node


def cluster_text(name: str, pools: Sequence[Pool], provider: str, prefix: str | None, kubelets: Sequence[tuple[str, str]],
                 namespaces: Sequence[str]) -> tuple[ProfileText, int]:
    """The Cluster profile of the pools: `kubelets` (node, kubeletVersion) as exported, `namespaces` the Namespace
    objects of the export that are not Kubernetes' own nor a controller's, all of them existing already."""
    out = _Text()
    out.lines += [f"# Cluster {name}, imported by `mpigen import` from exported objects.", "apiVersion: mpigen/v1alpha1",
                  "kind: Cluster", f"name: {name}"]
    oldest = _oldest(kubelets)
    if oldest:
        version, node = oldest
        out.fact("", "kubernetesVersion", version, f"Node {node} .status.nodeInfo.kubeletVersion (the oldest kubelet)")
    else:
        out.guess("", "kubernetesVersion", "1.31", "`kubectl version`: the Server Version, major.minor")
    if namespaces:
        out.lines.append("namespaces:  # the Namespace objects of the export")
        out.lines += [f"  - {q(ns)}" for ns in namespaces]
        # They exist: an infra chart that created them would fail to install ("exists and cannot be imported").
        out.lines.append("existingNamespaces:  # the export has them: the infra chart creates none of them")
        out.lines += [f"  - {q(ns)}" for ns in namespaces]
    else:
        out.guesses += 1
        out.lines += [f"namespaces:  # {GUESS} where the jobs run; `kubectl get namespaces`", "  - training"]
    out.lines.append("network:")
    origins = sorted({r.where.split(" .")[0] for p in pools for r in p.rdma})
    out.fact("  ", "provider", provider, f"{', '.join(origins)} names the RDMA resources the nodes advertise"
             if origins else "no node advertises an RDMA resource")
    if prefix:
        out.fact("  ", "resourcePrefix", prefix, "the prefix of the resources the nodes advertise")
    vfs = sorted({(pf.num_vfs, pf.where) for p in pools for pf in p.states if pf.num_vfs
                  and any(pf.name in r.interfaces for r in p.rdma)}, key=lambda nw: nw[0])
    if vfs and provider == NetworkProvider.SRIOV_NETWORK_OPERATOR.value:
        out.fact("  ", "numVfs", vfs[0][0], f"{vfs[0][1]}.numVfs (the fewest of any rail's PF)")
    out.lines.append("nodePools:")
    for pool in pools:
        out.lines += [f"  - name: {pool.name}", f"    hardware: {pool.name}"]
        last = f" .. {pool.nodes[-1].name}" if len(pool.nodes) > 1 else ""
        out.fact("    ", "nodes", len(pool.nodes), f"the exported Nodes alike: {pool.first.name}{last}")
        if pool.first.placement_taints:
            out.lines.append(f"    taints:  # Node {pool.first.name} .spec.taints")
            for taint in pool.first.placement_taints:
                value = f", value: {q(taint.value)}" if taint.value else ""
                out.lines.append(f"      - {{key: {q(taint.key)}{value}, effect: {q(taint.effect)}}}")
    _rails(pools, out)
    return ProfileText("Cluster", name, out.text()), out.guesses


def _rails(pools: Sequence[Pool], out: _Text) -> None:
    rails = [(pool, index, resource) for pool in pools for index, resource in enumerate(pool.rdma)]
    if not rails:
        return
    out.lines.append("rails:  # one per RDMA resource the nodes advertise")
    taken: set[str] = set()
    for number, (pool, index, resource) in enumerate(rails):
        nad = pool.attachments.get(resource.resource)
        interface = resource.interfaces[0] if len(resource.interfaces) == 1 else (nad.master if nad else None)
        name = nad.name if nad and len(nad.name) <= 15 and nad.name not in taken else f"rail{number}"
        taken.add(name)
        out.lines.append(f"  - name: {q(name)}" + (f"  # {nad.where}" if nad else ""))
        out.lines.append(f"    nic: {q(interface or f'nic{index}')}")
        out.fact("    ", "resourceName", resource.resource.split("/", 1)[1], resource.where)
        if resource.plugin == NetworkProvider.RDMA_SHARED.value and interface:
            out.fact("    ", "hostInterface", interface, f"{resource.where}.selectors.ifNames")
        out.lines.append("    ipam:")
        if nad and nad.ipam_range:
            out.fact("      ", "range", nad.ipam_range, f"{nad.where} ipam (whereabouts)")
        else:
            out.guess("      ", "range", f"192.168.{100 + number}.0/24", "a subnet of this rail's fabric no one else "
                      "uses (the rail's NetworkAttachmentDefinition ipam.range)")
