"""`sriov-network-operator`: the operator creates the VFs and runs the device plugin from
SriovNetworkNodePolicies (one per rail and node pool), and renders each rail's NetworkAttachmentDefinition
from a SriovIBNetwork (InfiniBand) or SriovNetwork (Ethernet) per rail and job namespace, with `rdma` chained
through `spec.metaPlugins`. Its objects live in the operator's namespace."""

from __future__ import annotations

import json
from typing import Any

from generator.admission import vfs_per_node
from generator.manifests.labels import ARGOCD_SYNC_OPTIONS, SKIP_DRY_RUN_ON_MISSING_RESOURCE, ChartRef, metadata
from generator.manifests.manifest import Manifest
from generator.manifests.network import rail_link_type, whereabouts
from generator.manifests.provider import PodNetwork, Provider, multus_annotation, one_per_rail
from generator.model import Cluster, Job, LinkType, Network, NetworkProvider, NodePool, Rail

API_VERSION = "sriovnetwork.openshift.io/v1"
POLICY_LINK_TYPE = {LinkType.INFINIBAND: "IB", LinkType.ETHERNET: "ETH"}
RDMA_META_PLUGIN = json.dumps({"type": "rdma"})


def notes(network: Network) -> str:
    return ("one SriovNetworkNodePolicy per rail and node pool, one SriovNetwork or SriovIBNetwork per rail and "
            f"namespace, in {network.operator_namespace}; the operator creates the VFs (nodes drain and may reboot) "
            "and the NetworkAttachmentDefinitions.")


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
            "linkType": POLICY_LINK_TYPE[nic.link_type],
        },
    }


def build_network(cluster: Cluster, rail: Rail, namespace: str, chart: ChartRef) -> dict[str, Any]:
    kind = "SriovIBNetwork" if rail_link_type(cluster, rail) is LinkType.INFINIBAND else "SriovNetwork"
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
        },
    }


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    policies = [Manifest("sriov-node-policies.yaml", build_node_policy(cluster, rail, pool, chart))
                for pool in cluster.pools for rail in cluster.rails_of(pool)]
    networks = [Manifest("sriov-networks.yaml", build_network(cluster, rail, ns, chart))
                for ns in cluster.namespaces for rail in cluster.rails]
    return policies + networks


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PodNetwork(annotations=multus_annotation(job, nad_name), limits=one_per_rail(job))


PROVIDER = Provider(
    NetworkProvider.SRIOV_NETWORK_OPERATOR, infra, pod_network, notes,
    resource_prefix="openshift.io",  # the operator's own
    # NCCL_IB_HCA from `hca`, the network type from `linkType`; the policies select the PF by vendor, device id
    # and interface name.
    nic_facts=("hca", "pfName", "vendorId", "deviceId", "linkType"),
    settings={"operatorNamespace": "sriov-network-operator", "numVfs": None},
    exclusive_devices=True,
    network_kinds={"SriovNetwork": "", "SriovIBNetwork": ""},
)
