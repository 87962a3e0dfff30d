"""adopt/cluster.py over the cluster fixtures (tests/fixtures/clusters, README beside them): each pool's facts as the
README gives them, every value's origin or `# guess:`, the providers refused together, and each bad input's one line."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import REPO
from ruamel.yaml import YAML

from mpigen.adopt import Adoption, AdoptionError
from mpigen.adopt.cluster import adopt_cluster
from mpigen.adopt.profiles import MELLANOX_VENDOR, STAMP, VF_DEVICE_IDS, edited_since_import
from mpigen.readback.documents import parse_manifest, read_manifest_file
from mpigen.readback.findings import RenderedObject
from mpigen.support.schema_files import KIND_SCHEMA_FILES
from mpigen.validate.schema import schema_errors

CLUSTERS = REPO / "tests" / "fixtures" / "clusters"


def _read(*names: str) -> list[RenderedObject]:
    documents: list[RenderedObject] = []
    for name in names:
        read, findings = read_manifest_file(CLUSTERS / name)
        assert not findings
        documents += read
    return documents


def _import(pool: str) -> tuple[Adoption, dict[str, Any]]:
    adoption, _ = adopt_cluster(_read(f"{pool}.yaml", "operators.yaml"), "lab")
    return adoption, {p.kind: YAML(typ="safe").load(p.text) for p in adoption.profiles}


def _profile(adoption: Adoption, kind: str) -> str:
    return next(p.text for p in adoption.profiles if p.kind == kind)


def test_dgx1_four_infiniband_rails_at_100_gbps_under_the_sriov_device_plugin() -> None:
    adoption, data = _import("dgx-1")
    hardware, cluster = data["Hardware"], data["Cluster"]
    assert hardware["gpu"] == {"count": 8, "model": "Tesla-V100-SXM2-16GB", "memoryGiB": 16, "resource": "nvidia.com/gpu"}
    assert [(n["pfName"], n["linkType"], n["speedGbps"], n["deviceId"], n["vfDeviceId"]) for n in hardware["nics"]] == [
        (f"ib{i}", "InfiniBand", 100, "1013", "1014") for i in range(4)]
    assert hardware["memoryGiB"] == 512 and hardware["nodeLabels"] == {"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}
    assert cluster["network"] == {"provider": "sriov-device-plugin", "resourcePrefix": "nvidia.com"}
    assert [r["resourceName"] for r in cluster["rails"]] == [f"rdma_rail{i}" for i in range(4)]
    assert [r["ipam"]["range"] for r in cluster["rails"]] == [f"192.168.{100 + i}.0/24" for i in range(4)]
    (pool,) = cluster["nodePools"]
    assert pool["nodes"] == 2 and pool["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    text = _profile(adoption, "Hardware")
    assert '# SriovNetworkNodeState dgx1-01 .status.interfaces[0].linkSpeed' in text
    assert '# Node dgx1-01 .metadata.labels["nvidia.com/gpu.count"]' in text


def test_dgx_a100_eight_rails_and_the_storage_nics_are_no_rails() -> None:
    adoption, data = _import("dgx-a100")
    assert len(data["Hardware"]["nics"]) == 8 and len(data["Cluster"]["rails"]) == 8
    assert {n["speedGbps"] for n in data["Hardware"]["nics"]} == {200}
    assert "enp97s0f0" not in {n["pfName"] for n in data["Hardware"]["nics"]}
    text = _profile(adoption, "Hardware")
    assert "# not a rail: enp97s0f0 (Ethernet" in text and "# not a rail: enp97s0f1 (Ethernet" in text
    assert 'vfDeviceId: "101c"  # guess:' in text  # the export shows no VF of the A100's PFs


def test_dgx_h100_rdma_shared_eight_rails_with_their_host_interfaces() -> None:
    _, data = _import("dgx-h100")
    cluster = data["Cluster"]
    assert cluster["network"] == {"provider": "rdma-shared", "resourcePrefix": "rdma"}
    assert [r["resourceName"] for r in cluster["rails"]] == [f"rdma_shared_rail{i}" for i in range(8)]
    assert cluster["rails"][0]["hostInterface"] == "ibp26s0" and cluster["rails"][0]["nic"] == "ibp26s0"
    assert {n["linkType"] for n in data["Hardware"]["nics"]} == {"InfiniBand"}  # the NADs' ipoib


def test_cpu_pool_no_rails_no_taint_tcp() -> None:
    _, data = _import("cpu")
    cluster = data["Cluster"]
    assert cluster["network"] == {"provider": "tcp"} and "rails" not in cluster
    assert "taints" not in cluster["nodePools"][0] and cluster["nodePools"][0]["nodes"] == 4
    assert "gpu" not in data["Hardware"] and "nics" not in data["Hardware"]
    assert data["Hardware"]["nodeLabels"] == {"node.kubernetes.io/instance-type": "cpu-2s64c"}


def test_all_five_files_refused_naming_the_pools_and_their_providers() -> None:
    with pytest.raises(AdoptionError) as refused:
        adopt_cluster(_read("cpu.yaml", "dgx-1.yaml", "dgx-a100.yaml", "dgx-h100.yaml", "operators.yaml"), "lab")
    assert "dgx-h100: rdma-shared (rdma/...)" in str(refused.value)
    assert "dgx-1, dgx-a100: sriov-device-plugin (nvidia.com/...)" in str(refused.value)
    assert "--nodes" in str(refused.value)


def test_all_five_files_with_nodes_apart_selectors_give_one_cluster_of_one_provider() -> None:
    documents = _read("cpu.yaml", "dgx-1.yaml", "dgx-a100.yaml", "dgx-h100.yaml", "operators.yaml")
    adoption, _ = adopt_cluster(documents, "lab", [{"feature.node.kubernetes.io/network-sriov.capable": "true"},
                                                   {"node.kubernetes.io/instance-type": "cpu-2s64c"}])
    assert sorted(p.name for p in adoption.profiles if p.kind == "Hardware") == ["cpu-2s64c", "dgx-1", "dgx-a100"]
    cluster = YAML(typ="safe").load(_profile(adoption, "Cluster"))
    assert len(cluster["rails"]) == 12 and len({r["name"] for r in cluster["rails"]}) == 12
    assert "2 node(s) left out: --nodes does not pick them" in adoption.notes
    # with other pools in the export, each pool is selected apart: DGX-1 and A100 by their GPU product
    hardware = {p.name: YAML(typ="safe").load(p.text) for p in adoption.profiles if p.kind == "Hardware"}
    assert hardware["dgx-a100"]["nodeLabels"] == {"nvidia.com/gpu.product": "A100-SXM4-40GB"}


def test_same_objects_in_another_order_give_the_same_text() -> None:
    documents = _read("dgx-a100.yaml", "operators.yaml")
    first, _ = adopt_cluster(documents, "lab")
    again, _ = adopt_cluster(list(reversed(documents)), "lab")
    assert first == again


def _objects(text: str) -> list[RenderedObject]:
    documents, findings = parse_manifest(text, "export.yaml")
    assert not findings
    return documents


NODE = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {capacity: {cpu: "8", memory: 32Gi}}
"""


@pytest.mark.parametrize(("text", "said"), [
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n", "export.yaml: Node n1 has no name or no .status"),
    (NODE + "---\napiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodeState\nmetadata: {name: n1}\n"
     "status: {syncStatus: InProgress}\n", "SriovNetworkNodeState n1 has no .status.interfaces"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "no Node in the input: export them with `kubectl get nodes,"),
])
def test_partial_exports_and_no_node_are_one_line_errors(text: str, said: str) -> None:
    with pytest.raises(AdoptionError) as refused:
        adopt_cluster(_objects(text), "lab")
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_secrets_unknown_kinds_and_mpijobs_are_skipped_and_said_in_a_mixed_list() -> None:
    text = ("apiVersion: v1\nkind: List\nitems:\n"
            "- {apiVersion: v1, kind: Secret, metadata: {name: s}, data: {token: c2VjcmV0LXZhbHVl}}\n"
            "- {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}}\n"
            "- {apiVersion: kubeflow.org/v2beta1, kind: MPIJob, metadata: {name: j}}\n"
            "- {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}\n"
            "- {apiVersion: v1, kind: Namespace, metadata: {name: kube-system}}\n"
            "- " + NODE.replace("\n", "\n  ").rstrip() + "\n")
    adoption, mpijobs = adopt_cluster(_objects(text), "lab")
    assert [m.name for m in mpijobs] == ["j"]
    assert "skipped 1 object(s) of kind apps/v1/Deployment: import does not read them" in adoption.notes
    assert "skipped 1 Secret(s): never copied into a profile" in adoption.notes
    assert not any("MPIJob" in note for note in adoption.notes)  # handed back for job adoption, not skipped
    said = "\n".join([*adoption.notes, *(p.text for p in adoption.profiles)])
    assert "c2VjcmV0LXZhbHVl" not in said and "token" not in said
    assert YAML(typ="safe").load(_profile(adoption, "Cluster"))["namespaces"] == ["team-a"]


def test_guesses_are_counted_per_file_and_each_marked() -> None:
    adoption, _ = _import("dgx-1")
    for profile in adoption.profiles:
        folder = "hardware" if profile.kind == "Hardware" else "clusters"
        count = profile.text.count("# guess:")
        assert count and f"{folder}/{profile.name}.yaml: {count} guess(es) left, each marked `# guess:` with what to " \
            "read" in adoption.notes


def test_kubelet_version_is_read_where_the_nodes_give_it() -> None:
    text = NODE.replace("status: {", "status: {nodeInfo: {kubeletVersion: v1.30.4}, ")
    adoption, _ = adopt_cluster(_objects(text), "lab")
    assert 'kubernetesVersion: "1.30"  # Node n1 .status.nodeInfo.kubeletVersion' in _profile(adoption, "Cluster")




def test_each_profile_ends_with_its_digest_and_an_edit_breaks_it() -> None:
    adoption, _ = _import("cpu")
    for profile in adoption.profiles:
        assert profile.text.splitlines()[-1].startswith(STAMP) and not edited_since_import(profile.text)
        assert edited_since_import(profile.text.replace("nodes: 4", "nodes: 3").replace("cpu:", "cpu:  # mine"))
    assert edited_since_import("kind: Cluster\n")


def test_a_node_whose_nics_differ_from_its_pool_is_said_and_a_bad_cluster_name_refused() -> None:
    documents = _read("dgx-1.yaml", "operators.yaml")
    slower = [RenderedObject(d.source, _slower(d.obj)) if d.kind == "SriovNetworkNodeState" and d.name == "dgx1-02"
              else d for d in documents]
    adoption, _ = adopt_cluster(slower, "lab")
    assert any(note.startswith("pool dgx-1: the NICs of dgx1-02 differ from dgx1-01's") for note in adoption.notes)
    with pytest.raises(AdoptionError, match=r"^--cluster Lab_1: "):
        adopt_cluster(documents, "Lab_1")


def _slower(obj: dict[str, Any]) -> dict[str, Any]:
    interfaces = [dict(item, linkSpeed="56000 Mb/s") for item in obj["status"]["interfaces"]]
    return {**obj, "status": {**obj["status"], "interfaces": interfaces}}


def test_newlines_in_exported_names_labels_and_taints_stay_inside_their_values_and_comments() -> None:
    """A comment names the node and the label as exported: a newline there must not start a line of YAML of the
    export's choosing, nor a taint effect's break the flow mapping it sits in. The profiles read back to the values."""
    text = ('apiVersion: v1\nkind: Node\nmetadata: {name: "n1\\nkind: Job", labels: {"team\\nnumVfs: 9": "a"}}\n'
            'spec: {taints: [{key: k, effect: "NoSchedule\\nx: 1"}]}\nstatus: {capacity: {cpu: "8", memory: 32Gi}}\n')
    adoption, _ = adopt_cluster(_objects(text), "lab")
    read = {p.kind: YAML(typ="safe").load(p.text) for p in adoption.profiles}
    assert read["Hardware"]["nodeLabels"] == {"team\nnumVfs: 9": "a"} and "numVfs" not in read["Hardware"]
    assert read["Cluster"]["nodePools"][0]["taints"] == [{"key": "k", "effect": "NoSchedule\nx: 1"}]
    assert all(not edited_since_import(p.text) for p in adoption.profiles)


@pytest.mark.parametrize(("instance_type", "pool"), [
    ("Ünï²-x", "n-x"), ("../../etc/x", "etc-x"), ("9" * 80, "pool-" + "9" * 50)])
def test_a_pool_named_from_any_instance_type_is_a_name_the_schemas_take(instance_type: str, pool: str) -> None:
    """The pool's name is its file's name and a name the schemas take, whatever the label held."""
    text = NODE.replace("labels: {", f'labels: {{node.kubernetes.io/instance-type: "{instance_type}", ')
    adoption, _ = adopt_cluster(_objects(text), "lab")
    assert [p.name for p in adoption.profiles if p.kind == "Hardware"] == [pool]
    for profile in adoption.profiles:
        data = YAML(typ="safe").load(profile.text)
        assert [e for e in schema_errors(KIND_SCHEMA_FILES[profile.kind], data) if e[0][0] != "nodeLabels"] == []


def test_the_vf_device_id_table_is_the_sriov_operators_list_of_nvidia_nics() -> None:
    """VF_DEVICE_IDS cites the SR-IOV network operator's supported-nic-ids ConfigMap: every NVIDIA PF there, no other."""
    listed = (REPO / "tests" / "upstream" / "network" / "sriov-network-operator"
              / "deployment__chart__templates__configmap__supported-nic-ids.yaml").read_text(encoding="utf-8")
    found = re.findall(rf'"{MELLANOX_VENDOR} ([0-9a-f]{{4}}) ([0-9a-f]{{4}})"', listed)
    assert found and dict(found) == VF_DEVICE_IDS


def test_no_nvidia_vf_id_is_guessed_for_another_vendors_pf_of_the_same_device_id() -> None:
    """Intel's 8086:1015 (an 82540EM) is no ConnectX-4 Lx: its VF id is not guessed from NVIDIA's table."""
    nodes = (CLUSTERS / "dgx-1.yaml").read_text(encoding="utf-8")
    nodes = nodes.replace('vendor: "15b3"', 'vendor: "8086"').replace('deviceID: "1013"', 'deviceID: "1015"')
    operators = (CLUSTERS / "operators.yaml").read_text(encoding="utf-8").replace('"1014"\n', '"1014", "1016"\n')
    documents = [RenderedObject(d.source, _without_vfs(d.obj)) if d.kind == "SriovNetworkNodeState" else d
                 for d in _objects(f"{nodes}\n---\n{operators}")]
    adoption, _ = adopt_cluster(documents, "lab")
    hardware = _profile(adoption, "Hardware")
    assert 'deviceId: "1015"' in hardware and "vfDeviceId" not in hardware


def _without_vfs(obj: dict[str, Any]) -> dict[str, Any]:
    interfaces = [{k: v for k, v in item.items() if k != "Vfs"} for item in obj["status"]["interfaces"]]
    return {**obj, "status": {**obj["status"], "interfaces": interfaces}}


@pytest.mark.parametrize(("memory", "gib"), [("2113389776Ki", 2015), ("2Ti", 2048), ("512G", 476), ("2048Mi", 2)])
def test_node_memory_in_any_unit_kubernetes_writes_is_read_down_to_a_whole_gib(memory: str, gib: int) -> None:
    _, data = _import_text(NODE.replace("memory: 32Gi", f"memory: {memory}"))
    assert data["Hardware"]["memoryGiB"] == gib


def test_the_oldest_kubelet_is_found_by_number_and_its_node_named() -> None:
    second = NODE.replace("n1", "n2").replace("status: {", "status: {nodeInfo: {kubeletVersion: v1.9.7-eks-1a2b3c}, ")
    first = NODE.replace("status: {", "status: {nodeInfo: {kubeletVersion: v1.10.2}, ")
    adoption, data = _import_text(f"{first}---\n{second}")
    assert data["Cluster"]["kubernetesVersion"] == "1.9"
    assert "# Node n2 .status.nodeInfo.kubeletVersion (the oldest kubelet)" in _profile(adoption, "Cluster")


def _import_text(text: str) -> tuple[Adoption, dict[str, Any]]:
    adoption, _ = adopt_cluster(_objects(text), "lab")
    return adoption, {p.kind: YAML(typ="safe").load(p.text) for p in adoption.profiles}


def test_a_cordoned_or_not_ready_node_stays_in_its_pool_and_its_state_is_said_not_declared() -> None:
    """`kubectl cordon` taints a node node.kubernetes.io/unschedulable: a pool of its own declaring that taint would
    have its jobs tolerate the cordon (the scheduler then places them there)."""
    cordoned = NODE.replace("n1", "n2").replace(
        "status: {", "spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}"
                     "\nstatus: {")
    failing = NODE.replace("n1", "n3").replace(
        "status: {", "spec: {taints: [{key: node.kubernetes.io/not-ready, effect: NoExecute}]}\n"
                     "status: {conditions: [{type: Ready, status: Unknown}], ")
    adoption, data = _import_text(f"{NODE}---\n{cordoned}---\n{failing}")
    assert [p.name for p in adoption.profiles if p.kind == "Hardware"] == ["pool"]
    assert data["Cluster"]["nodePools"] == [{"name": "pool", "hardware": "pool", "nodes": 3}]
    assert "pool pool: node n2 is cordoned now: counted in the pool, the taints of its state not declared" in adoption.notes
    assert any(note.startswith("pool pool: node n3 is not ready now") for note in adoption.notes)


def test_pools_whose_nodes_have_no_labels_are_marked_as_picking_any_node() -> None:
    """Nodes without labels, split by a taint: no selector tells the pools apart, and each profile says so."""
    unlabelled = NODE.replace(", labels: {kubernetes.io/hostname: n1}", "")
    tainted = unlabelled.replace("n1", "n2").replace(
        "status: {", "spec: {taints: [{key: a, effect: NoSchedule}]}\nstatus: {")
    adoption, _ = adopt_cluster(_objects(f"{unlabelled}---\n{tainted}"), "lab")
    hardware = [p.text for p in adoption.profiles if p.kind == "Hardware"]
    assert len(hardware) == 2 and all("# nodeLabels: {}  # guess: the nodes share no label" in text for text in hardware)


def test_gfds_timestamp_is_never_a_pools_selector() -> None:
    """Two one-node pools of one GPU product, told apart only by GFD's per-node timestamp: no selector, said so."""
    gpu = NODE.replace("kubernetes.io/hostname: n1}", 'kubernetes.io/hostname: n1, nvidia.com/gpu.product: H100, '
                       'nvidia.com/gfd.timestamp: "1724632719"}')
    tainted = gpu.replace("n1", "n2").replace("1724632719", "1724632720").replace(
        "status: {", "spec: {taints: [{key: a, effect: NoSchedule}]}\nstatus: {")
    adoption, _ = _import_text(f"{gpu}---\n{tainted}")
    texts = [p.text for p in adoption.profiles if p.kind == "Hardware"]
    assert len(texts) == 2 and all("gfd.timestamp" not in text and "# guess: no label tells" in text for text in texts)


def test_a_mig_node_s_slices_are_not_written_as_whole_gpus_unmarked() -> None:
    """GFD under the `single` MIG strategy labels the slices: product `...-MIG-1g.5gb`, a count of slices."""
    mig = NODE.replace("kubernetes.io/hostname: n1}", "kubernetes.io/hostname: n1, nvidia.com/mig.strategy: single, "
                       "nvidia.com/gpu.product: A100-SXM4-40GB-MIG-1g.5gb, nvidia.com/gpu.count: '56'}")
    adoption, data = _import_text(mig)
    gpu_line = next(line for line in _profile(adoption, "Hardware").splitlines() if line.startswith("gpu:"))
    assert gpu_line.startswith("gpu:  # guess: the GPUs are partitioned (MIG: nvidia.com/mig.strategy=single)")
    assert data["Hardware"]["gpu"]["count"] == 56


def test_a_sites_kube_namespace_is_imported_as_existing_and_the_platforms_are_left_out() -> None:
    """Issue 32 point 10: only Kubernetes' own namespaces (its documentation, Namespaces: "Initial namespaces") and
    the controllers' (vocabulary/reserved.py) are no place for jobs; a site's `kube-openmpi` is one like `team-a`.
    Every exported namespace exists, so the profile lists it in `existingNamespaces` (an infra chart that created it
    would fail: "exists and cannot be imported into the current release")."""
    names = ("team-a", "kube-openmpi", "kube-system", "kube-node-lease", "kube-flannel", "argocd", "default")
    text = "".join(f"- {{apiVersion: v1, kind: Namespace, metadata: {{name: {n}}}}}\n" for n in names)
    adoption, _ = adopt_cluster(_objects("apiVersion: v1\nkind: List\nitems:\n" + text + "- " +
                                         NODE.replace("\n", "\n  ").rstrip() + "\n"), "lab")
    cluster = YAML(typ="safe").load(_profile(adoption, "Cluster"))
    assert cluster["namespaces"] == cluster["existingNamespaces"] == ["kube-openmpi", "team-a"]
