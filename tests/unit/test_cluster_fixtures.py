"""tests/fixtures/clusters/: exports of a pretend cluster, as `kubectl get -o yaml` prints them, for `mpigen import`
and `mpigen check --context` to be tested on. These tests hold the fixtures to what real clusters say: every object is
valid for its schema (kubernetes-validate's for Nodes and ConfigMaps, the upstream CRDs for the rest), each pool's
nodes are the built-in hardware profile they claim to be, and the resources the nodes advertise are the ones the
device plugins' configs name. The README beside the fixtures says where each value comes from."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from conftest import REPO, UPSTREAM
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from mpigen.check.schemas import SchemaSet
from mpigen.readback.findings import RenderedObject

CLUSTERS = REPO / "tests" / "fixtures" / "clusters"
FILES = sorted(CLUSTERS.glob("*.yaml"))
KUBE_VERSION = "1.31"
NETWORK = UPSTREAM / "network"
CRDS = [NETWORK / "sriov-network-operator" / "config__crd__bases__sriovnetwork.openshift.io_sriovnetworknodestates.yaml",
        NETWORK / "network-operator" / "config__crd__bases__mellanox.com_nicclusterpolicies.yaml",
        NETWORK / "nvidia-gpu" / "gpu-operator__config__crd__bases__nvidia.com_clusterpolicies.yaml",
        NETWORK / "nad-client" / "artifacts__networks-crd.yaml"]
BUILTIN_HARDWARE = REPO / "generator" / "hardware"
GPU = "nvidia.com/gpu"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
HOSTNAME = "kubernetes.io/hostname"  # per node: the kubelet sets it to the node's name
SRIOVDP_DEFAULT_PREFIX = "intel.com"  # facts 2: the SR-IOV device plugin's default resourcePrefix
RDMA_SHARED_PREFIX = "rdma"  # facts 2: rdma-shared-dev-plugin exposes rdma/<name>
# Pool (the fixture file) -> the built-in hardware profile its nodes are, and the example fleet's profile of the same
# system where it says more (the GPU model label, threads per core).
POOLS = {"dgx-1": ("dgx-1", REPO / "profiles" / "hardware" / "dgx-1.yaml"),
         "dgx-a100": ("dgx-a100", None),
         "dgx-h100": ("dgx-h100", None),
         "cpu": ("cpu-node", REPO / "profiles" / "hardware" / "cpu-node.yaml")}
LINK_TYPES = {"InfiniBand": "IB", "Ethernet": "ETH"}  # hardware profile linkType -> SriovNetworkNodeState linkType


def load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def items(path: Path) -> list[dict[str, Any]]:
    return load(path)["items"]


def every_item() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in FILES:
        for item in items(path):
            yield path.name, item


def of_kind(kind: str, path: Path | None = None) -> list[dict[str, Any]]:
    return [item for name, item in every_item() if item["kind"] == kind and (path is None or name == path.name)]


def config_json(name: str) -> dict[str, Any]:
    (config_map,) = [item for item in of_kind("ConfigMap") if item["metadata"]["name"] == name]
    return json.loads(config_map["data"]["config.json"])


def hardware(pool: str) -> dict[str, Any]:
    builtin, fleet = POOLS[pool]
    profile = load(BUILTIN_HARDWARE / f"{builtin}.yaml")
    if fleet is not None:  # the fleet's profile of the same system: the facts the catalogue leaves unset
        more = load(fleet)
        if "gpu" in profile:
            profile["gpu"] = {**more["gpu"], **profile["gpu"]}
        profile["cpu"] = {**more["cpu"], **profile["cpu"]}
        profile["nodeLabels"] = more.get("nodeLabels", {})
    return profile


def extended_resources(resources: dict[str, str]) -> set[str]:
    return {name for name in resources if "/" in name and name != GPU}


def test_the_four_pools_and_the_cluster_wide_objects_are_there() -> None:
    assert [path.stem for path in FILES] == ["cpu", "dgx-1", "dgx-a100", "dgx-h100", "operators"]
    assert sorted(POOLS) == [path.stem for path in FILES if path.stem != "operators"]


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_each_file_is_a_list_as_kubectl_prints_several_objects(path: Path) -> None:
    exported = load(path)
    assert list(exported) == ["apiVersion", "items", "kind", "metadata"]  # kubectl sorts keys
    assert (exported["apiVersion"], exported["kind"], exported["metadata"]) == ("v1", "List", {"resourceVersion": ""})
    assert exported["items"]
    assert all(list(item) == sorted(item) for item in exported["items"])


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    schema_set = SchemaSet(KUBE_VERSION, strict=True)  # strict: a kind without a schema is an error
    assert schema_set.add_crds(CRDS) == []
    return schema_set


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_every_object_is_valid_for_its_schema(path: Path, schemas: SchemaSet) -> None:
    for item in items(path):
        if item["apiVersion"] == "v1":
            assert item["kind"] in {"Node", "ConfigMap"}
            kubernetes_validate.validate(item, KUBE_VERSION, strict=True)  # raises on the first error
        else:
            assert schemas.has_schema(item["apiVersion"], item["kind"])
        findings = schemas.check(RenderedObject(str(path), item))
        assert [(finding.path, finding.message) for finding in findings] == []


def test_the_device_plugin_configs_are_valid_for_the_network_operators_schemas() -> None:
    schema_dir = NETWORK / "network-operator"
    sriovdp = Draft202012Validator(load(schema_dir / "webhook-schemas__sriov_network_device_plugin.json"))
    rdma = Draft202012Validator(load(schema_dir / "webhook-schemas__rdma_shared_device_plugin.json"))
    (policy,) = of_kind("NicClusterPolicy")
    assert [error.message for error in sriovdp.iter_errors(config_json("sriovdp-config"))] == []
    assert [error.message for error in rdma.iter_errors(config_json("rdma-devices"))] == []
    propagated = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert propagated["configList"] == config_json("rdma-devices")["configList"]


def test_the_operators_policies_are_the_upstream_samples_with_only_the_pools_filled_in() -> None:
    (policy,) = of_kind("NicClusterPolicy")
    sample = load(NETWORK / "network-operator" / "example__crs__mellanox.com_v1alpha1_nicclusterpolicy_cr-ipoib.yaml")
    assert policy["spec"]["rdmaSharedDevicePlugin"].pop("config") != sample["spec"]["rdmaSharedDevicePlugin"].pop("config")
    assert policy == sample
    (gpu_policy,) = of_kind("ClusterPolicy")
    sample = load(NETWORK / "nvidia-gpu" / "gpu-operator__config__samples__v1_clusterpolicy.yaml")
    values = load(NETWORK / "nvidia-gpu" / "gpu-operator__deployments__values.yaml")
    assert gpu_policy["spec"].pop("daemonsets") == {"tolerations": values["daemonsets"]["tolerations"]}
    sample["spec"].pop("daemonsets")
    assert gpu_policy == sample


def test_every_gpu_label_is_one_gpu_feature_discovery_documents() -> None:
    readme = (UPSTREAM / "inventory" / "gpu-feature-discovery_README.md").read_text(encoding="utf-8")
    for node in of_kind("Node"):
        for key in node["metadata"]["labels"]:
            if key.startswith("nvidia.com/"):
                assert f"| {key} " in readme, key


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_a_pools_nodes_are_alike_and_are_its_hardware_profile(pool: str) -> None:
    profile = hardware(pool)
    nodes = of_kind("Node", CLUSTERS / f"{pool}.yaml")
    assert len(nodes) >= 2
    first = nodes[0]
    for node in nodes:  # a pool is nodes of identical hardware: the same labels, taints and resources
        labels = dict(node["metadata"]["labels"])
        assert labels.pop(HOSTNAME) == node["metadata"]["name"]
        assert labels == {key: value for key, value in first["metadata"]["labels"].items() if key != HOSTNAME}
        assert node.get("spec") == first.get("spec")
        assert node["status"] == first["status"]
    labels, status = first["metadata"]["labels"], first["status"]
    assert labels[INSTANCE_TYPE] == profile.get("nodeLabels", {}).get(INSTANCE_TYPE, pool)
    gpu = profile.get("gpu")
    if gpu is None:
        assert not any(key.startswith("nvidia.com/") for key in labels)
        assert GPU not in status["capacity"] and "spec" not in first
    else:
        assert labels["nvidia.com/gpu.count"] == status["capacity"][GPU] == status["allocatable"][GPU] == str(gpu["count"])
        assert first["spec"]["taints"] == [{"key": GPU, "value": "present", "effect": "NoSchedule"}]
        if "memoryGiB" in gpu:
            assert labels["nvidia.com/gpu.memory"] == str(gpu["memoryGiB"] * 1024)  # GFD: mebibytes
        if "model" in gpu:
            assert labels["nvidia.com/gpu.product"] == gpu["model"]
        (model,) = set(re.findall(r"\b\d+x ([A-Z]\d{3})\b", profile["description"]))  # "8x H100 80 GB" -> H100
        assert model in labels["nvidia.com/gpu.product"]
    cpu = profile["cpu"]
    if "coresPerSocket" in cpu:
        assert status["capacity"]["cpu"] == str(cpu["sockets"] * cpu["coresPerSocket"] * cpu.get("threadsPerCore", 1))
    assert status["capacity"]["memory"] == f"{profile['memoryGiB'] * 1024 * 1024}Ki"
    # One rail resource per RDMA NIC of the profile.
    assert len(extended_resources(status["allocatable"])) == len(profile.get("nics", []))


def test_the_gpu_a100_labels_are_gpu_feature_discoverys_own_example() -> None:
    readme = (UPSTREAM / "inventory" / "gpu-feature-discovery_README.md").read_text(encoding="utf-8")
    labels = of_kind("Node", CLUSTERS / "dgx-a100.yaml")[0]["metadata"]["labels"]
    for key in ("gpu.compute.major", "gpu.compute.minor", "gpu.family", "gpu.memory", "gpu.product"):
        value = labels[f"nvidia.com/{key}"]
        assert f"nvidia.com/{key}: {json.dumps(value) if value.isdigit() else value}\n" in readme, key


@pytest.mark.parametrize("pool", ["dgx-1", "dgx-a100"])
def test_the_sriov_node_states_report_the_profiles_nics(pool: str) -> None:
    """The RDMA NICs the SR-IOV operator finds on each node are the profile's NICs (PCI ids, link type and speed);
    any other NIC (the DGX A100's storage NICs) is Ethernet and carries no rail."""
    profile = hardware(pool)
    nodes = [node["metadata"]["name"] for node in of_kind("Node", CLUSTERS / f"{pool}.yaml")]
    states = of_kind("SriovNetworkNodeState", CLUSTERS / f"{pool}.yaml")
    assert sorted(state["metadata"]["name"] for state in states) == sorted(nodes)
    for state in states:
        interfaces = state["status"]["interfaces"]
        assert [i["pciAddress"] for i in interfaces] == sorted(i["pciAddress"] for i in interfaces)
        rails = [i for i in interfaces if i.get("numVfs")]
        assert len(rails) == len(profile["nics"])
        for interface, nic in zip(rails, profile["nics"], strict=True):
            assert (interface["vendor"], interface["deviceID"]) == (nic["vendorId"], nic["deviceId"])
            assert interface["linkType"] == LINK_TYPES[nic["linkType"]]
            assert interface["linkSpeed"] == f"{nic['speedGbps'] * 1000} Mb/s"
            assert len(interface["Vfs"]) == interface["numVfs"] <= interface["totalvfs"]
            assert all(vf.get("deviceID", nic.get("vfDeviceId")) == nic.get("vfDeviceId") for vf in interface["Vfs"])
        assert all(i["linkType"] == "ETH" and "Vfs" not in i for i in interfaces if i not in rails)


def test_the_dgx_a100_storage_nics_sit_between_its_compute_nics() -> None:
    (state, *_) = of_kind("SriovNetworkNodeState", CLUSTERS / "dgx-a100.yaml")
    kinds = "".join("r" if interface.get("numVfs") else "s" for interface in state["status"]["interfaces"])
    assert kinds.strip("r") == "ss" and not kinds.startswith("s") and not kinds.endswith("s")


def advertised_by_plugins() -> dict[str, set[str]]:
    """Resource name -> the PF or interface names the device plugin config selects for it."""
    names: dict[str, set[str]] = {}
    for entry in config_json("sriovdp-config")["resourceList"]:
        names[f"{entry.get('resourcePrefix', SRIOVDP_DEFAULT_PREFIX)}/{entry['resourceName']}"] = set(
            entry["selectors"]["pfNames"])
    for entry in config_json("rdma-devices")["configList"]:
        names[f"{entry.get('resourcePrefix', RDMA_SHARED_PREFIX)}/{entry['resourceName']}"] = set(
            entry["selectors"]["ifNames"])
    return names


def test_the_resources_nodes_advertise_are_the_ones_the_device_plugins_name() -> None:
    plugins = advertised_by_plugins()
    advertised = set()
    for node in of_kind("Node"):
        status = node["status"]
        assert extended_resources(status["capacity"]) == extended_resources(status["allocatable"])
        advertised |= extended_resources(status["allocatable"])
    assert advertised == set(plugins)
    annotated = {nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"]
                 for nad in of_kind("NetworkAttachmentDefinition")}
    assert annotated == advertised


@pytest.mark.parametrize("pool", ["dgx-1", "dgx-a100"])
def test_an_sriov_rails_amount_is_its_pfs_virtual_functions(pool: str) -> None:
    plugins = advertised_by_plugins()
    states = {state["metadata"]["name"]: state for state in of_kind("SriovNetworkNodeState", CLUSTERS / f"{pool}.yaml")}
    for node in of_kind("Node", CLUSTERS / f"{pool}.yaml"):
        interfaces = {i["name"]: i for i in states[node["metadata"]["name"]]["status"]["interfaces"]}
        for resource in extended_resources(node["status"]["allocatable"]):
            (pf,) = plugins[resource]
            assert node["status"]["allocatable"][resource] == str(interfaces[pf]["numVfs"])


def test_a_shared_rdma_rails_amount_is_its_rdma_hca_max_and_its_nad_uses_its_interface() -> None:
    entries = {f"{RDMA_SHARED_PREFIX}/{entry['resourceName']}": entry for entry in config_json("rdma-devices")["configList"]}
    nads = {nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"]: json.loads(nad["spec"]["config"])
            for nad in of_kind("NetworkAttachmentDefinition", CLUSTERS / "dgx-h100.yaml")}
    for node in of_kind("Node", CLUSTERS / "dgx-h100.yaml"):
        for resource in extended_resources(node["status"]["allocatable"]):
            assert node["status"]["allocatable"][resource] == str(entries[resource]["rdmaHcaMax"])
            assert [nads[resource]["master"]] == entries[resource]["selectors"]["ifNames"]
            assert nads[resource]["type"] == "ipoib"


def test_every_rail_nad_chains_the_rdma_plugin_after_its_sriov_vf() -> None:
    for pool in ("dgx-1", "dgx-a100"):
        for nad in of_kind("NetworkAttachmentDefinition", CLUSTERS / f"{pool}.yaml"):
            config = json.loads(nad["spec"]["config"])
            assert config["name"] == nad["metadata"]["name"]
            assert [plugin["type"] for plugin in config["plugins"]] == ["ib-sriov", "rdma"]  # facts 2: IB VFs
            assert config["plugins"][0]["ipam"]["type"] == "whereabouts"  # facts 2: host-local collides across nodes
