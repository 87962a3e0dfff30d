"""Exported objects -> node pools: which nodes are alike, the labels that pick each pool and no other node, and
the network provider and resources the pool's nodes really advertise.

The network provider of a pool follows from who names the RDMA resources its nodes advertise (an RDMA resource is
one a device plugin config, an SR-IOV policy or a NetworkAttachmentDefinition's resourceName annotation names):
- a SriovNetworkNodePolicy (the SR-IOV network operator's own object) -> `sriov-network-operator`;
- else an SR-IOV device plugin config (`resourceList` of a ConfigMap's config.json, e.g. `sriovdp-config`) ->
  `sriov-device-plugin` (a SriovNetworkNodeState beside it only tells the NICs' facts);
- else an RDMA shared device plugin config (`configList` of the `rdma-devices` ConfigMap or of a NicClusterPolicy's
  `rdmaSharedDevicePlugin.config`) -> `rdma-shared`;
- no RDMA resource -> `tcp` (no rails).
One mpigen Cluster has one provider and one resource prefix: pools that need different ones are refused together
(AdoptionError naming them), to be imported apart with `--nodes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mpigen.adopt.result import AdoptionError
from mpigen.inventory.nodes import LiveNode, selects
from mpigen.inventory.operators import Attachment, PfState, PluginResource
from mpigen.model.cluster import NetworkProvider
from mpigen.vocabulary.gpu_feature_discovery import GFD_TIMESTAMP_LABEL, GPU_COUNT_LABEL, GPU_MEMORY_LABEL, GPU_PRODUCT_LABEL
from mpigen.vocabulary.scheduling import HOSTNAME_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL

GPU_PRODUCT, GPU_COUNT, GPU_MEMORY, INSTANCE_TYPE = GPU_PRODUCT_LABEL, GPU_COUNT_LABEL, GPU_MEMORY_LABEL, INSTANCE_TYPE_LABEL
HARDWARE_LABELS = (GPU_PRODUCT, GPU_COUNT, GPU_MEMORY, INSTANCE_TYPE)
"""The labels (GPU feature discovery's, the cloud provider's) that say what a node is: nodes alike in them, in the
extended resources they advertise and in their taints make one pool."""
PER_NODE_LABELS = (HOSTNAME_LABEL, ZONE_LABEL, GFD_TIMESTAMP_LABEL)
"""Labels never taken for a pool's selector: they name one node (or a place, or when GFD last ran), not a kind of
node; a selector of one would pick nothing once the node is replaced or GFD restarts."""
TCP = NetworkProvider.TCP.value
"""The provider of a pool without RDMA resources."""
PLAIN_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage")
PROVIDER_ORDER = (NetworkProvider.SRIOV_NETWORK_OPERATOR.value, NetworkProvider.SRIOV_DEVICE_PLUGIN.value,
                  NetworkProvider.RDMA_SHARED.value)


@dataclass(frozen=True)
class Pool:
    """Nodes alike in hardware, advertised resources and taints, and what picks them."""

    name: str
    nodes: tuple[LiveNode, ...]
    selector: tuple[tuple[str, str], ...]
    """Labels every node of the pool carries and that pick no other node of the export."""
    apart: bool
    """Whether `selector` picks this pool's nodes only (False: no label set tells them from another pool's)."""
    provider: str = TCP
    rdma: tuple[PluginResource, ...] = ()
    """The RDMA resources the pool's nodes advertise, as their device plugin config names them."""
    states: tuple[PfState, ...] = ()
    """The first node's SR-IOV PF states, where the SR-IOV operator reports them."""
    attachments: Mapping[str, Attachment] = field(default_factory=dict)
    """The NetworkAttachmentDefinition of each RDMA resource, where the export holds one."""

    @property
    def first(self) -> LiveNode:
        return self.nodes[0]


def _extended(node: LiveNode) -> tuple[tuple[str, str], ...]:
    offered = node.capacity or node.allocatable
    return tuple(sorted((k, v) for k, v in offered.items() if k not in PLAIN_RESOURCES and not k.startswith("hugepages-")))


def _key(node: LiveNode) -> tuple[Any, ...]:
    """What makes nodes one pool. Taints of a node's state (cordoned, not ready) are not in it: such a node is its
    pool's, down for now, not a pool of its own whose jobs would tolerate the cordon."""
    return (tuple(node.labels.get(label, "") for label in HARDWARE_LABELS), _extended(node),
            tuple(sorted((t.key, t.value or "", t.effect) for t in node.placement_taints)))


def _slug(text: str) -> str:
    """`text` as a DNS-1035 label the profile schemas take: ASCII letters and digits only (`str.isalnum` also
    passes `é` and `²`, which a pool name and a file name must not hold), the rest `-`."""
    chars = "".join(c if c.isascii() and c.isalnum() else "-" for c in text.lower())
    slug = "-".join(part for part in chars.split("-") if part)[:50].strip("-")
    return slug if slug[:1].isalpha() else f"pool-{slug}".strip("-")


def _pool_name(node: LiveNode, taken: set[str]) -> str:
    base = _slug(node.labels.get(INSTANCE_TYPE) or node.labels.get(GPU_PRODUCT) or "pool")
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    taken.add(name)
    return name


def _selector(members: Sequence[LiveNode], others: Sequence[LiveNode]) -> tuple[tuple[tuple[str, str], ...], bool]:
    """The fewest labels, hardware labels first, that every member carries and that leave out every other node;
    all shared labels (and False) where none do. Linear in the nodes for each label added."""
    first = members[0].labels
    shared = {k: v for k, v in first.items() if k not in PER_NODE_LABELS
              and all(m.labels.get(k) == v for m in members)}
    order = [k for k in HARDWARE_LABELS if k in shared] + sorted(k for k in shared if k not in HARDWARE_LABELS)
    chosen: dict[str, str] = {}
    remaining = list(others)
    for key in order:
        if not remaining:
            break
        kept = [node for node in remaining if node.labels.get(key) == shared[key]]
        if len(kept) < len(remaining):
            chosen[key] = shared[key]
            remaining = kept
    if remaining:
        return tuple(sorted(shared.items())), False
    if not chosen and order:  # the only pool of the export: still pinned to its kind of node
        chosen[order[0]] = shared[order[0]]
    return tuple(sorted(chosen.items())), True


def group_pools(nodes: Sequence[LiveNode]) -> list[Pool]:
    """The nodes grouped by `_key`, in the order of their first node's name; each with its selector."""
    groups: dict[tuple[Any, ...], list[LiveNode]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        groups.setdefault(_key(node), []).append(node)
    taken: set[str] = set()
    pools = []
    for key, members in groups.items():
        others = [node for other, group in groups.items() if other != key for node in group]
        selector, apart = _selector(members, others)
        pools.append(Pool(_pool_name(members[0], taken), tuple(members), selector, apart))
    return pools


def wanted(nodes: Sequence[LiveNode], selectors: Sequence[Mapping[str, str]]) -> list[LiveNode]:
    """The nodes any of the `--nodes` selectors picks (all nodes where none is given)."""
    return [node for node in nodes if not selectors or any(selects(s, node.labels) for s in selectors)]


def with_network(pool: Pool, resources: Sequence[PluginResource], states: Mapping[str, tuple[PfState, ...]],
                 attachments: Sequence[Attachment]) -> Pool:
    """The pool with the RDMA resources its first node advertises, their provider, its PF states and NADs."""
    offered = dict(_extended(pool.first))
    by_resource: dict[str, list[PluginResource]] = {}
    for resource in resources:
        if resource.resource in offered:
            by_resource.setdefault(resource.resource, []).append(resource)
    chosen = []
    for name in sorted(by_resource):
        named = sorted(by_resource[name], key=lambda r: PROVIDER_ORDER.index(r.plugin))
        chosen.append(named[0])
    providers = sorted({r.plugin for r in chosen}, key=PROVIDER_ORDER.index)
    nads = {a.resource: a for a in sorted(attachments, key=lambda a: (a.namespace, a.name)) if a.resource in offered}
    return Pool(pool.name, pool.nodes, pool.selector, pool.apart, providers[0] if providers else TCP, tuple(chosen),
                states.get(pool.first.name, ()), {k: v for k, v in nads.items() if k is not None})


def one_provider(pools: Sequence[Pool]) -> tuple[str, str | None]:
    """The provider and resource prefix all pools with rails share; AdoptionError naming the pools where they
    differ, with how to import them apart."""
    needs: dict[tuple[str, str], list[str]] = {}
    for pool in pools:
        for need in sorted({(pool.provider, resource.resource.split("/")[0]) for resource in pool.rdma}):
            needs.setdefault(need, []).append(pool.name)
    if len(needs) > 1:
        said = "; ".join(f"{', '.join(names)}: {provider} ({prefix}/...)"
                         for (provider, prefix), names in sorted(needs.items()))
        example = next(p for p in pools if p.rdma)
        hint = ",".join(f"{k}={v}" for k, v in example.selector) or "LABEL=VALUE"
        raise AdoptionError(f"the pools need different network providers or resource prefixes, and one Cluster has "
                            f"one: {said}; import them apart, each with its own --cluster and --nodes picking its "
                            f"pools' nodes (e.g. --nodes {hint})")
    if not needs:
        return TCP, None
    ((provider, prefix),) = needs
    return provider, prefix
