"""The network operators' objects as `kubectl get -o yaml` exports them: the SR-IOV operator's per-node state of
each NIC, the device plugins' configs (which NICs each advertised resource hands out) and the Multus networks.

Read without raising, as nodes.py reads Nodes: a field that cannot be read is not there. What each reader gives
carries `where`, the object and field it came from (`SriovNetworkNodeState dgx1-01 .status.interfaces[0]`), so that
whoever turns it into a profile can say so beside the value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mpigen.model.cluster import NetworkProvider
from mpigen.providers.registry import PROVIDERS
from mpigen.vocabulary.multus import NAD_KIND
from mpigen.vocabulary.multus import RESOURCE_NAME_ANNOTATION as NAD_RESOURCE_ANNOTATION

SRIOV_STATE_KIND = "SriovNetworkNodeState"
SRIOV_POLICY_KIND = "SriovNetworkNodePolicy"
NIC_CLUSTER_POLICY_KIND = "NicClusterPolicy"
DEVICE_PLUGIN_CONFIG_KEY = "config.json"
SRIOV_OPERATOR_PREFIX = PROVIDERS[NetworkProvider.SRIOV_NETWORK_OPERATOR].resource_prefix
"""The SR-IOV network operator's resource prefix unless its deployment sets another (RESOURCE_PREFIX)."""
RDMA_SHARED_PREFIX = PROVIDERS[NetworkProvider.RDMA_SHARED].resource_prefix
"""The RDMA shared device plugin's resource prefix unless a configList entry sets `resourcePrefix`."""
LINK_TYPES = {"IB": "InfiniBand", "ETH": "Ethernet"}
"""The SR-IOV operator's `linkType` (IB|ETH) in a Hardware profile's words."""


@dataclass(frozen=True)
class PfState:
    """One physical function of a node, as the SR-IOV operator's config daemon reports it."""

    node: str
    name: str
    where: str
    """`SriovNetworkNodeState <node> .status.interfaces[<i>]`: the fields below are read from there."""
    pci_address: str | None = None
    vendor: str | None = None
    device_id: str | None = None
    vf_device_id: str | None = None
    driver: str | None = None
    link_type: str | None = None
    """InfiniBand or Ethernet."""
    speed_gbps: int | None = None
    num_vfs: int | None = None


@dataclass(frozen=True)
class PluginResource:
    """One resource a device plugin advertises, and the NICs its selectors pick."""

    resource: str
    """With its prefix: `nvidia.com/rdma_rail0`."""
    plugin: str
    """The network provider (a NetworkProvider value) whose config names it."""
    where: str
    interfaces: tuple[str, ...] = ()
    """`pfNames` (SR-IOV) or `ifNames` (RDMA shared) of its selectors."""
    vendors: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    drivers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attachment:
    """A NetworkAttachmentDefinition: the resource its pods get, the CNI that attaches them, its addresses."""

    name: str
    namespace: str
    where: str
    resource: str | None
    cni_type: str | None
    master: str | None
    ipam_range: str | None


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _name(obj: dict[str, Any]) -> str:
    return str(_meta(obj).get("name") or "")


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None


def _speed_gbps(value: Any) -> int | None:
    """`linkSpeed: 100000 Mb/s` in Gb/s; None where it is not a number of Mb/s."""
    words = str(value or "").split()
    if len(words) == 2 and words[0].isdigit() and words[1] == "Mb/s":
        return int(words[0]) // 1000
    return None


def read_node_state(obj: dict[str, Any]) -> tuple[PfState, ...] | None:
    """The PFs a SriovNetworkNodeState reports, in its order (PCI order); None where it has no
    `.status.interfaces` list (an export taken before the config daemon reported)."""
    node = _name(obj)
    status = obj.get("status")
    interfaces = status.get("interfaces") if isinstance(status, dict) else None
    if not isinstance(interfaces, list):
        return None
    states = []
    for index, item in enumerate(interfaces):
        if not isinstance(item, dict) or not _text(item.get("name")):
            continue
        vfs: list[Any] = item["Vfs"] if isinstance(item.get("Vfs"), list) else []
        vf_ids = sorted({str(vf["deviceID"]) for vf in vfs if isinstance(vf, dict) and _text(vf.get("deviceID"))})
        num_vfs = item.get("numVfs")
        states.append(PfState(
            node, str(item["name"]), f"{SRIOV_STATE_KIND} {node} .status.interfaces[{index}]",
            _text(item.get("pciAddress")), _text(item.get("vendor")), _text(item.get("deviceID")),
            vf_ids[0] if len(vf_ids) == 1 else None, _text(item.get("driver")),
            LINK_TYPES.get(str(item.get("linkType"))), _speed_gbps(item.get("linkSpeed")),
            num_vfs if isinstance(num_vfs, int) and not isinstance(num_vfs, bool) else None))
    return tuple(states)


def _config(text: Any) -> dict[str, Any]:
    try:
        config = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}


def _selectors(entry: dict[str, Any], key: str) -> tuple[str, ...]:
    selectors = entry.get("selectors")
    if isinstance(selectors, list):  # the SR-IOV device plugin's newer form: a list of selector objects
        return tuple(value for selector in selectors if isinstance(selector, dict) for value in _strs(selector.get(key)))
    return _strs(selectors.get(key)) if isinstance(selectors, dict) else ()


def _plugin_resources(config: dict[str, Any], where: str) -> list[PluginResource]:
    found = []
    for index, entry in enumerate(config.get("resourceList") or []):
        if isinstance(entry, dict) and _text(entry.get("resourceName")):
            prefix = _text(entry.get("resourcePrefix")) or "intel.com"  # the SR-IOV device plugin's default
            found.append(PluginResource(f"{prefix}/{entry['resourceName']}", NetworkProvider.SRIOV_DEVICE_PLUGIN.value,
                                        f"{where}.resourceList[{index}]", _selectors(entry, "pfNames"),
                                        _selectors(entry, "vendors"), _selectors(entry, "devices"),
                                        _selectors(entry, "drivers")))
    for index, entry in enumerate(config.get("configList") or []):
        if isinstance(entry, dict) and _text(entry.get("resourceName")):
            prefix = _text(entry.get("resourcePrefix")) or RDMA_SHARED_PREFIX
            found.append(PluginResource(f"{prefix}/{entry['resourceName']}", NetworkProvider.RDMA_SHARED.value,
                                        f"{where}.configList[{index}]", _selectors(entry, "ifNames"),
                                        _selectors(entry, "vendors"), _selectors(entry, "deviceIDs"),
                                        _selectors(entry, "drivers")))
    return found


def read_plugin_resources(obj: dict[str, Any]) -> list[PluginResource]:
    """The resources a device plugin's ConfigMap (`config.json`: the SR-IOV device plugin's `resourceList`, the
    RDMA shared device plugin's `configList`), a NicClusterPolicy's `rdmaSharedDevicePlugin.config` or a
    SriovNetworkNodePolicy names; none for any other object."""
    kind, name = obj.get("kind"), _name(obj)
    if kind == "ConfigMap":
        data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        assert isinstance(data, dict)
        where = f'ConfigMap {_meta(obj).get("namespace") or "default"}/{name} .data["{DEVICE_PLUGIN_CONFIG_KEY}"]'
        return _plugin_resources(_config(data.get(DEVICE_PLUGIN_CONFIG_KEY)), where)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    if kind == NIC_CLUSTER_POLICY_KIND:
        plugin = spec.get("rdmaSharedDevicePlugin")
        config = _config(plugin.get("config")) if isinstance(plugin, dict) else {}
        return [r for r in _plugin_resources(config, f"NicClusterPolicy {name} .spec.rdmaSharedDevicePlugin.config")
                if r.plugin == NetworkProvider.RDMA_SHARED.value]
    if kind == SRIOV_POLICY_KIND and _text(spec.get("resourceName")):
        selector = spec.get("nicSelector") if isinstance(spec.get("nicSelector"), dict) else {}
        assert isinstance(selector, dict)
        pf_names = tuple(pf.split("#")[0] for pf in _strs(selector.get("pfNames")))  # `ib0#0-3` names VFs of ib0
        return [PluginResource(f"{SRIOV_OPERATOR_PREFIX}/{spec['resourceName']}",
                               NetworkProvider.SRIOV_NETWORK_OPERATOR.value,
                               f"{SRIOV_POLICY_KIND} {name} .spec", pf_names, _strs([selector.get("vendor")]),
                               _strs([selector.get("deviceID")]))]
    return []


def _ipam_range(config: dict[str, Any]) -> str | None:
    plugins = config.get("plugins") if isinstance(config.get("plugins"), list) else [config]
    for plugin in plugins or []:
        ipam = plugin.get("ipam") if isinstance(plugin, dict) else None
        if isinstance(ipam, dict) and ipam.get("type") == "whereabouts" and _text(ipam.get("range")):
            return str(ipam["range"])
    return None


def read_attachment(obj: dict[str, Any]) -> Attachment | None:
    """A NetworkAttachmentDefinition's resource (annotation), CNI type, `master` and whereabouts range."""
    if obj.get("kind") != NAD_KIND:
        return None
    metadata, name = _meta(obj), _name(obj)
    annotations = metadata.get("annotations") if isinstance(metadata.get("annotations"), dict) else {}
    assert isinstance(annotations, dict)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    config = _config(spec.get("config"))
    plugins = config.get("plugins") if isinstance(config.get("plugins"), list) else [config]
    first = plugins[0] if plugins and isinstance(plugins[0], dict) else {}
    namespace = str(metadata.get("namespace") or "default")
    return Attachment(name, namespace, f"{NAD_KIND} {namespace}/{name} .spec.config",
                      _text(annotations.get(NAD_RESOURCE_ANNOTATION)), _text(first.get("type")),
                      _text(first.get("master")), _ipam_range(config))
