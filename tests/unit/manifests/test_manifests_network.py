"""Per-cluster network objects (docs/facts.md section 2): a NetworkAttachmentDefinition per rail per namespace,
and the SR-IOV network device plugin's `sriovdp-config` with one resource (one VF pool) per rail.

Expected values come from profiles/clusters/dgx-lab.yaml (namespaces ml-training and hpc, rails rail0..3 on
ib0..ib3, ranges 192.168.100-103.0/24) and profiles/hardware/dgx-1.yaml (ConnectX-4, VF 15b3:1014).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import PROFILES, is_run_of

from mpigen.commands.pipeline import CompileResult, compile_profiles

RAILS = ["rail0", "rail1", "rail2", "rail3"]
RANGES = {"rail0": "192.168.100.0/24", "rail1": "192.168.101.0/24", "rail2": "192.168.102.0/24",
          "rail3": "192.168.103.0/24"}
PFS = {"rail0": "ib0", "rail1": "ib1", "rail2": "ib2", "rail3": "ib3"}


def _objects(result: CompileResult, kind: str) -> list[dict[str, Any]]:
    return [m.obj for c in result.charts for m in c.manifests if m.obj["kind"] == kind]


def _nads(result: CompileResult) -> dict[tuple[str, str], dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for nad in _objects(result, "NetworkAttachmentDefinition"):
        key = (nad["metadata"]["namespace"], nad["metadata"]["name"])
        assert key not in found, f"two NetworkAttachmentDefinitions {key}"
        found[key] = nad
    return found


def _device_plugin_config(result: CompileResult) -> tuple[dict[str, Any], dict[str, Any]]:
    maps = [o for o in _objects(result, "ConfigMap") if o["metadata"]["name"] == "sriovdp-config"]
    assert len(maps) == 1
    config_map = maps[0]
    assert list(config_map["data"]) == ["config.json"]
    return config_map, json.loads(config_map["data"]["config.json"])


def _selectors(entry: dict[str, Any]) -> dict[str, Any]:
    """The device plugin takes `selectors` as one object or as a list of them; mpigen needs exactly one."""
    selectors = entry["selectors"]
    if isinstance(selectors, list):
        assert len(selectors) == 1, selectors
        selectors = selectors[0]
    return selectors


def _compile(profiles_copy, edits: dict[str, str | None]) -> CompileResult:
    result = compile_profiles([profiles_copy(edits)])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


# --- NetworkAttachmentDefinitions -------------------------------------------------------------------------


def test_one_nad_per_rail_per_namespace(example):
    assert set(_nads(example)) == {(ns, rail) for ns in ("ml-training", "hpc") for rail in RAILS}


@pytest.mark.parametrize("namespace", ["ml-training", "hpc"])
@pytest.mark.parametrize("rail", RAILS)
def test_nad_object(example, namespace, rail):
    nad = _nads(example)[(namespace, rail)]
    assert nad["apiVersion"] == "k8s.cni.cncf.io/v1"
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == f"nvidia.com/rdma_{rail}"
    assert list(nad["spec"]) == ["config"]
    assert isinstance(nad["spec"]["config"], str)


@pytest.mark.parametrize("rail", RAILS)
def test_nad_cni_conflist_ib_sriov_rdma_whereabouts(example, rail):
    config = json.loads(_nads(example)[("ml-training", rail)]["spec"]["config"])
    assert config["cniVersion"] == "0.3.1"
    assert config["name"] == rail
    assert "type" not in config, "a conflist has plugins, not a top-level type"
    plugins = config["plugins"]
    assert [p["type"] for p in plugins] == ["ib-sriov", "rdma"]
    ipam = plugins[0]["ipam"]
    assert ipam["type"] == "whereabouts"
    assert ipam["range"] == RANGES[rail]
    assert ipam.get("exclude", []) == []
    assert "ipam" not in plugins[1]


def test_nad_ipam_exclude_from_the_cluster_profile(profiles_copy):
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    old = "      range: 192.168.101.0/24\n"
    assert old in cluster
    edited = cluster.replace(old, old + "      exclude:\n        - 192.168.101.0/28\n        - 192.168.101.254/32\n")
    result = _compile(profiles_copy, {"clusters/dgx-lab.yaml": edited})
    nads = _nads(result)
    for namespace in ("ml-training", "hpc"):
        ipam = json.loads(nads[(namespace, "rail1")]["spec"]["config"])["plugins"][0]["ipam"]
        assert ipam == {"type": "whereabouts", "range": "192.168.101.0/24",
                        "exclude": ["192.168.101.0/28", "192.168.101.254/32"]}
        other = json.loads(nads[(namespace, "rail0")]["spec"]["config"])["plugins"][0]["ipam"]
        assert other.get("exclude", []) == []


def test_nads_are_in_the_infra_chart_only(example):
    for chart in example.charts:
        kinds = {m.obj["kind"] for m in chart.manifests}
        if "MPIJob" in kinds:
            assert "NetworkAttachmentDefinition" not in kinds
            assert "Namespace" not in kinds


def test_namespaces_of_the_cluster_are_created(example):
    created = {chart.directory: sorted(m.obj["metadata"]["name"] for m in chart.manifests if m.obj["kind"] == "Namespace")
               for chart in example.charts}
    acceptance = {directory: made for directory, made in created.items() if "/acceptance/" in directory}
    assert len(acceptance) == 46 and not any(acceptance.values())  # the acceptance charts make none either
    jobs_and_infra = {directory: made for directory, made in created.items() if directory not in acceptance}
    assert jobs_and_infra == {"dgx-lab/infra": ["hpc", "ml-training"], "cpu-lab/infra": ["mpi"], "dgx-lab/jobs/pi": [],
                       "dgx-lab/jobs/resnet50-dgx": [], "dgx-lab/jobs/resnet50-trainjob": [],
                       "dgx-lab/jobs/tensorflow-benchmarks": [],
                       "cpu-lab/jobs/cpu-pi": [],
                       "netapp-lab/infra": ["ai-training"], "netapp-lab/jobs/netapp-resnet50": [],
                       "dgx-pod/infra": ["team-language", "team-vision"], "dgx-pod/jobs/language-bert": [],
                       "dgx-pod/jobs/vision-resnet50": [], "roce-lab/infra": ["roce-training"],
                       "kueue-lab/infra": ["research", "teaching"], "kueue-lab/jobs/kueue-pi": [],
                       "volcano-lab/infra": ["training"],
                       "volcano-lab/jobs/volcano-allreduce": [], "volcano-lab/jobs/allreduce-vcjob": [],
                       "h100-dra/infra": ["llm"], "h100-dra/jobs/llm-pretrain": [],
                       "gb200-rack/infra": ["frontier"], "gb200-rack/jobs/mnnvl-allreduce": [],
                       "kai-lab/infra": ["experiments", "training"], "kai-lab/jobs/kai-allreduce": [],
                       "kai-lab/jobs/kai-research": []}


def test_namespaces_outlive_the_infra_chart_under_helm_and_argo_cd(example):
    for namespace in _objects(example, "Namespace"):
        annotations = namespace["metadata"]["annotations"]
        assert annotations["helm.sh/resource-policy"] == "keep"
        assert annotations["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"


# Pod Security levels, by hand: resnet50-dgx's workers add IPC_LOCK (RDMA), and so do resnet50-trainjob's (its
# TrainingRuntime's `node` containers), netapp-resnet50's also use the host's
# network (and volcano-allreduce's and allreduce-vcjob's: host-network), the dgx-pod jobs' add IPC_LOCK;
# pi and cpu-pi run as uid 1000, so mpigen gives them the restricted settings.
IPC_LOCK = "container worker adds capability IPC_LOCK"
# The controls that need the level, each once and sorted, naming no job: a job that needs nothing new leaves them be.
NAMESPACE_LEVELS = {
    "ml-training": ("privileged", "v1.31", f"container node adds capability IPC_LOCK; {IPC_LOCK}"),
    "hpc": ("restricted", "v1.31", None),
    "mpi": ("restricted", "v1.32", None),
    "roce-training": ("privileged", "v1.31", IPC_LOCK),  # roce-lab has no job, but acceptance jobs on its rails
    "ai-training": ("privileged", "v1.31", f"{IPC_LOCK}; hostNetwork: true"),
    "team-vision": ("privileged", "v1.31", IPC_LOCK),
    "team-language": ("privileged", "v1.31", IPC_LOCK),
    "training": ("privileged", "v1.31", f"{IPC_LOCK}; hostNetwork: true"),  # volcano-lab's and kai-lab's
    "experiments": ("privileged", "v1.31", f"{IPC_LOCK}; hostNetwork: true"),  # kai-lab's kai-research
    "research": ("restricted", "v1.31", None),
    "teaching": ("restricted", "v1.31", None),  # kueue-lab's second team has no job
    "llm": ("privileged", "v1.34", IPC_LOCK),  # RDMA NICs claimed through DRA still need IPC_LOCK
    "frontier": ("privileged", "v1.34", IPC_LOCK),
}


def test_namespaces_enforce_the_pod_security_level_their_jobs_need(example):
    found = {}
    for namespace in _objects(example, "Namespace"):
        labels, annotations = namespace["metadata"]["labels"], namespace["metadata"]["annotations"]
        found[namespace["metadata"]["name"]] = (labels["pod-security.kubernetes.io/enforce"],
                                                labels["pod-security.kubernetes.io/enforce-version"],
                                                annotations.get("mpigen/pod-security-reason"))
    assert found == NAMESPACE_LEVELS


def test_a_namespace_without_jobs_is_restricted_unless_the_cluster_asks_for_more(profiles_copy):
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    assert "  - hpc\n" in cluster
    cluster = cluster.replace("  - hpc\n", "  - hpc\n  - empty\n  - shared\n")
    cluster += "podSecurity:\n  shared: baseline\n  ml-training: baseline\n"
    result = _compile(profiles_copy, {"clusters/dgx-lab.yaml": cluster})
    labels = {n["metadata"]["name"]: (n["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
                                      n["metadata"]["annotations"].get("mpigen/pod-security-reason"))
              for n in _objects(result, "Namespace")}
    assert labels["empty"] == ("restricted", None)
    assert labels["shared"] == ("baseline", "cluster dgx-lab asks for baseline")
    # A floor below what the jobs need does not lower it.
    assert labels["ml-training"] == NAMESPACE_LEVELS["ml-training"][::2]


def test_a_privileged_job_raises_its_namespace_and_says_why(profiles_copy):
    pi = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    pi += "privileged:\n  reason: the nvidia-fs driver needs /dev/nvidia-fs*\n"
    result = _compile(profiles_copy, {"jobs/pi.yaml": pi})
    hpc = next(n for n in _objects(result, "Namespace") if n["metadata"]["name"] == "hpc")
    assert hpc["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert hpc["metadata"]["annotations"]["mpigen/pod-security-reason"] == "container worker is privileged"


def _levels(result: CompileResult) -> dict[str, tuple[str, str | None]]:
    return {n["metadata"]["name"]: (n["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
                                    n["metadata"]["annotations"].get("mpigen/pod-security-reason"))
            for n in _objects(result, "Namespace")}


def _copy_of(job: str, name: str, *edits: tuple[str, str]) -> str:
    text = (PROFILES / "jobs" / f"{job}.yaml").read_text(encoding="utf-8").replace(f"name: {job}\n", f"name: {name}\n")
    for old, new in edits:
        assert old in text, (job, old)
        text = text.replace(old, new)
    return text


def test_a_job_that_needs_nothing_new_leaves_every_namespace_as_it_was(example, profiles_copy):
    """The reason names no job: a job whose pods need the level and controls already there (privileged, for RDMA, as
    most jobs do) or less (baseline in a privileged namespace) changes no Namespace when it comes or goes."""
    result = _compile(profiles_copy, {"jobs/aaa-resnet50.yaml": _copy_of("resnet50-dgx", "aaa-resnet50"),
                                      "jobs/tf-again.yaml": _copy_of("tensorflow-benchmarks", "tf-again"),
                                      "jobs/tensorflow-benchmarks.yaml": None})
    assert _levels(result) == _levels(example)


def test_a_namespace_its_jobs_raise_to_baseline_lists_each_control_once(profiles_copy):
    in_hpc = ("namespace: ml-training\n", "namespace: hpc\n")
    one = _levels(_compile(profiles_copy, {"jobs/tf-one.yaml": _copy_of("tensorflow-benchmarks", "tf-one", in_hpc)}))
    lacks = "lacks allowPrivilegeEscalation: false, runAsNonRoot: true, seccompProfile RuntimeDefault, capabilities drop ALL"
    assert one["hpc"] == ("baseline", f"container launcher {lacks}; container worker {lacks}")
    two = _levels(_compile(profiles_copy, {"jobs/tf-one.yaml": _copy_of("tensorflow-benchmarks", "tf-one", in_hpc),
                                           "jobs/tf-two.yaml": _copy_of("tensorflow-benchmarks", "tf-two", in_hpc)}))
    assert two == one


def test_a_namespace_the_cluster_sets_gives_the_cluster_as_its_reason(profiles_copy):
    """Jobs that need no more than the cluster asks for do not set the level: the reason stays the cluster's ask."""
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    cluster += "podSecurity:\n  ml-training: privileged\n  hpc: baseline\n"
    in_hpc = ("namespace: ml-training\n", "namespace: hpc\n")
    levels = _levels(_compile(profiles_copy, {"clusters/dgx-lab.yaml": cluster,
                                              "jobs/tf-one.yaml": _copy_of("tensorflow-benchmarks", "tf-one", in_hpc)}))
    assert levels["ml-training"] == ("privileged", "cluster dgx-lab asks for privileged")
    assert levels["hpc"] == ("baseline", "cluster dgx-lab asks for baseline")


def test_nads_are_applied_by_argo_cd_even_before_their_crd_exists(example):
    for nad in _nads(example).values():
        assert nad["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "SkipDryRunOnMissingResource=true"


# --- sriovdp-config ----------------------------------------------------------------------------------------


def test_device_plugin_configmap_location(example):
    config_map, _ = _device_plugin_config(example)
    assert config_map["apiVersion"] == "v1"
    assert config_map["metadata"]["namespace"] == "kube-system"


def test_device_plugin_one_resource_per_rail(example):
    _, config = _device_plugin_config(example)
    resources = config["resourceList"]
    assert [r["resourceName"] for r in resources] == ["rdma_rail0", "rdma_rail1", "rdma_rail2", "rdma_rail3"]
    for rail, entry in zip(RAILS, resources, strict=True):
        assert entry["resourcePrefix"] == "nvidia.com"
        selectors = _selectors(entry)
        assert selectors["vendors"] == ["15b3"]
        assert selectors["devices"] == ["1014"], "the device plugin hands out VFs: select the VF id, not 1013"
        assert selectors["pfNames"] == [PFS[rail]]
        assert selectors["linkTypes"] == ["infiniband"]
        assert selectors["isRdma"] is True
        assert selectors.get("drivers", ["mlx5_core"]) == ["mlx5_core"]


def test_device_plugin_pools_never_share_a_pf(example):
    _, config = _device_plugin_config(example)
    seen: set[str] = set()
    for entry in config["resourceList"]:
        pfs = set(_selectors(entry)["pfNames"])
        assert pfs and not pfs & seen, "one pool across PFs can hand out two VFs of the same PF"
        seen |= pfs


def test_nad_resources_match_device_plugin_and_job_limits(example):
    _, config = _device_plugin_config(example)
    offered = {f"{r['resourcePrefix']}/{r['resourceName']}" for r in config["resourceList"]}
    annotated = {n["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] for n in _nads(example).values()}
    assert annotated == offered
    mpijob = next(o for o in _objects(example, "MPIJob") if is_run_of(o["metadata"]["name"], "resnet50-dgx"))
    limits = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert {k for k in limits if "rdma" in k} == offered


def test_roce_device_plugin_selects_ethernet_vfs(profiles_copy):
    hardware = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
    result = _compile(profiles_copy, {"hardware/dgx-1.yaml": hardware.replace("linkType: InfiniBand",
                                                                              "linkType: Ethernet")})
    _, config = _device_plugin_config(result)
    for entry in config["resourceList"]:
        assert _selectors(entry)["linkTypes"] == ["ether"]
        assert _selectors(entry)["isRdma"] is True
    for nad in _nads(result).values():
        assert [p["type"] for p in json.loads(nad["spec"]["config"])["plugins"]] == ["sriov", "rdma"]


def test_custom_resource_prefix_and_name(profiles_copy):
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    edited = cluster.replace("  provider: sriov-device-plugin\n",
                             "  provider: sriov-device-plugin\n  resourcePrefix: example.com\n")
    edited = edited.replace("  - name: rail3\n    nic: ib3\n", "  - name: rail3\n    nic: ib3\n    resourceName: fourth\n")
    assert edited.count("resourcePrefix: example.com") == 1 and "fourth" in edited
    result = _compile(profiles_copy, {"clusters/dgx-lab.yaml": edited})
    _, config = _device_plugin_config(result)
    assert [(r["resourcePrefix"], r["resourceName"]) for r in config["resourceList"]] == [
        ("example.com", "rdma_rail0"), ("example.com", "rdma_rail1"), ("example.com", "rdma_rail2"),
        ("example.com", "fourth")]
    assert _nads(result)[("hpc", "rail3")]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == (
        "example.com/fourth")
    mpijob = next(o for o in _objects(result, "MPIJob") if is_run_of(o["metadata"]["name"], "resnet50-dgx"))
    limits = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["example.com/fourth"] == 1
    assert limits["example.com/rdma_rail0"] == 1


def test_a_host_folder_with_a_reason_raises_its_namespace_and_gives_the_reason(profiles_copy):
    pi = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    pi += ("volumes:\n  - name: root\n    hostPath: {path: /, reason: the node audit reads every file}\n"
           "    mountPath: /host\n    readOnly: true\n")
    result = _compile(profiles_copy, {"jobs/pi.yaml": pi})
    hpc = next(n for n in _objects(result, "Namespace") if n["metadata"]["name"] == "hpc")
    assert hpc["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert hpc["metadata"]["annotations"]["mpigen/pod-security-reason"] == (
        "hostPath volume root (/) (reason: the node audit reads every file)")
