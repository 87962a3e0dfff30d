"""`rdma-shared`: NVIDIA's rdma-shared-dev-plugin gives every pod of a node access to the rail's HCA
(`rdma/<resource>`, shared, not a VF); Multus attaches the rail as `macvlan` over the node's Ethernet
interface or `ipoib` over its InfiniBand interface. Pods see every HCA of the node under its own name."""

from __future__ import annotations

import json
from typing import Any

from mpigen.model import Cluster, Job, LinkType, NetworkProvider, Rail, names, stated
from mpigen.model.admission import SHARED_RAIL_DEVICES
from mpigen.objects.labels import ChartRef, metadata
from mpigen.objects.manifest import Manifest
from mpigen.providers.base import DevicePlugin, PodNetwork, Provider, multus_annotation, one_per_rail
from mpigen.providers.network import build_network_attachment, rail_link_type, union, whereabouts

# How many containers of a node may share one rail's HCA (the plugin's own example uses 1000); also each shared rail
# device's quota per node in the queues (generator/model/admission.py).
RDMA_HCA_MAX = SHARED_RAIL_DEVICES
CONFIGMAP = "rdma-devices"
DEVICE_PLUGIN = DevicePlugin("rdma-shared-dev-plugin", CONFIGMAP, "rdma-shared-dp-ds")
"""The DaemonSet as deployment/k8s/base/daemonset.yaml of k8s-rdma-shared-dev-plugin names it."""


def notes(cluster: Cluster) -> str:
    network = cluster.network
    return ("one macvlan or ipoib NetworkAttachmentDefinition per rail in each namespace; rdma-shared-dev-plugin "
            f"config: ConfigMap {CONFIGMAP} in {network.device_plugin_namespace}; restart the plugin pods after it "
            "changes.")


def nad_name(rail: str, namespace: str) -> str:
    return names.nad_name(rail)


def host_interfaces(cluster: Cluster, rail: Rail) -> list[str]:
    """The rail's interface on the nodes: the profile's `hostInterface`, else each carrying NIC's PF name."""
    if rail.host_interface:
        return [rail.host_interface]
    return union([stated(nic.pf_name) for _, nic in cluster.rail_nics(rail)])


def build_rdma_devices_configmap(cluster: Cluster, chart: ChartRef) -> dict[str, Any]:
    """rdma-shared-dev-plugin's `config.json`: one shared resource per rail, selected by the PF's interface."""
    config_list = []
    for rail in cluster.rails:
        nics = [nic for _, nic in cluster.rail_nics(rail)]
        config_list.append({
            "resourceName": rail.resource_name,
            "rdmaHcaMax": RDMA_HCA_MAX,
            "selectors": {"vendors": union([stated(n.vendor_id) for n in nics]),
                          "deviceIDs": union([stated(n.device_id) for n in nics]),
                          "ifNames": union([stated(n.pf_name) for n in nics])},
        })
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(CONFIGMAP, chart, cluster.network.device_plugin_namespace),
        "data": {"config.json": json.dumps({"periodicUpdateInterval": 300, "configList": config_list}, indent=2) + "\n"},
    }


def cni_config(cluster: Cluster, rail: Rail) -> dict[str, Any]:
    (master, *others) = host_interfaces(cluster, rail)
    assert not others, "validation requires one interface name per rail (set hostInterface)"
    if rail_link_type(cluster, rail) is LinkType.INFINIBAND:
        return {"type": "ipoib", "master": master, "ipam": whereabouts(rail)}
    return {"type": "macvlan", "master": master, "mode": "bridge", "ipam": whereabouts(rail)}


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    if not cluster.rails:
        return []
    return [Manifest("rdma-devices-configmap.yaml", build_rdma_devices_configmap(cluster, chart))] + [
        Manifest("network-attachments.yaml",
                 build_network_attachment(cluster, nad_name(rail.name, ns), ns, cni_config(cluster, rail), chart))
        for ns in cluster.namespaces
        for rail in cluster.rails
    ]


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PodNetwork(annotations=multus_annotation(job, nad_name), limits=one_per_rail(job))


PROVIDER = Provider(
    NetworkProvider.RDMA_SHARED, infra, pod_network, notes,
    resource_prefix="rdma",  # rdma-shared-dev-plugin's fixed prefix
    # NCCL_IB_HCA and UCX_NET_DEVICES from `hca`, the network type from `linkType`; the plugin selects the PF by
    # vendor, device id and interface name.
    nic_facts=("hca", "pfName", "vendorId", "deviceId", "linkType"),
    settings={"devicePluginNamespace": "kube-system"},
    host_interface=True,
    one_interface_per_rail=True,
    device_plugin=DEVICE_PLUGIN,
)
