"""inventory/operators.py: the SR-IOV operator's node state, the device plugins' configs and the NADs, read as exported,
without raising on what is missing."""

from __future__ import annotations

import json

from mpigen.inventory.operators import read_attachment, read_node_state, read_plugin_resources


def _state(interfaces: object) -> dict[str, object]:
    return {"kind": "SriovNetworkNodeState", "metadata": {"name": "n1"}, "status": {"interfaces": interfaces}}


def test_node_state_gives_each_pf_with_its_facts_and_where_they_are() -> None:
    (pf,) = read_node_state(_state([{"name": "ib0", "vendor": "15b3", "deviceID": "1013", "linkType": "IB",
                                     "linkSpeed": "100000 Mb/s", "numVfs": 8, "driver": "mlx5_core",
                                     "Vfs": [{"deviceID": "1014"}, {"deviceID": "1014"}]}])) or ()
    assert (pf.name, pf.vendor, pf.device_id, pf.vf_device_id, pf.link_type, pf.speed_gbps, pf.num_vfs) == (
        "ib0", "15b3", "1013", "1014", "InfiniBand", 100, 8)
    assert pf.where == "SriovNetworkNodeState n1 .status.interfaces[0]"


def test_node_state_without_interfaces_is_none_and_unreadable_fields_are_left_out() -> None:
    assert read_node_state({"kind": "SriovNetworkNodeState", "metadata": {"name": "n1"}}) is None
    (pf,) = read_node_state(_state([{"name": "enp1", "linkType": "ETH", "linkSpeed": "fast", "numVfs": True}, "x"])) or ()
    assert (pf.link_type, pf.speed_gbps, pf.num_vfs, pf.vf_device_id) == ("Ethernet", None, None, None)


def test_device_plugin_configs_name_their_resources_with_prefix_and_selectors() -> None:
    sriov = {"resourceList": [{"resourceName": "r0", "resourcePrefix": "nvidia.com",
                               "selectors": {"pfNames": ["ib0"], "vendors": ["15b3"], "devices": ["1014"]}},
                              {"resourceName": "r1", "selectors": [{"pfNames": ["ib1"]}]}]}
    metadata = {"name": "sriovdp-config", "namespace": "kube-system"}
    (r0, r1) = read_plugin_resources({"kind": "ConfigMap", "metadata": metadata, "data": {"config.json": json.dumps(sriov)}})
    assert (r0.resource, r0.plugin, r0.interfaces, r0.devices) == (
        "nvidia.com/r0", "sriov-device-plugin", ("ib0",), ("1014",))
    assert r0.where == 'ConfigMap kube-system/sriovdp-config .data["config.json"].resourceList[0]'
    assert (r1.resource, r1.interfaces) == ("intel.com/r1", ("ib1",))
    shared = {"configList": [{"resourceName": "s0", "selectors": {"ifNames": ["ibp1"]}}]}
    (s0,) = read_plugin_resources({"kind": "NicClusterPolicy", "metadata": {"name": "p"},
                                   "spec": {"rdmaSharedDevicePlugin": {"config": json.dumps(shared)}}})
    assert (s0.resource, s0.plugin, s0.interfaces) == ("rdma/s0", "rdma-shared", ("ibp1",))
    (policy,) = read_plugin_resources({"kind": "SriovNetworkNodePolicy", "metadata": {"name": "p"},
                                       "spec": {"resourceName": "x", "nicSelector": {"pfNames": ["ib0#0-3"]}}})
    assert (policy.resource, policy.plugin, policy.interfaces) == ("openshift.io/x", "sriov-network-operator", ("ib0",))
    assert read_plugin_resources({"kind": "ConfigMap", "data": {"config.json": "{not json"}}) == []


def test_attachment_gives_resource_type_master_and_whereabouts_range() -> None:
    config = {"type": "ipoib", "master": "ibp26s0", "ipam": {"type": "whereabouts", "range": "10.0.0.0/24"}}
    nad = read_attachment({"kind": "NetworkAttachmentDefinition", "metadata": {
        "name": "a", "annotations": {"k8s.v1.cni.cncf.io/resourceName": "rdma/s0"}}, "spec": {"config": json.dumps(config)}})
    assert nad is not None
    assert (nad.resource, nad.cni_type, nad.master, nad.ipam_range, nad.namespace) == (
        "rdma/s0", "ipoib", "ibp26s0", "10.0.0.0/24", "default")
    chained = {"plugins": [{"type": "ib-sriov", "ipam": {"type": "whereabouts", "range": "10.1.0.0/24"}}, {"type": "rdma"}]}
    nad = read_attachment({"kind": "NetworkAttachmentDefinition", "metadata": {"name": "b"},
                           "spec": {"config": json.dumps(chained)}})
    assert nad is not None and (nad.resource, nad.cni_type, nad.ipam_range) == (None, "ib-sriov", "10.1.0.0/24")
    assert read_attachment({"kind": "ConfigMap"}) is None
