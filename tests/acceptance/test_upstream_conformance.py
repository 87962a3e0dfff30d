"""What mpigen renders for the example fleet, checked against the upstream projects' own schemas.

Custom resources against the upstream CRDs (as `mpigen check` judges them), built-in kinds and every pod
template against kubernetes-validate's strict schemas for the cluster's Kubernetes version, and the
SR-IOV device plugin config against the network-operator's webhook schemas.
"""

from __future__ import annotations

import copy
import ipaddress
import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from conftest import DROPPED, CustomResourceSchemas
from jsonschema import Draft202012Validator
from kubernetes_validate.utils import ValidationError as KubernetesValidationError

from mpigen.commands.pipeline import CompileResult
from mpigen.model import Cluster, NetworkProvider

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
DEVICE_PLUGIN_CONFIGMAP = "sriovdp-config"


@pytest.fixture(scope="session")
def crds(upstream: Path) -> CustomResourceSchemas:
    return CustomResourceSchemas([
        upstream / "mpi-operator" / "kubeflow.org_mpijobs.yaml",
        upstream / "network" / "nad-client" / "artifacts__networks-crd.yaml",
        upstream / "scheduling" / "scheduling.x-k8s.io_podgroups.yaml",
        upstream / "scheduling" / "scheduling.volcano.sh_podgroups.yaml",
        upstream / "scheduling" / "scheduling.volcano.sh_queues.yaml",
        upstream / "scheduling" / "batch.volcano.sh_jobs.yaml",
        upstream / "trainer" / "trainer.kubeflow.org_trainjobs.yaml",
        upstream / "trainer" / "trainer.kubeflow.org_trainingruntimes.yaml",
        upstream / "dra" / "nvidia-dra-driver-gpu" / "resource.nvidia.com_computedomains.yaml",
        *(upstream / "scheduling" / "kai" / f"{name}.yaml" for name in
          ("scheduling.run.ai_queues", "kai.scheduler_topologies", "scheduling.run.ai_podgroups")),
        *(upstream / "scheduling" / "kueue" / f"kueue.x-k8s.io_{kind}.yaml" for kind in
          ("clusterqueues", "localqueues", "resourceflavors", "topologies", "workloadpriorityclasses")),
        *(upstream / "network" / "sriov-network-operator" / f"config__crd__bases__sriovnetwork.openshift.io_{kind}.yaml"
          for kind in ("sriovnetworks", "sriovibnetworks", "sriovnetworknodepolicies", "sriovnetworkpoolconfigs")),
    ])


@pytest.fixture(scope="session")
def rendered(example: CompileResult) -> list[tuple[Cluster, dict[str, Any]]]:
    """Every object of every example chart, with the cluster it is deployed to."""
    clusters = {cluster.name: cluster for cluster in example.fleet.clusters}
    out = []
    for chart in example.charts:
        cluster = clusters[chart.directory.split("/", 1)[0]]
        out += [(cluster, manifest.obj) for manifest in chart.manifests]
    assert out
    return out


def of_kind(rendered: list[tuple[Cluster, dict[str, Any]]], kind: str) -> list[dict[str, Any]]:
    return [doc for _, doc in rendered if doc["kind"] == kind]


def strict_errors(doc: dict[str, Any], version: str) -> str | None:
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except KubernetesValidationError as exc:
        return f"{'.'.join(map(str, exc.absolute_path))}: {exc.message}"
    return None


def pod_of(replica_spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": replica_spec["template"]["spec"]}


# --- custom resources against their CRDs -----------------------------------------------------------

def test_every_custom_resource_matches_its_upstream_crd(rendered: list, crds: CustomResourceSchemas) -> None:
    results = {}
    for _, doc in rendered:
        key = (doc["apiVersion"], doc["kind"])
        if key in crds:
            results[(*key, doc["metadata"].get("namespace"), doc["metadata"]["name"])] = crds.problems(doc)
    assert {kind for _, kind, _, _ in results} >= {"MPIJob", "NetworkAttachmentDefinition", "Queue", "ResourceFlavor",
                                                   "ClusterQueue", "LocalQueue", "Topology", "WorkloadPriorityClass",
                                                   "SriovIBNetwork", "SriovNetwork", "SriovNetworkNodePolicy",
                                                   "SriovNetworkPoolConfig", "TrainJob", "TrainingRuntime",
                                                   "ComputeDomain"}
    assert results == {key: [] for key in results}


def test_every_other_kind_is_a_builtin_valid_for_the_cluster_version(rendered: list, crds: CustomResourceSchemas) -> None:
    checked = {}
    for cluster, doc in rendered:
        if (doc["apiVersion"], doc["kind"]) in crds:
            continue
        # Raises SchemaNotFoundError for a custom resource whose CRD is not among the upstream ones.
        checked[(doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"])] = strict_errors(
            doc, cluster.kubernetes_version)
    assert {kind for kind, _, _ in checked} >= {"ConfigMap", "Namespace", "PriorityClass", "ResourceClaimTemplate",
                                               "DeviceClass"}
    assert checked == {key: None for key in checked}


def test_every_pod_template_is_a_valid_pod(rendered: list) -> None:
    checked = {}
    for cluster, doc in rendered:
        if doc["kind"] == "MPIJob":
            for replica, spec in doc["spec"]["mpiReplicaSpecs"].items():
                checked[(doc["metadata"]["name"], replica)] = strict_errors(pod_of(spec), cluster.kubernetes_version)
        elif doc["apiVersion"] == "batch.volcano.sh/v1alpha1":
            for task in doc["spec"]["tasks"]:
                checked[(doc["metadata"]["name"], task["name"])] = strict_errors(pod_of(task),
                                                                                cluster.kubernetes_version)
        elif doc["kind"] == "TrainingRuntime":
            for rjob in doc["spec"]["template"]["spec"]["replicatedJobs"]:
                checked[(doc["metadata"]["name"], rjob["name"])] = strict_errors(pod_of(rjob["template"]["spec"]),
                                                                                cluster.kubernetes_version)
    assert len(checked) >= 2 and any(role == "mpiworker" for _, role in checked)
    assert checked == {key: None for key in checked}


def test_the_checkers_catch_broken_documents(rendered: list, crds: CustomResourceSchemas) -> None:
    cluster, mpijob = next((c, d) for c, d in rendered if d["kind"] == "MPIJob")
    assert crds.problems(mpijob) == []

    replicas_text = copy.deepcopy(mpijob)
    replicas_text["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = "2"
    assert crds.problems(replicas_text) == [
        ".spec.mpiReplicaSpecs.Worker.replicas: '2' is not of type 'integer'"]

    unknown = copy.deepcopy(mpijob)
    unknown["spec"]["workers"] = 2
    assert crds.problems(unknown) == [".spec.workers: unknown field" + DROPPED]

    pod = pod_of(copy.deepcopy(mpijob["spec"]["mpiReplicaSpecs"]["Worker"]))
    assert strict_errors(pod, cluster.kubernetes_version) is None
    pod["spec"]["containers"][0]["gpus"] = 8
    assert "gpus" in (strict_errors(pod, cluster.kubernetes_version) or "")

    nad = copy.deepcopy(of_kind(rendered, "NetworkAttachmentDefinition")[0])
    nad["spec"]["config"] = json.loads(nad["spec"]["config"])
    assert [m.split(":")[0] for m in crds.problems(nad)] == [".spec.config"]

    namespace = copy.deepcopy(of_kind(rendered, "Namespace")[0])
    namespace["spec"] = {"finalizer": ["kubernetes"]}
    assert strict_errors(namespace, cluster.kubernetes_version)


# --- SR-IOV device plugin and the rail networks ----------------------------------------------------

@pytest.fixture(scope="session")
def webhook_schemas(upstream: Path) -> tuple[Draft202012Validator, Draft202012Validator]:
    folder = upstream / "network" / "network-operator"
    load = lambda name: json.loads((folder / name).read_text(encoding="utf-8"))  # noqa: E731
    return (Draft202012Validator(load("webhook-schemas__sriov_network_device_plugin.json")),
            Draft202012Validator(load("webhook-schemas__net_device.json")))


def device_plugin_config(rendered: list) -> dict[str, Any]:
    (configmap,) = [d for d in of_kind(rendered, "ConfigMap") if d["metadata"]["name"] == DEVICE_PLUGIN_CONFIGMAP]
    return json.loads(configmap["data"]["config.json"])


def selector_problems(config: dict[str, Any], schemas: tuple[Draft202012Validator, Draft202012Validator]) -> list[str]:
    plugin, net_device = schemas
    problems = [f"config.json: {e.message}" for e in plugin.iter_errors(config)]
    for resource in config.get("resourceList", []):
        if "selectors" not in resource:  # net_device.json would accept a resource that selects every device
            problems.append(f"{resource.get('resourceName')}: no selectors")
        problems += [f"{resource.get('resourceName')}: {e.message}"
                     for e in net_device.iter_errors({"selectors": resource.get("selectors")})]
    return problems


def test_device_plugin_config_matches_the_webhook_schemas(rendered: list, webhook_schemas: tuple) -> None:
    config = device_plugin_config(rendered)
    assert config["resourceList"]
    assert selector_problems(config, webhook_schemas) == []


def test_webhook_schema_check_catches_a_bad_selector(rendered: list, webhook_schemas: tuple) -> None:
    config = device_plugin_config(rendered)
    typo = copy.deepcopy(config)
    typo["resourceList"][0]["selectors"]["pfName"] = ["ib0"]
    assert selector_problems(typo, webhook_schemas)
    empty_device = copy.deepcopy(config)
    empty_device["resourceList"][0]["selectors"]["devices"] = [""]
    assert selector_problems(empty_device, webhook_schemas)
    unnamed = copy.deepcopy(config)
    del unnamed["resourceList"][0]["selectors"]
    assert selector_problems(unnamed, webhook_schemas)


def advertised(rendered: list) -> dict[str, dict[str, Any]]:
    """`prefix/name` -> selectors, for each resource of the device plugin."""
    return {f"{r.get('resourcePrefix', 'intel.com')}/{r['resourceName']}": r["selectors"]
            for r in device_plugin_config(rendered)["resourceList"]}


def device_plugin_clusters(rendered: list[tuple[Cluster, dict[str, Any]]]) -> list[tuple[Cluster, dict[str, Any]]]:
    """The objects of the clusters whose rails come through the SR-IOV device plugin and NADs of the chart's own
    (the other providers' NADs are macvlan/ipoib, or rendered by an operator from its own objects)."""
    return [(cluster, doc) for cluster, doc in rendered if cluster.network.provider is NetworkProvider.SRIOV_DEVICE_PLUGIN]


def test_rail_networks_chain_sriov_and_rdma_with_whereabouts(rendered: list) -> None:
    rendered = device_plugin_clusters(rendered)
    nads = of_kind(rendered, "NetworkAttachmentDefinition")
    assert nads
    resources = advertised(rendered)
    for nad in nads:
        where = f"{nad['metadata']['namespace']}/{nad['metadata']['name']}"
        config = json.loads(nad["spec"]["config"])
        assert config["name"] == nad["metadata"]["name"] and config["cniVersion"], where
        main, rdma = [plugin["type"] for plugin in config["plugins"]]
        assert (main, rdma) in {("ib-sriov", "rdma"), ("sriov", "rdma")}, where
        ipam = config["plugins"][0]["ipam"]
        assert ipam["type"] == "whereabouts", where
        ipaddress.ip_network(ipam["range"])
        resource = nad["metadata"]["annotations"][RESOURCE_ANNOTATION]
        assert resource in resources, f"{where}: {resource} is not a device plugin resource"
        assert resources[resource]["isRdma"] is True, where
        link_types = resources[resource]["linkTypes"]
        assert link_types == (["infiniband"] if main == "ib-sriov" else ["ether"]), where


def test_worker_attachments_name_networks_whose_resource_they_request(rendered: list) -> None:
    rendered = device_plugin_clusters(rendered)
    nads = {(d["metadata"]["namespace"], d["metadata"]["name"]): d for d in of_kind(rendered, "NetworkAttachmentDefinition")}
    attached = 0
    for mpijob in of_kind(rendered, "MPIJob"):
        template = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
        annotation = template.get("metadata", {}).get("annotations", {}).get(NETWORKS_ANNOTATION)
        if annotation is None:
            continue
        (container,) = template["spec"]["containers"]
        limits = container["resources"]["limits"]
        networks = json.loads(annotation)
        interfaces = [network["interface"] for network in networks]
        assert len(set(interfaces)) == len(interfaces) and all(len(i) <= 15 for i in interfaces)
        requested = []
        for network in networks:
            assert network["namespace"] == mpijob["metadata"]["namespace"]
            nad = nads[(network["namespace"], network["name"])]
            resource = nad["metadata"]["annotations"][RESOURCE_ANNOTATION]
            assert limits.get(resource) == 1, f"{mpijob['metadata']['name']} does not request {resource}"
            requested.append(resource)
        # One VF of each rail's own resource: no two attachments share a pool.
        assert len(set(requested)) == len(requested)
        assert {"IPC_LOCK"} <= set(container["securityContext"]["capabilities"]["add"])
        attached += 1
    assert attached >= 1
