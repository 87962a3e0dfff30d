"""generator/check/schemas.py: the schema stage of `mpigen check`.

- mpigen's own CRD schemas (schemas/crds/) agree with the upstream CRDs on everything mpigen emits,
  on the upstream example MPIJobs, and on broken documents (both reject, at the same path); the few
  places where they differ on purpose are pinned here.
- Built-in kinds get the same verdicts as kubernetes_validate.validate(strict=True).
- Unknown kinds, `--crds` folders, and that schemas are loaded and compiled once.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from conftest import DROPPED, REPO, is_run_of
from jsonschema import Draft202012Validator
from kubernetes_validate.utils import ValidationError as KubernetesValidationError
from kubernetes_validate.utils import VersionNotSupportedError
from ruamel.yaml import YAML

from mpigen.check import schemas as schemas_module
from mpigen.check.schemas import (
    CRD_QUANTITY,
    QUANTITY_PATTERN,
    SchemaSet,
    bundled_kube_versions,
    own_schema_dir,
    own_schemas,
    select_kube_version,
)
from mpigen.commands.pipeline import CompileResult
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.support.diagnostics import Severity

VERSION = "1.31"
MPIJOB = ("kubeflow.org/v2beta1", "MPIJob")
NAD = ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
PODGROUP_X = ("scheduling.x-k8s.io/v1alpha1", "PodGroup")
PODGROUP_VOLCANO = ("scheduling.volcano.sh/v1beta1", "PodGroup")
VENDORED = {
    *(("sriovnetwork.openshift.io/v1", kind) for kind in ("SriovNetworkNodePolicy", "SriovNetworkPoolConfig",
                                                          "SriovNetwork", "SriovIBNetwork")),
    *((f"kueue.x-k8s.io/{version}", kind) for version in ("v1beta1", "v1beta2")
      for kind in ("ResourceFlavor", "ClusterQueue", "LocalQueue", "Topology", "WorkloadPriorityClass")),
    ("kueue.x-k8s.io/v1alpha1", "Topology"),
    ("scheduling.volcano.sh/v1beta1", "Queue"), ("batch.volcano.sh/v1alpha1", "Job"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"), ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
    ("argoproj.io/v1alpha1", "Application"), ("argoproj.io/v1alpha1", "ApplicationSet"),
    ("source.toolkit.fluxcd.io/v1", "GitRepository"), ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
    ("helm.toolkit.fluxcd.io/v2", "HelmRelease"), ("resource.nvidia.com/v1beta1", "ComputeDomain"),
    ("scheduling.run.ai/v2", "Queue"), ("kai.scheduler/v1alpha1", "Topology"), ("scheduling.run.ai/v2alpha2", "PodGroup"),
}
UPSTREAM_CRDS = ("mpi-operator/kubeflow.org_mpijobs.yaml", "network/nad-client/artifacts__networks-crd.yaml",
                 "scheduling/scheduling.x-k8s.io_podgroups.yaml", "scheduling/scheduling.volcano.sh_podgroups.yaml",
                 "network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml",
                 "network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworkpoolconfigs.yaml",
                 "network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworks.yaml",
                 "network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovibnetworks.yaml",
                 *(f"scheduling/kueue/kueue.x-k8s.io_{kind}.yaml" for kind in
                   ("resourceflavors", "clusterqueues", "localqueues", "topologies", "workloadpriorityclasses")),
                 "scheduling/scheduling.volcano.sh_queues.yaml", "scheduling/batch.volcano.sh_jobs.yaml",
                 "trainer/trainer.kubeflow.org_trainjobs.yaml", "trainer/trainer.kubeflow.org_trainingruntimes.yaml",
                 "dra/nvidia-dra-driver-gpu/resource.nvidia.com_computedomains.yaml",
                 *(f"scheduling/kai/{name}.yaml" for name in ("scheduling.run.ai_queues", "kai.scheduler_topologies",
                                                              "scheduling.run.ai_podgroups")),
                 "gitops/argocd/application-crd.yaml",
                 *(f"gitops/flux/{name}.yaml" for name in ("source.toolkit.fluxcd.io_gitrepositories",
                                                           "kustomize.toolkit.fluxcd.io_kustomizations",
                                                           "helm.toolkit.fluxcd.io_helmreleases")))


def load_all(path: Path) -> list[Any]:
    return [doc for doc in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")) if doc is not None]


def paths(findings: list[Finding]) -> list[str]:
    return [f.path for f in findings]


def doc(obj: dict[str, Any], source: str = "test.yaml") -> RenderedObject:
    return RenderedObject(source, obj)


@pytest.fixture(scope="session")
def own() -> SchemaSet:
    return SchemaSet(VERSION)


@pytest.fixture(scope="session")
def upstream_set(upstream: Path) -> SchemaSet:
    """The same checks, with the upstream CRDs (converted by generator/check/crdschema) instead of mpigen's schemas."""
    schema_set = SchemaSet(VERSION)
    assert schema_set.add_crds([upstream / name for name in UPSTREAM_CRDS]) == []
    return schema_set


@pytest.fixture(scope="session")
def fleet(example: CompileResult) -> list[RenderedObject]:
    return [RenderedObject(f"{chart.directory}/templates/{manifest.template}", manifest.obj, chart.directory)
            for chart in example.charts for manifest in chart.manifests]


def first(fleet: list[RenderedObject], kind: str, name: str | None = None) -> dict[str, Any]:
    return copy.deepcopy(next(d.obj for d in fleet if d.kind == kind and (name is None or d.name == name
                                                                          or is_run_of(d.name, name))))


# --- the shipped schema files ----------------------------------------------------------------------

OWN_FILES = sorted(own_schema_dir().glob("*.json"))
HAND_WRITTEN = [f for f in OWN_FILES if "Converted by scripts/vendor_crd_schemas.py" not in
                json.loads(f.read_text(encoding="utf-8"))["description"]]


def test_own_schemas_are_the_four_kinds_mpigen_emits_or_makes_the_operator_emit() -> None:
    assert [f.name for f in HAND_WRITTEN] == [
        "k8s.cni.cncf.io_v1_NetworkAttachmentDefinition.json", "kubeflow.org_v2beta1_MPIJob.json",
        "scheduling.volcano.sh_v1beta1_PodGroup.json", "scheduling.x-k8s.io_v1alpha1_PodGroup.json"]
    assert set(own_schemas()) == {MPIJOB, NAD, PODGROUP_X, PODGROUP_VOLCANO, *VENDORED}


def test_every_custom_kind_of_the_example_fleet_has_an_own_schema(fleet: list[RenderedObject]) -> None:
    custom = {(d.api_version, d.kind) for d in fleet if "." in d.api_version.split("/")[0]
              and not d.api_version.split("/")[0].endswith(".k8s.io")}
    assert custom >= {MPIJOB, NAD, ("kueue.x-k8s.io/v1beta2", "ClusterQueue"), ("scheduling.volcano.sh/v1beta1", "Queue"),
                      *(("sriovnetwork.openshift.io/v1", kind) for kind in ("SriovIBNetwork", "SriovNetwork",
                                                                            "SriovNetworkPoolConfig"))}
    assert custom <= set(own_schemas())


def test_the_vendored_schemas_are_the_upstream_crds_converted(upstream: Path) -> None:
    """schemas/crds/ holds, for the operators' kinds the infra charts emit, exactly what converting the upstream CRD
    gives (scripts/vendor_crd_schemas.py): nothing in them is edited by hand, and an upstream update shows here."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import vendor_crd_schemas
    finally:
        sys.path.remove(str(REPO / "scripts"))
    expected = vendor_crd_schemas.render(upstream)
    assert len(expected) == len(VENDORED)
    for name, text in expected.items():
        assert (own_schema_dir() / name).read_text(encoding="utf-8") == text, name


@pytest.mark.parametrize("path", OWN_FILES, ids=[f.stem for f in OWN_FILES])
def test_own_schema_is_draft_2020_12_named_after_its_kind(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    (gvk,) = schema["x-kubernetes-group-version-kind"]
    assert path.name == f"{gvk['group']}_{gvk['version']}_{gvk['kind']}.json"
    assert schema["properties"]["apiVersion"]["const"] == f"{gvk['group']}/{gvk['version']}"
    assert schema["properties"]["kind"]["const"] == gvk["kind"]


def subschemas(schema: dict[str, Any], root: dict[str, Any], where: str = "", seen: frozenset = frozenset()):
    """Every node reachable through properties/items/additionalProperties and local `$ref`s."""
    yield where, schema
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/") and ref not in seen:
        yield from subschemas(root["$defs"][ref.split("/")[-1]], root, f"{where}<{ref}>", seen | {ref})
    for key, sub in (schema.get("properties") or {}).items():
        yield from subschemas(sub, root, f"{where}.{key}", seen)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from subschemas(schema[key], root, f"{where}[{key}]", seen)


def documented(node: dict[str, Any]) -> bool:
    return bool(node.get("title") and node.get("description"))


def local_target(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref", "")
    return root["$defs"][ref.split("/")[-1]] if ref.startswith("#/$defs/") else {}


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=[f.stem for f in HAND_WRITTEN])
def test_own_schema_documents_every_property_and_rejects_unknown_fields(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    nodes = list(subschemas(schema, schema))
    assert len(nodes) >= 6
    undocumented = [where for where, node in nodes if not (documented(node) or documented(local_target(node, schema)))]
    loose = [where or "(root)" for where, node in nodes
             if "properties" in node and node.get("additionalProperties") is not False]
    assert undocumented == []
    assert loose == []


def test_own_quantity_pattern_is_the_kubernetes_quantity_language(upstream: Path) -> None:
    crd = load_all(upstream / "scheduling" / "scheduling.x-k8s.io_podgroups.yaml")[0]
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    upstream_pattern = spec["properties"]["minResources"]["additionalProperties"]["pattern"]
    assert CRD_QUANTITY["pattern"] == QUANTITY_PATTERN
    quantities = [node for path in OWN_FILES for schema in [json.loads(path.read_text(encoding="utf-8"))]
                  for _, node in subschemas(schema, schema) if node.get("title") == "Quantity"]
    assert len(quantities) >= 3
    assert all(node["pattern"] == QUANTITY_PATTERN and node["type"] == ["integer", "string"] for node in quantities)
    samples = ["8", "0", "500m", "16Gi", "1.5", ".5", "1e3", "1E-3", "+1", "-2Ki", "12E", "1Ei", "lots", "", "8 Gi",
               "1.5.2", "Gi", "1gi", "1e", "1KiB", "0x10", "1_000"]
    verdicts = {s: (bool(re.search(QUANTITY_PATTERN, s)), bool(re.search(upstream_pattern, s))) for s in samples}
    assert all(mine == theirs for mine, theirs in verdicts.values()), verdicts
    assert sum(mine for mine, _ in verdicts.values()) == 12


def test_pod_template_refs_the_bundled_definitions_of_every_version(fleet: list[RenderedObject]) -> None:
    template = own_schemas()[MPIJOB]["$defs"]["replicaSpec"]["properties"]["template"]
    assert template["$ref"] == "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.api.core.v1.PodTemplateSpec"
    job = first(fleet, "MPIJob", "resnet50-dgx")
    broken = copy.deepcopy(job)
    broken["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["gpus"] = 8
    for version in bundled_kube_versions():
        schema_set = SchemaSet(version)
        assert schema_set.check(doc(job)) == [], version
        assert paths(schema_set.check(doc(broken))) == [
            ".spec.mpiReplicaSpecs.Worker.template.spec.containers[0].gpus"], version


def test_pod_template_follows_the_kubernetes_version() -> None:
    """A sidecar (init container with restartPolicy: Always) is a Kubernetes 1.28 field."""
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "j"},
           "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
               "containers": [{"name": "w", "image": "i"}],
               "initContainers": [{"name": "proxy", "image": "p", "restartPolicy": "Always"}]}}}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]}
    assert paths(SchemaSet("1.27").check(doc(job))) == [
        ".spec.mpiReplicaSpecs.Worker.template.spec.initContainers[0].restartPolicy"]
    assert SchemaSet("1.28").check(doc(job)) == []
    assert paths(SchemaSet("1.27").check(doc(pod))) == [".spec.initContainers[0].restartPolicy"]
    assert SchemaSet("1.28").check(doc(pod)) == []


def test_dra_kinds_are_judged_from_kubernetes_1_34_and_the_compute_domain_by_its_crd(upstream: Path) -> None:
    """`resource.k8s.io/v1` (DRA, GA in Kubernetes 1.34) is built in from 1.34 on: DRANET's DeviceClass and claim
    template pass every such version and a count that is no integer does not; 1.33 serves no v1. The ComputeDomain of
    NVIDIA's nvbandwidth example is judged by the schema shipped from its CRD."""
    def read(path: Path) -> list[RenderedObject]:
        return [doc(obj) for obj in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")) if obj]

    dra = read(upstream / "dra" / "dranet" / "examples__mpi_operator__dra_resources.yaml")
    [domain, _] = read(upstream / "dra" / "nvidia-dra-driver-gpu" / "demo__specs__imex__nvbandwidth-test-job.yaml")
    template = copy.deepcopy(dra[1].obj)
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = "one"
    broken_domain = copy.deepcopy(domain.obj)
    del broken_domain["spec"]["channel"]
    versions = [version for version in bundled_kube_versions() if tuple(map(int, version.split("."))) >= (1, 34)]
    assert versions[0] == "1.34"
    for version in versions:
        schema_set = SchemaSet(version, strict=True)
        assert [finding for document in (*dra, domain) for finding in schema_set.check(document)] == [], version
        assert paths(schema_set.check(doc(template))) == [".spec.spec.devices.requests[0].exactly.count"], version
        assert paths(schema_set.check(doc(broken_domain))) == [".spec"], version
    [older] = SchemaSet("1.33").check(dra[1])
    assert older.message.startswith("Kubernetes 1.33 serves no resource.k8s.io/v1 ResourceClaimTemplate")


def test_wheel_ships_the_crd_schemas_where_schema_dir_finds_them(tmp_path: Path, built_wheel: Path) -> None:
    wheel = built_wheel
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    shipped = sorted((site / "mpigen" / "schemas" / "crds").glob("*.json"))
    assert [p.name for p in shipped] == [p.name for p in OWN_FILES]
    assert all(json.loads(a.read_text()) == json.loads(b.read_text()) for a, b in zip(shipped, OWN_FILES, strict=True))
    probe = "from mpigen.support.schema_files import schema_dir; print(schema_dir())"
    found = subprocess.run([sys.executable, "-c", probe],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path, env={"PYTHONPATH": str(site)})
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) / "crds" == site / "mpigen" / "schemas" / "crds"
    assert not (site / "generator").exists()  # the package installs as `mpigen` only: no top-level `generator`
    for folder, pattern in (("hardware", "*.yaml"), ("manifests", "*.lua")):  # the built-ins and the health checks
        shipped_data = sorted(p.name for p in (site / "mpigen" / folder).glob(pattern))
        assert shipped_data and shipped_data == sorted(p.name for p in (REPO / "generator" / folder).glob(pattern))


# --- own schemas against the upstream CRDs ---------------------------------------------------------

def test_every_document_mpigen_emits_passes_both(fleet: list[RenderedObject], own: SchemaSet,
                                                 upstream_set: SchemaSet, example: CompileResult,
                                                 upstream: Path) -> None:
    """Each document at its cluster's Kubernetes version: the DRA clusters' (1.34) serve resource.k8s.io/v1."""
    kinds = {d.kind for d in fleet}
    assert {"MPIJob", "NetworkAttachmentDefinition", "ConfigMap", "Namespace", "ResourceClaimTemplate",
            "DeviceClass", "ComputeDomain"} <= kinds
    versions = {cluster.name: cluster.kubernetes_version for cluster in example.fleet.clusters}
    sets = {VERSION: (own, upstream_set)}
    for version in set(versions.values()) - {VERSION}:
        with_crds = SchemaSet(version)
        assert with_crds.add_crds([upstream / name for name in UPSTREAM_CRDS]) == []
        sets[version] = (SchemaSet(version), with_crds)

    def judged(d: RenderedObject) -> tuple[list[Any], list[Any]]:
        mine, theirs = sets[versions[d.chart.split("/", 1)[0]]]
        return mine.check(d), theirs.check(d)

    results = {(d.source, d.namespace, d.label): judged(d) for d in fleet}
    assert len(results) == len(fleet) >= 10
    assert results == {key: ([], []) for key in results}


def test_every_upstream_example_mpijob_passes_both(upstream: Path, own: SchemaSet, upstream_set: SchemaSet) -> None:
    examples = sorted((upstream / "mpi-operator" / "examples").glob("*.yaml"))
    jobs = [(path.name, obj) for path in examples for obj in load_all(path)]
    assert len(jobs) >= 5 and {obj["kind"] for _, obj in jobs} == {"MPIJob"}
    # pi-intel's bare `command:` is null: the API server prunes it, so must both schema sets.
    (intel,) = [obj for name, obj in jobs if name == "pi__pi-intel.yaml"]
    assert any(c.get("command", "") is None for spec in intel["spec"]["mpiReplicaSpecs"].values()
               for c in spec["template"]["spec"]["containers"])
    results = {name: (own.check(doc(obj, name)), upstream_set.check(doc(obj, name))) for name, obj in jobs}
    assert results == {name: ([], []) for name in results}


def at(*path: str | int) -> Callable[[Any], Callable[[dict[str, Any]], None]]:
    """at("spec", "x")(value) sets spec.x; at(...)(DELETE) removes it. Keys may hold dots and slashes."""
    def with_value(value: Any) -> Callable[[dict[str, Any]], None]:
        def mutate(obj: dict[str, Any]) -> None:
            node = obj
            for part in path[:-1]:
                node = node[part]
            if value is DELETE:
                del node[path[-1]]
            else:
                node[path[-1]] = value
        return mutate
    return with_value


DELETE = object()
SPEC = ("spec",)
LAUNCHER = ("spec", "mpiReplicaSpecs", "Launcher")
WORKER = ("spec", "mpiReplicaSpecs", "Worker")
WORKER_POD = (*WORKER, "template", "spec")
WORKER_C0 = (*WORKER_POD, "containers", 0)
LAUNCHER_C0 = (*LAUNCHER, "template", "spec", "containers", 0)
W = ".spec.mpiReplicaSpecs.Worker"
WC0 = f"{W}.template.spec.containers[0]"
LC0 = ".spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]"
NETWORKS = "k8s.v1.cni.cncf.io/networks"

# (id, mutation of the example fleet's resnet50-dgx MPIJob, the one path both schema sets reject)
MPIJOB_MUTATIONS = [
    ("unknown-spec-field", at(*SPEC, "workers")(2), ".spec.workers"),
    ("slots-as-string", at(*SPEC, "slotsPerWorker")("8"), ".spec.slotsPerWorker"),
    ("implementation-enum", at(*SPEC, "mpiImplementation")("OpenMPI5"), ".spec.mpiImplementation"),
    ("launcher-as-worker-as-string", at(*SPEC, "runLauncherAsWorker")("true"), ".spec.runLauncherAsWorker"),
    ("ssh-path-as-number", at(*SPEC, "sshAuthMountPath")(22), ".spec.sshAuthMountPath"),
    ("launcher-replicas-as-string", at(*LAUNCHER, "replicas")("1"), ".spec.mpiReplicaSpecs.Launcher.replicas"),
    ("worker-replicas-as-float", at(*WORKER, "replicas")(2.5), f"{W}.replicas"),
    ("restart-policy-as-list", at(*WORKER, "restartPolicy")(["Never"]), f"{W}.restartPolicy"),
    ("replica-spec-typo", at(*WORKER, "replica")(2), f"{W}.replica"),
    ("run-policy-typo", at(*SPEC, "runPolicy", "cleanupPodPolicy")("Running"), ".spec.runPolicy.cleanupPodPolicy"),
    ("backoff-as-string", at(*SPEC, "runPolicy", "backoffLimit")("3"), ".spec.runPolicy.backoffLimit"),
    ("suspend-as-string", at(*SPEC, "runPolicy", "suspend")("no"), ".spec.runPolicy.suspend"),
    ("ttl-as-float", at(*SPEC, "runPolicy", "ttlSecondsAfterFinished")(1.5), ".spec.runPolicy.ttlSecondsAfterFinished"),
    ("min-available-as-string", at(*SPEC, "runPolicy", "schedulingPolicy")({"minAvailable": "3"}),
     ".spec.runPolicy.schedulingPolicy.minAvailable"),
    ("min-resources-not-a-quantity", at(*SPEC, "runPolicy", "schedulingPolicy")({"minResources": {"cpu": "lots"}}),
     ".spec.runPolicy.schedulingPolicy.minResources.cpu"),
    ("scheduling-policy-typo", at(*SPEC, "runPolicy", "schedulingPolicy")({"queueName": "q"}),
     ".spec.runPolicy.schedulingPolicy.queueName"),
    ("container-without-name", at(*LAUNCHER_C0, "name")(DELETE), LC0),
    ("container-name-null", at(*LAUNCHER_C0, "name")(None), LC0),
    ("unknown-container-field", at(*WORKER_C0, "gpus")(8), f"{WC0}.gpus"),
    ("command-as-string", at(*WORKER_C0, "command")("/usr/sbin/sshd"), f"{WC0}.command"),
    ("env-value-as-number", at(*WORKER_C0, "env", 0, "value")(5), f"{WC0}.env[0].value"),
    ("env-without-name", at(*WORKER_C0, "env", 0, "name")(DELETE), f"{WC0}.env[0]"),
    ("port-as-string", at(*WORKER_C0, "ports")([{"containerPort": "22"}]), f"{WC0}.ports[0].containerPort"),
    ("gpu-not-a-quantity", at(*WORKER_C0, "resources", "limits", "nvidia.com/gpu")("eight"),
     f"{WC0}.resources.limits.nvidia.com/gpu"),
    ("gpu-as-float", at(*WORKER_C0, "resources", "limits", "nvidia.com/gpu")(1.5), f"{WC0}.resources.limits.nvidia.com/gpu"),
    ("shm-size-not-a-quantity", at(*WORKER_POD, "volumes", 0, "emptyDir", "sizeLimit")("64 GB"),
     f"{W}.template.spec.volumes[0].emptyDir.sizeLimit"),
    ("capability-as-string", at(*WORKER_C0, "securityContext", "capabilities", "add")("IPC_LOCK"),
     f"{WC0}.securityContext.capabilities.add"),
    ("volume-typo", at(*WORKER_POD, "volumes", 0, "emptydir")({}), f"{W}.template.spec.volumes[0].emptydir"),
    ("pod-spec-typo", at(*WORKER_POD, "hostNetwrok")(True), f"{W}.template.spec.hostNetwrok"),
    ("template-typo", at(*WORKER, "template", "specs")({}), f"{W}.template.specs"),
    ("template-as-list", at(*WORKER, "template")([]), f"{W}.template"),
    ("networks-annotation-as-list", at(*WORKER, "template", "metadata", "annotations", NETWORKS)([{"name": "rail0"}]),
     f"{W}.template.metadata.annotations.{NETWORKS}"),
    ("no-replica-specs", at(*SPEC, "mpiReplicaSpecs")(DELETE), ".spec"),
    ("spec-as-string", at("spec")("run it"), ".spec"),
    ("metadata-as-string", at("metadata")("resnet50-dgx"), ".metadata"),
    ("unknown-top-level", at("specs")({}), ".specs"),
]

NAD_MUTATIONS = [
    ("config-as-object", lambda obj: obj["spec"].update(config=json.loads(obj["spec"]["config"])), ".spec.config"),
    ("spec-typo", at("spec", "configs")("{}"), ".spec.configs"),
    ("spec-as-string", at("spec")("{}"), ".spec"),
    ("unknown-top-level", at("data")({}), ".data"),
    ("metadata-as-list", at("metadata")([]), ".metadata"),
]

# PodGroups as mpi-operator creates them for `--gang-scheduling` (docs/facts.md section 1); mpigen emits none.
PODGROUPS = {
    PODGROUP_X: {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": "resnet50-dgx", "namespace": "ml-training"},
                 "spec": {"minMember": 3, "scheduleTimeoutSeconds": 600,
                          "minResources": {"cpu": "65", "memory": "513Gi", "nvidia.com/gpu": 16}}},
    PODGROUP_VOLCANO: {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                       "metadata": {"name": "resnet50-dgx", "namespace": "ml-training"},
                       "spec": {"minMember": 3, "queue": "training", "priorityClassName": "high",
                                "minTaskMember": {"launcher": 1, "worker": 2},
                                "minResources": {"cpu": 65, "nvidia.com/gpu": "16"},
                                "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                                "subGroupPolicy": [{"name": "rack", "subGroupSize": 2, "matchLabelKeys": ["rack"],
                                                    "labelSelector": {"matchLabels": {"role": "worker"}},
                                                    "networkTopology": {"mode": "soft"}}]}},
}

PODGROUP_MUTATIONS = [
    ("x-min-member-zero", PODGROUP_X, at("spec", "minMember")(0), ".spec.minMember"),
    ("x-min-member-as-string", PODGROUP_X, at("spec", "minMember")("3"), ".spec.minMember"),
    ("x-not-a-quantity", PODGROUP_X, at("spec", "minResources", "cpu")("lots"), ".spec.minResources.cpu"),
    ("x-volcano-field", PODGROUP_X, at("spec", "queue")("training"), ".spec.queue"),
    ("x-timeout-as-string", PODGROUP_X, at("spec", "scheduleTimeoutSeconds")("10m"), ".spec.scheduleTimeoutSeconds"),
    ("volcano-negative", PODGROUP_VOLCANO, at("spec", "minMember")(-1), ".spec.minMember"),
    ("volcano-queue-pattern", PODGROUP_VOLCANO, at("spec", "queue")("Training_Queue"), ".spec.queue"),
    ("volcano-topology-enum", PODGROUP_VOLCANO, at("spec", "networkTopology", "mode")("medium"),
     ".spec.networkTopology.mode"),
    ("volcano-x-field", PODGROUP_VOLCANO, at("spec", "scheduleTimeoutSeconds")(600), ".spec.scheduleTimeoutSeconds"),
    ("volcano-task-member-as-string", PODGROUP_VOLCANO, at("spec", "minTaskMember", "worker")("2"),
     ".spec.minTaskMember.worker"),
    ("volcano-sub-group-size-zero", PODGROUP_VOLCANO, at("spec", "subGroupPolicy", 0, "subGroupSize")(0),
     ".spec.subGroupPolicy[0].subGroupSize"),
    ("volcano-selector-typo", PODGROUP_VOLCANO, at("spec", "subGroupPolicy", 0, "labelSelector", "matchLabel")({}),
     ".spec.subGroupPolicy[0].labelSelector.matchLabel"),
    ("volcano-priority-too-long", PODGROUP_VOLCANO, at("spec", "priorityClassName")("p" * 254), ".spec.priorityClassName"),
]


def assert_both_reject_at(obj: dict[str, Any], own: SchemaSet, upstream_set: SchemaSet, expected: str) -> None:
    """Both schemas refuse mpigen's object at `expected`: a field neither declares is rule `pruned`, an error in
    mpigen's own output as every other schema finding is."""
    ours, theirs = own.check(doc(obj), own=True), upstream_set.check(doc(obj), own=True)
    assert paths(ours) == [expected], [f.format() for f in ours]
    assert paths(theirs) == [expected], [f.format() for f in theirs]
    assert all(f.rule in ("schema", "pruned") and f.severity is Severity.ERROR for f in ours + theirs)
    assert {f.rule for f in ours} == {f.rule for f in theirs}


@pytest.mark.parametrize(("mutate", "expected"), [case[1:] for case in MPIJOB_MUTATIONS],
                         ids=[case[0] for case in MPIJOB_MUTATIONS])
def test_mutated_mpijob_is_rejected_by_both_at_the_same_path(fleet: list[RenderedObject], own: SchemaSet,
                                                             upstream_set: SchemaSet, mutate: Callable,
                                                             expected: str) -> None:
    job = first(fleet, "MPIJob", "resnet50-dgx")
    assert own.check(doc(job)) == upstream_set.check(doc(job)) == []
    mutate(job)
    assert_both_reject_at(job, own, upstream_set, expected)


def test_mutated_upstream_example_mpijob_is_rejected_by_both(upstream: Path, own: SchemaSet,
                                                            upstream_set: SchemaSet) -> None:
    (job,) = load_all(upstream / "mpi-operator" / "examples" / "pi__pi.yaml")
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = "1"
    assert_both_reject_at(job, own, upstream_set, ".spec.mpiReplicaSpecs.Launcher.replicas")


@pytest.mark.parametrize(("mutate", "expected"), [case[1:] for case in NAD_MUTATIONS],
                         ids=[case[0] for case in NAD_MUTATIONS])
def test_mutated_nad_is_rejected_by_both_at_the_same_path(fleet: list[RenderedObject], own: SchemaSet,
                                                          upstream_set: SchemaSet, mutate: Callable,
                                                          expected: str) -> None:
    nad = first(fleet, "NetworkAttachmentDefinition")
    mutate(nad)
    assert_both_reject_at(nad, own, upstream_set, expected)


@pytest.mark.parametrize("key", list(PODGROUPS), ids=["scheduler-plugins", "volcano"])
def test_podgroups_pass_both(own: SchemaSet, upstream_set: SchemaSet, key: tuple[str, str]) -> None:
    assert own.check(doc(PODGROUPS[key])) == upstream_set.check(doc(PODGROUPS[key])) == []


@pytest.mark.parametrize(("key", "mutate", "expected"), [case[1:] for case in PODGROUP_MUTATIONS],
                         ids=[case[0] for case in PODGROUP_MUTATIONS])
def test_mutated_podgroup_is_rejected_by_both_at_the_same_path(own: SchemaSet, upstream_set: SchemaSet, key: tuple[str, str],
                                                               mutate: Callable, expected: str) -> None:
    podgroup = copy.deepcopy(PODGROUPS[key])
    mutate(podgroup)
    assert_both_reject_at(podgroup, own, upstream_set, expected)


# Where mpigen's schemas differ from the upstream CRDs on purpose: (id, mutation, own rejects, upstream rejects).
DIFFERENCES = [
    # mpi-operator only catches these at runtime (a Warning event, the job never runs).
    ("launcher-creation-policy-enum", at(*SPEC, "launcherCreationPolicy")("WhenReady"), True, False),
    ("replica-type-typo", at(*SPEC, "mpiReplicaSpecs", "Workers")({"replicas": 2}), True, False),
    # The API server checks ObjectMeta itself; the CRD's `metadata: {type: object}` does not.
    ("metadata-unknown-field", at("metadata", "label")({"a": "b"}), True, False),
    ("annotation-not-a-string", at("metadata", "annotations")({"example.com/n": 1}), True, False),
    # kubernetes-validate's ObjectMeta in a pod template has every field; the CRD's only five.
    ("template-generate-name", at(*WORKER, "template", "metadata", "generateName")("w-"), False, True),
]


@pytest.mark.parametrize(("mutate", "own_rejects", "upstream_rejects"), [case[1:] for case in DIFFERENCES],
                         ids=[case[0] for case in DIFFERENCES])
def test_deliberate_differences_from_the_upstream_crd(fleet: list[RenderedObject], own: SchemaSet, upstream_set: SchemaSet,
                                                      mutate: Callable, own_rejects: bool, upstream_rejects: bool) -> None:
    job = first(fleet, "MPIJob", "resnet50-dgx")
    mutate(job)
    assert bool(own.check(doc(job))) is own_rejects
    assert bool(upstream_set.check(doc(job))) is upstream_rejects


def test_messages_name_the_field_and_the_problem(fleet: list[RenderedObject], own: SchemaSet) -> None:
    job = first(fleet, "MPIJob", "resnet50-dgx")
    job["metadata"]["name"] = "resnet50-dgx"
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = "1"
    job["spec"]["mpiImplementation"] = "OpenMPI5"
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "lots"
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["gpus"] = 8
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"] = {"run": "sshd"}
    findings = own.check(RenderedObject("charts/x/templates/mpijob.yaml", job, "charts/x"))
    assert [f.format() for f in findings] == [
        "charts/x/templates/mpijob.yaml: MPIJob/resnet50-dgx: .spec.mpiImplementation: "
        "'OpenMPI5' is not one of ['OpenMPI', 'Intel', 'MPICH']",
        "charts/x/templates/mpijob.yaml: MPIJob/resnet50-dgx: .spec.mpiReplicaSpecs.Launcher.replicas: "
        "'1' is not of type 'integer'",
        f"charts/x/templates/mpijob.yaml: MPIJob/resnet50-dgx: {WC0}.command: {{'run': 'sshd'}} is not of type 'array'",
        f"charts/x/templates/mpijob.yaml: MPIJob/resnet50-dgx: {WC0}.gpus: warning: unknown field{DROPPED}",
        f"charts/x/templates/mpijob.yaml: MPIJob/resnet50-dgx: {WC0}.resources.limits.cpu: "
        "'lots' is not a quantity (such as 8, 500m or 16Gi)",
    ]


def test_long_values_are_cut_short_in_messages(own: SchemaSet) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": {"name": "c", "image": "registry.example.com/" + "x" * 200}}}
    (only,) = own.check(doc(pod))
    assert only.path == ".spec.containers"
    assert only.message.endswith("... is not of type 'array'") and len(only.message) < 100


# --- built-in kinds: the verdicts of kubernetes_validate.validate ----------------------------------

def kv_verdict(obj: dict[str, Any], version: str) -> tuple[bool, str]:
    """(valid, the JSON path of kubernetes-validate's error)."""
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except KubernetesValidationError as error:
        return False, "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return True, ""


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
       "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "1"],
                                "resources": {"limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 8}},
                                "ports": [{"containerPort": 22, "protocol": "TCP"}]}],
                "restartPolicy": "Never"}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
                       "template": {"metadata": {"labels": {"app": "d"}}, "spec": copy.deepcopy(POD["spec"])}}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"clusterIP": "None", "selector": {"app": "d"}, "ports": [{"port": 22, "targetPort": "ssh"}]}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
       "spec": {"backoffLimit": 0, "template": {"spec": copy.deepcopy(POD["spec"])}}}
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/ssh-auth",
          "stringData": {"ssh-privatekey": "x"}}


def mutated(obj: dict[str, Any], mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    mutate(obj)
    return obj


BUILTINS = [
    ("pod", POD), ("deployment", DEPLOYMENT), ("service", SERVICE), ("job", JOB), ("secret", SECRET),
    ("pod-container-without-name", mutated(POD, at("spec", "containers", 0, "name")(DELETE))),
    ("pod-unknown-field", mutated(POD, at("spec", "containers", 0, "gpus")(8))),
    ("pod-command-as-string", mutated(POD, at("spec", "containers", 0, "command")("sleep 1"))),
    ("pod-port-as-string", mutated(POD, at("spec", "containers", 0, "ports", 0, "containerPort")("22"))),
    ("pod-limit-as-list", mutated(POD, at("spec", "containers", 0, "resources", "limits", "cpu")([1]))),
    ("pod-limit-null", mutated(POD, at("spec", "containers", 0, "resources", "limits", "cpu")(None))),
    ("pod-limit-not-a-quantity", mutated(POD, at("spec", "containers", 0, "resources", "limits", "cpu")("lots"))),
    ("pod-metadata-typo", mutated(POD, at("metadata", "label")({}))),
    ("deployment-replicas-as-string", mutated(DEPLOYMENT, at("spec", "replicas")("2"))),
    ("deployment-no-selector", mutated(DEPLOYMENT, at("spec", "selector")(DELETE))),
    ("service-port-as-string", mutated(SERVICE, at("spec", "ports", 0, "port")("22"))),
    ("service-target-port-float", mutated(SERVICE, at("spec", "ports", 0, "targetPort")(2.5))),
    ("job-backoff-typo", mutated(JOB, at("spec", "backofflimit")(1))),
    ("secret-data-as-list", mutated(SECRET, at("stringData")(["x"]))),
    ("secret-type-as-number", mutated(SECRET, at("type")(1))),
]


@pytest.mark.parametrize("obj", [case[1] for case in BUILTINS], ids=[case[0] for case in BUILTINS])
def test_builtin_verdicts_equal_kubernetes_validate(own: SchemaSet, obj: dict[str, Any]) -> None:
    valid, kv_path = kv_verdict(obj, VERSION)
    findings = own.check(doc(obj))
    assert (findings == []) is valid, [f.format() for f in findings]
    if not valid:  # kubernetes-validate reports one error; ours include it (or a field below it)
        assert any(f.path.startswith(kv_path) for f in findings), (kv_path, paths(findings))


def test_builtin_verdicts_cover_both_outcomes() -> None:
    outcomes = [kv_verdict(obj, VERSION)[0] for _, obj in BUILTINS]
    assert outcomes.count(True) >= 6 and outcomes.count(False) >= 10


def test_example_fleet_builtins_match_kubernetes_validate_for_their_cluster(example: CompileResult,
                                                                          fleet: list[RenderedObject]) -> None:
    versions = {cluster.name: cluster.kubernetes_version for cluster in example.fleet.clusters}
    checked = 0
    for document in fleet:
        if document.api_version in ("v1", "apps/v1", "batch/v1"):
            version = versions[document.chart.split("/")[0]]
            broken = mutated(document.obj, at("metadata", "labels")(["not", "a", "map"]))
            assert (SchemaSet(version).check(document) == []) is kv_verdict(document.obj, version)[0] is True
            assert (SchemaSet(version).check(doc(broken)) == []) is kv_verdict(broken, version)[0] is False
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize(("asked", "selected"), [
    ("1.25", "1.25"), ("1.31", "1.31"), ("v1.31", "1.31"), ("1.31.4", "1.31"), ("1.33.0-rc.1", "1.33"),
    (bundled_kube_versions()[-1], bundled_kube_versions()[-1])])
def test_version_selection_is_kubernetes_validates(asked: str, selected: str) -> None:
    assert select_kube_version(asked) == selected == SchemaSet(asked).bundled_version
    assert kubernetes_validate.validate(SECRET, asked, strict=True) == selected


def test_versions_beyond_the_bundle() -> None:
    newest = bundled_kube_versions()[-1]
    major, minor = map(int, newest.split("."))
    # Newer than the bundle: the newest bundled schemas (kubernetes-validate refuses instead).
    assert SchemaSet(f"{major}.{minor + 5}").bundled_version == newest
    with pytest.raises(VersionNotSupportedError):
        kubernetes_validate.validate(SECRET, f"{major}.{minor + 5}", strict=True)
    with pytest.raises(ValueError, match="older than any version"):
        SchemaSet("1.20")
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        SchemaSet("latest")


# --- kinds without a schema ------------------------------------------------------------------------

APPLICATION = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
               "metadata": {"name": "pi", "namespace": "argocd"},
               "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc",
                                                              "namespace": "hpc"},
                        "source": {"repoURL": "https://git.example.com/fleet.git", "targetRevision": "main",
                                   "path": "charts/dgx-lab/jobs/pi"}}}
HELMRELEASE = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
               "metadata": {"name": "pi", "namespace": "flux-system"},
               "spec": {"interval": "10m", "targetNamespace": "hpc",
                        "chart": {"spec": {"chart": "./charts/dgx-lab/jobs/pi", "reconcileStrategy": "Revision",
                                           "sourceRef": {"kind": "GitRepository", "name": "fleet"}}}}}


APPPROJECT = {"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "pi", "namespace": "argocd"},
              "spec": {"sourceRepos": ["*"]}}
"""A kind mpigen does not emit, so ships no schema of."""


def test_unknown_kind_is_a_warning_saying_how_to_add_a_schema() -> None:
    (only,) = SchemaSet(VERSION).check(doc(APPPROJECT, "apps/pi.yaml"))
    assert (only.source, only.object, only.path, only.rule) == ("apps/pi.yaml", "AppProject/pi", "", "schema")
    assert only.severity is Severity.WARNING
    assert "no schema known for argoproj.io/v1alpha1 AppProject" in only.message
    assert "--crds DIR" in only.message
    assert only.format().startswith("apps/pi.yaml: AppProject/pi: warning: no schema known")


def test_unknown_kind_is_an_error_under_strict() -> None:
    (only,) = SchemaSet(VERSION, strict=True).check(doc(APPPROJECT))
    assert only.severity is Severity.ERROR and "--crds DIR" in only.message


@pytest.mark.parametrize(("obj", "mutate", "expected"), [
    (APPLICATION, at("spec", "destination")("in-cluster"), ".spec.destination"),
    (APPLICATION, at("spec", "project")(DELETE), ".spec"),
    (HELMRELEASE, at("spec", "interval")("ten minutes"), ".spec.interval"),
])
def test_the_gitops_kinds_mpigen_emits_are_judged_without_crds(obj: dict[str, Any], mutate: Any,
                                                               expected: str) -> None:
    """Argo CD's Application and Flux's HelmRelease (and GitRepository, Kustomization) ship as schemas/crds/."""
    schema_set = SchemaSet(VERSION, strict=True)
    assert schema_set.check(doc(obj)) == []
    findings = schema_set.check(doc(mutated(obj, mutate)))
    assert findings and all(f.severity is Severity.ERROR for f in findings)
    assert expected in [f.path for f in findings]


def test_custom_group_sharing_a_builtin_prefix_is_not_judged_as_the_builtin() -> None:
    """kubernetes-validate files `apps.example.com/v1` under `apps/v1`; a CR is no Deployment."""
    custom = {**DEPLOYMENT, "apiVersion": "apps.example.com/v1"}
    assert kv_verdict(custom, VERSION)[0] is False  # judged as apps/v1 Deployment, whose apiVersion enum fails
    (only,) = SchemaSet(VERSION).check(doc(custom))
    assert only.severity is Severity.WARNING and "no schema known for apps.example.com/v1 Deployment" in only.message


@pytest.mark.parametrize(("api_version", "kind", "served"), [
    ("batch/v1beta1", "CronJob", "batch/v1 CronJob"),
    ("policy/v1beta1", "PodDisruptionBudget", "policy/v1 PodDisruptionBudget"),
    ("v1", "configmap", "v1 ConfigMap"),
])
def test_builtin_group_with_a_version_or_kind_kubernetes_does_not_serve_is_an_error(api_version: str, kind: str,
                                                                                   served: str) -> None:
    (only,) = SchemaSet(VERSION).check(doc({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}))
    assert only.severity is Severity.ERROR
    assert only.message == f"Kubernetes {VERSION} serves no {api_version} {kind}; it serves {served}"


@pytest.mark.parametrize(("obj", "messages"), [
    ({"kind": "ConfigMap"}, ["'apiVersion' is a required property (a non-empty string)"]),
    ({"apiVersion": "v1", "kind": ""}, ["'kind' is a required property (a non-empty string)"]),
    ({"apiVersion": 1, "metadata": {"name": "x"}}, ["'apiVersion' is a required property (a non-empty string)",
                                                    "'kind' is a required property (a non-empty string)"]),
])
def test_documents_without_apiversion_or_kind(obj: dict[str, Any], messages: list[str]) -> None:
    findings = SchemaSet(VERSION).check(doc(obj))
    assert [f.message for f in findings] == messages
    assert all(f.severity is Severity.ERROR for f in findings)


# --- --crds ----------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def gitops_set(upstream: Path) -> tuple[SchemaSet, list[str]]:
    schema_set = SchemaSet(VERSION, strict=True)
    problems = schema_set.add_crds([upstream / "gitops" / "argocd", upstream / "gitops" / "flux"])
    return schema_set, problems


def test_crd_folders_make_their_kinds_known(gitops_set: tuple[SchemaSet, list[str]]) -> None:
    schema_set, problems = gitops_set
    assert problems == []
    for api_version, kind in [("argoproj.io/v1alpha1", "Application"), ("argoproj.io/v1alpha1", "ApplicationSet"),
                              ("argoproj.io/v1alpha1", "AppProject"), ("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
                              ("source.toolkit.fluxcd.io/v1", "GitRepository"),
                              ("kustomize.toolkit.fluxcd.io/v1", "Kustomization")]:
        assert schema_set.has_schema(api_version, kind), (api_version, kind)
    assert not schema_set.has_schema("argoproj.io/v1alpha1", "Rollout")
    assert schema_set.check(doc(APPLICATION)) == []
    assert schema_set.check(doc(HELMRELEASE)) == []


@pytest.mark.parametrize(("obj", "mutate", "expected"), [
    (APPLICATION, at("spec", "destination")("in-cluster"), ".spec.destination"),
    (APPLICATION, at("spec", "source", "helm")({"valueFile": ["values.yaml"]}), ".spec.source.helm.valueFile"),
    (APPLICATION, at("spec", "project")(DELETE), ".spec"),
    (HELMRELEASE, at("spec", "interval")("ten minutes"), ".spec.interval"),
    (HELMRELEASE, at("spec", "chart", "spec", "sourceRef", "kind")("OCIRepository"), ".spec.chart.spec.sourceRef.kind"),
    (HELMRELEASE, at("spec", "dependsOn")(["infra"]), ".spec.dependsOn[0]"),
], ids=["app-destination-as-string", "app-helm-typo", "app-without-project", "hr-interval-pattern", "hr-source-kind-enum",
        "hr-depends-on-strings"])
def test_crd_folder_schemas_catch_broken_resources(gitops_set: tuple[SchemaSet, list[str]], obj: dict[str, Any],
                                                   mutate: Callable, expected: str) -> None:
    schema_set, _ = gitops_set
    assert paths(schema_set.check(doc(mutated(obj, mutate)))) == [expected]


MPIJOB_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: mpijobs.kubeflow.org}
spec:
  group: kubeflow.org
  names: {kind: MPIJob, plural: mpijobs}
  scope: Namespaced
  versions:
  - name: v2beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [queue]
            x-kubernetes-preserve-unknown-fields: true
"""


def test_crds_override_the_own_schema_of_the_same_kind(tmp_path: Path, fleet: list[RenderedObject]) -> None:
    (tmp_path / "mpijob-crd.yaml").write_text(MPIJOB_CRD, encoding="utf-8")
    job = doc(mutated(first(fleet, "MPIJob"), at("spec", "launcherCreationPolicy")("WhenReady")))
    schema_set = SchemaSet(VERSION)
    assert paths(schema_set.check(job)) == [".spec.launcherCreationPolicy"]
    assert schema_set.add_crds([tmp_path]) == []
    assert [(f.path, f.message) for f in schema_set.check(job)] == [(".spec", "'queue' is a required property")]
    assert SchemaSet(VERSION).check(doc(first(fleet, "MPIJob"))) == []  # other sets keep mpigen's own


def test_crd_problems_name_the_file_and_the_good_files_still_count(tmp_path: Path, upstream: Path) -> None:
    folder = tmp_path / "crds"
    folder.mkdir()
    (folder / "mpijob-crd.yaml").write_text(MPIJOB_CRD, encoding="utf-8")
    (folder / "broken.yaml").write_text("kind: [CustomResourceDefinition\n", encoding="utf-8")
    (folder / "latin1.yml").write_bytes(b"kind: caf\xe9\n")
    (folder / "nameless.yaml").write_text(MPIJOB_CRD.replace("- name: v2beta1\n", "- \n"), encoding="utf-8")
    (folder / "existing-nad.yaml").write_text(json.dumps({"apiVersion": NAD[0], "kind": NAD[1], "metadata": {"name": "x"}}),
                                              encoding="utf-8")
    (folder / "README.md").write_text("not yaml: [", encoding="utf-8")
    schema_set = SchemaSet(VERSION)
    problems = schema_set.add_crds([folder, tmp_path / "missing"])
    assert sorted(p.split(":")[0] for p in problems) == sorted(
        [str(folder / "broken.yaml"), str(folder / "latin1.yml"), str(folder / "nameless.yaml"), str(tmp_path / "missing")])
    by_file = {p.split(":")[0]: p for p in problems}
    assert "not valid YAML" in by_file[str(folder / "broken.yaml")]
    assert "cannot read" in by_file[str(folder / "latin1.yml")]
    assert "not a usable CustomResourceDefinition" in by_file[str(folder / "nameless.yaml")]
    assert by_file[str(tmp_path / "missing")].endswith("no such file or folder")
    job = {"apiVersion": MPIJOB[0], "kind": MPIJOB[1], "metadata": {"name": "j"}, "spec": {}}
    assert [f.message for f in schema_set.check(doc(job))] == ["'queue' is a required property"]


# --- caching -----------------------------------------------------------------------------------------

def test_each_validator_is_compiled_once_and_each_file_read_once(fleet: list[RenderedObject],
                                                                 example: CompileResult) -> None:
    schema_set = SchemaSet("1.29")
    dra = {cluster.name for cluster in example.fleet.clusters if cluster.dra is not None}
    fleet = [d for d in fleet if d.chart.split("/", 1)[0] not in dra]  # DRA's pods and kinds: served from 1.34
    kinds = {(d.api_version, d.kind) for d in fleet}
    assert schema_set.compiled_count == 0
    for document in fleet:
        schema_set.check(document)
    assert schema_set.compiled_count == len(kinds) == 24  # kueue-lab's Kueue v0.14 kinds: v1beta1; kai-lab's 2
    reads = schemas_module._bundled_json.cache_info().misses
    documents = [fleet[i % len(fleet)] for i in range(100)]
    results = [schema_set.check(document) for document in documents]
    assert results == [[]] * 100
    broken = [doc(mutated(d.obj, at("metadata", "labels")([1]))) for d in documents]
    assert all(schema_set.check(document) for document in broken)
    assert schema_set.compiled_count == len(kinds)
    assert schemas_module._bundled_json.cache_info().misses == reads
    # A second set of the same version reads nothing again, but compiles its own validators.
    again = SchemaSet("1.29")
    assert all(again.check(document) == [] for document in documents)
    assert again.compiled_count == len({(d.api_version, d.kind) for d in documents})
    assert schemas_module._bundled_json.cache_info().misses == reads


def test_unknown_kinds_are_looked_up_once() -> None:
    schema_set = SchemaSet(VERSION)
    assert schema_set.check(doc(APPPROJECT))[0].severity is Severity.WARNING
    lookups = schemas_module._bundled_json.cache_info()
    for _ in range(50):
        assert schema_set.check(doc(APPPROJECT))[0].severity is Severity.WARNING
    after = schemas_module._bundled_json.cache_info()
    assert (after.hits, after.misses) == (lookups.hits, lookups.misses)
    assert schema_set.compiled_count == 0


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [*([node["$ref"]] if isinstance(node.get("$ref"), str) else []),
                *(ref for value in node.values() for ref in _refs(value))]
    return [ref for value in node for ref in _refs(value)] if isinstance(node, list) else []


@pytest.mark.parametrize("path", OWN_FILES, ids=[f.stem for f in OWN_FILES])
def test_every_ref_of_an_own_schema_resolves_under_its_published_id(path: Path) -> None:
    """The `$id` is an https address of the release: a local `#/$defs/...` resolves against it, and the Kubernetes
    definitions through the registry `check` validates with, never by fetching anything."""
    from referencing import Resource

    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$id"].startswith("https://")
    resolver = schemas_module._registry(SchemaSet(VERSION)._directory, crd_view=True).resolver_with_root(
        Resource.from_contents(schema))
    refs = _refs(schema)
    assert refs
    for ref in refs:
        assert resolver.lookup(ref).contents is not None, ref


def test_a_crd_schema_no_validator_can_use_is_said_by_every_set_and_judged_once(tmp_path):
    """A version whose schema breaks the meta-schema (`type: 5`) costs its CRD, in each schema set a check builds (one
    per Kubernetes version); the meta-schema's verdict on each distinct schema is worked out once per process."""
    broken = MPIJOB_CRD.replace("            required: [queue]\n", "            required: 5\n", 1)
    assert broken != MPIJOB_CRD
    (tmp_path / "crd.yaml").write_text(broken, encoding="utf-8")
    judged = schemas_module._schema_text_problem.cache_info().misses
    for version in ("1.29", VERSION):
        (problem,) = SchemaSet(version).add_crds([tmp_path / "crd.yaml"])
        assert problem.startswith(f"{tmp_path / 'crd.yaml'}: CRD mpijobs.kubeflow.org has a schema no validator can use: "
                                  "5 is not of type 'array'"), problem
    assert schemas_module._schema_text_problem.cache_info().misses == judged + 1
