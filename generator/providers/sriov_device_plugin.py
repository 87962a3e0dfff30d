"""`sriov-device-plugin`: the SR-IOV network device plugin hands each pod one VF of every rail's PF;
Multus attaches it through an `ib-sriov`/`sriov` NetworkAttachmentDefinition chained with `rdma`.

What the nodes must provide themselves, said in the infra chart's NOTES: the RDMA subsystem in exclusive netns
mode, which the `rdma` CNI needs to move a VF's RDMA device into the pod (not the kernel's default); and, on
InfiniBand, VF GUIDs the subnet manager knows, unless ib-kubernetes hands them out per pod."""

from __future__ import annotations

import json
from typing import Any

from mpigen.model import Cluster, Job, LinkType, NetworkProvider, Rail, names, stated
from mpigen.objects.labels import ChartRef, metadata
from mpigen.objects.manifest import Manifest
from mpigen.providers.base import DevicePlugin, PodNetwork, Provider, multus_annotation, one_per_rail
from mpigen.providers.network import (
    INFINIBAND_GUID_CAPABILITY,
    LINK_TYPE_SELECTOR,
    build_network_attachment,
    guid_from_ib_kubernetes,
    guid_note,
    rail_link_type,
    union,
    vf_vlan,
    whereabouts,
)

CONFIGMAP = "sriovdp-config"
DEVICE_PLUGIN = DevicePlugin("SR-IOV network device plugin", CONFIGMAP, "kube-sriov-device-plugin")
"""The DaemonSet as deployments/sriovdp-daemonset.yaml of sriov-network-device-plugin names it."""


def notes(cluster: Cluster) -> str:
    network = cluster.network
    return ("one NetworkAttachmentDefinition (SR-IOV VF + rdma) per rail in each namespace; SR-IOV device plugin "
            f"config: ConfigMap {CONFIGMAP} in {network.device_plugin_namespace}; restart the device plugin pods "
            "after it changes. The rdma CNI needs every node's RDMA subsystem in exclusive netns mode (`rdma system "
            "set netns exclusive`; to keep it across reboots, the module option `options ib_core netns_mode=0`)."
            + guid_note(cluster, "InfiniBand VFs keep the GUIDs their node gives them: set each to one the subnet "
                        "manager knows (`ip link set <pf> vf <n> node_guid <guid>`, and `port_guid <guid>`)."))


def nad_name(rail: str, namespace: str) -> str:
    return names.nad_name(rail)


def cni_config(cluster: Cluster, rail: Rail) -> dict[str, Any]:
    """`sriov` (`ib-sriov` for InfiniBand VFs) chained with `rdma`, addresses from whereabouts. sriov-cni sets the
    rail's VLAN and its priority on the VF (`vlan`, `vlanQoS`); ib-sriov-cni takes a GUID per pod from Multus'
    runtimeConfig only where it declares the `infinibandGUID` capability."""
    main: dict[str, Any] = {"type": "ib-sriov" if rail_link_type(cluster, rail) is LinkType.INFINIBAND else "sriov",
                            **vf_vlan(rail)}
    if guid_from_ib_kubernetes(cluster, rail):
        main["capabilities"] = dict(INFINIBAND_GUID_CAPABILITY)
    return {"plugins": [{**main, "ipam": whereabouts(rail)}, {"type": "rdma"}]}


def device_plugin_resource(cluster: Cluster, rail: Rail) -> dict[str, Any]:
    """One resource per rail: VFs of that PF only, so each pod gets one VF of every NIC."""
    nics = [nic for _, nic in cluster.rail_nics(rail)]
    return {
        "resourceName": rail.resource_name,
        "resourcePrefix": cluster.network.resource_prefix,
        "selectors": {
            "vendors": union([stated(n.vendor_id) for n in nics]),
            "devices": union([stated(n.vf_device_id) for n in nics]),
            "drivers": union([n.driver for n in nics]),
            "pfNames": union([stated(n.pf_name) for n in nics]),
            "linkTypes": union([LINK_TYPE_SELECTOR[stated(n.link_type)] for n in nics]),
            "isRdma": True,
        },
    }


def build_device_plugin_configmap(cluster: Cluster, chart: ChartRef) -> dict[str, Any]:
    config = {"resourceList": [device_plugin_resource(cluster, rail) for rail in cluster.rails]}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(CONFIGMAP, chart, cluster.network.device_plugin_namespace),
        "data": {"config.json": json.dumps(config, indent=2) + "\n"},
    }


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    if not cluster.rails:
        return []
    return [Manifest("sriovdp-configmap.yaml", build_device_plugin_configmap(cluster, chart))] + [
        Manifest("network-attachments.yaml",
                 build_network_attachment(cluster, nad_name(rail.name, ns), ns, cni_config(cluster, rail), chart,
                                          resource=rail.resource))
        for ns in cluster.namespaces
        for rail in cluster.rails
    ]


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PodNetwork(annotations=multus_annotation(job, nad_name), limits=one_per_rail(job))


PROVIDER = Provider(
    NetworkProvider.SRIOV_DEVICE_PLUGIN, infra, pod_network, notes,
    resource_prefix="nvidia.com",  # the SR-IOV device plugin as mpigen configures it
    # NCCL_IB_HCA from `hca`, the network type from `linkType`; the plugin selects VFs by vendor, VF device id and
    # PF name.
    nic_facts=("hca", "pfName", "vendorId", "vfDeviceId", "linkType"),
    settings={"devicePluginNamespace": "kube-system", "infinibandGuids": "node"},
    exclusive_devices=True,
    vlan=True,
    device_plugin=DEVICE_PLUGIN,
)
