"""`sriov-network-operator`: the operator creates the VFs and runs the device plugin from
SriovNetworkNodePolicies (one per rail and node pool), and renders each rail's NetworkAttachmentDefinition
from a SriovIBNetwork (InfiniBand) or SriovNetwork (Ethernet) per rail and job namespace, with `rdma` chained
through `spec.metaPlugins`. Its objects live in the operator's namespace.

The `rdma` CNI moves each VF's RDMA device into the pod's network namespace, which the kernel allows only in
exclusive netns mode (not its default): a SriovNetworkPoolConfig per node pool with rails has the operator set
`rdmaMode: exclusive` on its nodes (sriov-network-operator doc/rdma-configuration.md)."""

from __future__ import annotations

import json
from typing import Any

from mpigen.model import Cluster, Job, LinkType, NetworkProvider, NodePool, Rail, stated
from mpigen.model.admission import vfs_per_node
from mpigen.objects.labels import ChartRef, metadata
from mpigen.objects.manifest import Manifest
from mpigen.providers.base import PodNetwork, Provider, multus_annotation, one_per_rail
from mpigen.providers.network import (
    INFINIBAND_GUID_CAPABILITY,
    guid_from_ib_kubernetes,
    guid_note,
    rail_link_type,
    vf_vlan,
    whereabouts,
)
from mpigen.vocabulary.gitops import ARGOCD_SYNC_OPTIONS, SKIP_DRY_RUN_ON_MISSING_RESOURCE

API_VERSION = "sriovnetwork.openshift.io/v1"
POLICY_LINK_TYPE = {LinkType.INFINIBAND: "IB", LinkType.ETHERNET: "ETH"}
RDMA_META_PLUGIN = json.dumps({"type": "rdma"})
# Changing a pool's rdmaMode reboots its nodes: one at a time, as the operator's own RDMA example does.
POOL_MAX_UNAVAILABLE = 1


def notes(cluster: Cluster) -> str:
    network = cluster.network
    return ("one SriovNetworkNodePolicy per rail and node pool, one SriovNetwork or SriovIBNetwork per rail and "
            f"namespace, in {network.operator_namespace}; the operator creates the VFs (nodes drain and may reboot) "
            "and the NetworkAttachmentDefinitions. One SriovNetworkPoolConfig per node pool with rails puts its "
            "nodes' RDMA subsystem in exclusive mode, which the rdma CNI needs: the operator reboots them to apply "
            f"it, {POOL_MAX_UNAVAILABLE} at a time."
            + guid_note(cluster, "InfiniBand VFs keep the GUIDs the operator's config daemon gives them (random, or "
                        "those of /etc/sriov-operator/infiniband/guids on the node): the subnet manager must know them."))


def nad_name(rail: str, namespace: str) -> str:
    """A SriovNetwork (and the NAD the operator renders from it) per rail and job namespace, all in the
    operator's namespace, so the job namespace is part of the name."""
    return f"{rail}-{namespace}"


def node_policy_name(rail: str, pool: str) -> str:
    """One SriovNetworkNodePolicy per rail and node pool (pools differ in hardware)."""
    return f"{rail}-{pool}"


def num_vfs(cluster: Cluster, pool: NodePool) -> int:
    """The profile's numVfs, else one per GPU of the node (at least one): the count the queues' quotas assume."""
    return vfs_per_node(cluster.network.num_vfs, pool.hardware.gpu.count if pool.hardware.gpu else 0)


def build_node_policy(cluster: Cluster, rail: Rail, pool: NodePool, chart: ChartRef) -> dict[str, Any]:
    nic = pool.hardware.nic(rail.nic_name)
    assert nic is not None, "rails_of(pool) only yields rails whose NIC the pool's hardware has"
    return {
        "apiVersion": API_VERSION,
        "kind": "SriovNetworkNodePolicy",
        "metadata": metadata(node_policy_name(rail.name, pool.name), chart, cluster.network.operator_namespace,
                             annotations={ARGOCD_SYNC_OPTIONS: SKIP_DRY_RUN_ON_MISSING_RESOURCE}),
        "spec": {
            "resourceName": rail.resource_name,
            "nodeSelector": dict(pool.node_selector),
            "numVfs": num_vfs(cluster, pool),
            "nicSelector": {"vendor": nic.vendor_id, "deviceID": nic.device_id, "pfNames": [nic.pf_name]},
            "deviceType": "netdevice",
            "isRdma": True,
            "linkType": POLICY_LINK_TYPE[stated(nic.link_type)],
        },
    }


def build_pool_config(cluster: Cluster, pool: NodePool, chart: ChartRef) -> dict[str, Any]:
    """The pool's nodes with the RDMA subsystem in exclusive netns mode, which the `rdma` meta plugin needs to give
    a pod its VF's RDMA device alone, and which mpigen's NCCL_IB_HCA (the HCA family) assumes. Applying or changing
    it drains and reboots the nodes, `maxUnavailable` at a time."""
    return {
        "apiVersion": API_VERSION,
        "kind": "SriovNetworkPoolConfig",
        "metadata": metadata(pool.name, chart, cluster.network.operator_namespace,
                             annotations={ARGOCD_SYNC_OPTIONS: SKIP_DRY_RUN_ON_MISSING_RESOURCE}),
        "spec": {
            "maxUnavailable": POOL_MAX_UNAVAILABLE,
            "nodeSelector": {"matchLabels": dict(pool.node_selector)},
            "rdmaMode": "exclusive",
        },
    }


def build_network(cluster: Cluster, rail: Rail, namespace: str, chart: ChartRef) -> dict[str, Any]:
    """A SriovIBNetwork or SriovNetwork: the operator writes its `vlan` and `vlanQoS` into the NAD's sriov config
    and its `capabilities` (a JSON string) as they are."""
    kind = "SriovIBNetwork" if rail_link_type(cluster, rail) is LinkType.INFINIBAND else "SriovNetwork"
    extra: dict[str, Any] = dict(vf_vlan(rail))
    if guid_from_ib_kubernetes(cluster, rail):
        extra["capabilities"] = json.dumps(INFINIBAND_GUID_CAPABILITY)
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": metadata(nad_name(rail.name, namespace), chart, cluster.network.operator_namespace,
                             annotations={ARGOCD_SYNC_OPTIONS: SKIP_DRY_RUN_ON_MISSING_RESOURCE}),
        "spec": {
            "resourceName": rail.resource_name,
            "networkNamespace": namespace,
            "ipam": json.dumps(whereabouts(rail)),
            "metaPlugins": RDMA_META_PLUGIN,
            **extra,
        },
    }


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    policies = [Manifest("sriov-node-policies.yaml", build_node_policy(cluster, rail, pool, chart))
                for pool in cluster.pools for rail in cluster.rails_of(pool)]
    pool_configs = [Manifest("sriov-pool-configs.yaml", build_pool_config(cluster, pool, chart))
                    for pool in cluster.pools if cluster.rails_of(pool)]
    networks = [Manifest("sriov-networks.yaml", build_network(cluster, rail, ns, chart))
                for ns in cluster.namespaces for rail in cluster.rails]
    return policies + pool_configs + networks


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PodNetwork(annotations=multus_annotation(job, nad_name), limits=one_per_rail(job))


PROVIDER = Provider(
    NetworkProvider.SRIOV_NETWORK_OPERATOR, infra, pod_network, notes,
    resource_prefix="openshift.io",  # the operator's own
    # NCCL_IB_HCA from `hca`, the network type from `linkType`; the policies select the PF by vendor, device id
    # and interface name.
    nic_facts=("hca", "pfName", "vendorId", "deviceId", "linkType"),
    settings={"operatorNamespace": "sriov-network-operator", "numVfs": None, "infinibandGuids": "node"},
    exclusive_devices=True,
    vlan=True,
    selects_pools=True,
    network_kinds={"SriovNetwork": "", "SriovIBNetwork": ""},
)
