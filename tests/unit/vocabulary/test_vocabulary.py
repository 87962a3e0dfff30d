"""The upstream vocabularies mpigen defines once (generator/vocabulary/) against the upstream data and the profile
schemas that spell the same facts in JSON."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from ruamel.yaml import YAML

from mpigen.model import admission, derive
from mpigen.vocabulary import gitops, kubernetes, kueue_releases, mpi_operator, multus, scheduling, trainer, volcano_job


def _schema(kind: str) -> Any:
    return json.loads((REPO / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8"))


def _values(node: Any, key: str) -> list[Any]:
    """Every value under `key` anywhere in a JSON tree."""
    found = []
    if isinstance(node, dict):
        found += [node[key]] if key in node else []
        for value in node.values():
            found += _values(value, key)
    elif isinstance(node, list):
        for value in node:
            found += _values(value, key)
    return found


def _property_enums(node: Any, name: str) -> list[list[str]]:
    return [props[name]["enum"] for props in _values(node, "properties")
            if isinstance(props, dict) and isinstance(props.get(name), dict) and "enum" in props[name]]


def test_mpi_operator_values_are_the_mpijob_crds(upstream: Path):
    crd = YAML(typ="safe").load((upstream / "mpi-operator" / "kubeflow.org_mpijobs.yaml").read_text(encoding="utf-8"))
    version = next(v for v in crd["spec"]["versions"] if v["name"] == mpi_operator.API_VERSION.split("/")[1])
    assert f"{crd['spec']['group']}/{version['name']}" == mpi_operator.API_VERSION
    assert crd["spec"]["names"]["kind"] == mpi_operator.KIND
    schema = version["schema"]["openAPIV3Schema"]
    assert sorted(*_property_enums(schema, "mpiImplementation")) == sorted(mpi_operator.MPI_IMPLEMENTATIONS)
    spec = schema["properties"]["spec"]["properties"]
    assert spec["launcherCreationPolicy"]["default"] == "AtStartup"
    for policy in mpi_operator.LAUNCHER_CREATION_POLICIES:
        assert policy in spec["launcherCreationPolicy"]["description"]


def _crd(path: Path) -> dict[str, Any]:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _is_the_crds(crd: dict[str, Any], api_version: str, kind: str) -> bool:
    """Whether `api_version` and `kind` name what the CRD defines: its group, one of its served versions, its kind."""
    group, _, version = api_version.rpartition("/")
    served = {v["name"] for v in crd["spec"]["versions"] if v.get("served")}
    return (crd["spec"]["group"], crd["spec"]["names"]["kind"]) == (group, kind) and version in served


@pytest.mark.parametrize(("crd_file", "group", "api_version", "kind"), [
    ("mpi-operator/kubeflow.org_mpijobs.yaml", mpi_operator.GROUP, mpi_operator.API_VERSION, mpi_operator.KIND),
    ("network/nad-client/artifacts__networks-crd.yaml", multus.NAD_GROUP, multus.NAD_API_VERSION, multus.NAD_KIND),
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", trainer.GROUP, trainer.API_VERSION, trainer.TRAINJOB_KIND),
    ("trainer/trainer.kubeflow.org_trainingruntimes.yaml", trainer.GROUP, trainer.API_VERSION, trainer.RUNTIME_KIND),
    ("scheduling/batch.volcano.sh_jobs.yaml", volcano_job.GROUP, volcano_job.API_VERSION, volcano_job.KIND),
    ("scheduling/scheduling.volcano.sh_queues.yaml", "scheduling.volcano.sh", scheduling.VOLCANO_API_VERSION,
     scheduling.VOLCANO_QUEUE),
    # Each Kueue release mpigen writes for serves the API versions it writes, in that release's own CRDs.
    *((f"scheduling/{folder}/kueue.x-k8s.io_{plural}.yaml", scheduling.KUEUE_GROUP,
       release.topology_api_version if kind == scheduling.TOPOLOGY else release.api_version, kind)
      for folder, release in (("kueue-v0.9", kueue_releases.named("v0.9")), ("kueue-v0.14", kueue_releases.named("v0.14")),
                              ("kueue", kueue_releases.NEWEST))
      for plural, kind in (("resourceflavors", scheduling.RESOURCE_FLAVOR), ("clusterqueues", scheduling.CLUSTER_QUEUE),
                           ("localqueues", scheduling.LOCAL_QUEUE), ("topologies", scheduling.TOPOLOGY),
                           ("workloadpriorityclasses", scheduling.WORKLOAD_PRIORITY_CLASS))),
    ("gitops/argocd/application-crd.yaml", gitops.ARGOCD_GROUP, gitops.ARGOCD_API_VERSION, gitops.APPLICATION),
    ("gitops/flux/source.toolkit.fluxcd.io_gitrepositories.yaml", "source.toolkit.fluxcd.io",
     gitops.FLUX_SOURCE_API_VERSION, gitops.GIT_REPOSITORY),
    ("gitops/flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml", "kustomize.toolkit.fluxcd.io",
     gitops.FLUX_KUSTOMIZE_API_VERSION, gitops.KUSTOMIZATION),
    ("gitops/flux/helm.toolkit.fluxcd.io_helmreleases.yaml", "helm.toolkit.fluxcd.io", gitops.FLUX_HELM_API_VERSION,
     gitops.HELM_RELEASE),
])
def test_each_api_version_and_kind_is_its_crds(upstream: Path, crd_file: str, group: str, api_version: str, kind: str):
    """Every custom kind mpigen writes or reads, as its vocabulary names it: the CRD's group, a version it serves,
    its kind."""
    crd = _crd(upstream / crd_file)
    assert _is_the_crds(crd, api_version, kind)
    assert crd["spec"]["group"] == group


def _schema_at(crd: dict[str, Any], api_version: str, path: tuple[str, ...]) -> dict[str, Any]:
    """The schema of the field at `path` in the CRD's served version of `api_version`."""
    version = next(v for v in crd["spec"]["versions"] if v["name"] == api_version.rpartition("/")[2])
    node = version["schema"]["openAPIV3Schema"]
    for key in path:
        node = node["properties"][key]
    return node


def _field_names(fields: type) -> set[str]:
    """The field names a vocabulary class holds (its upper-case attributes)."""
    return {value for name, value in vars(fields).items() if name.isupper()}


def test_mpijob_field_names_are_the_crds_at_their_paths(upstream: Path):
    """Each MPIJob field name the builder writes and check and diff read is a property of the CRD's schema where its
    type stands: MPIJobSpec at `spec`, RunPolicy at `spec.runPolicy`, SchedulingPolicy under it."""
    crd = _crd(upstream / "mpi-operator" / "kubeflow.org_mpijobs.yaml")
    spec = _schema_at(crd, mpi_operator.API_VERSION, ("spec",))
    run_policy = _schema_at(crd, mpi_operator.API_VERSION, mpi_operator.RUN_POLICY_PATH)
    gang = run_policy["properties"][mpi_operator.RunPolicyField.SCHEDULING_POLICY]
    for fields, node in ((mpi_operator.SpecField, spec), (mpi_operator.RunPolicyField, run_policy),
                         (mpi_operator.SchedulingPolicyField, gang)):
        names = _field_names(fields)
        assert names and names <= set(node["properties"]), fields.__name__
    assert _schema_at(crd, mpi_operator.API_VERSION, mpi_operator.SUSPEND_PATH)["type"] == "boolean"
    assert mpi_operator.SpecField.MPI_REPLICA_SPECS in spec["required"]
    defaults = {name: spec["properties"][name].get("default") for name in _field_names(mpi_operator.SpecField)}
    assert defaults[mpi_operator.SpecField.MPI_IMPLEMENTATION] == mpi_operator.DEFAULT_MPI_IMPLEMENTATION
    assert defaults[mpi_operator.SpecField.SSH_AUTH_MOUNT_PATH] == mpi_operator.DEFAULT_SSH_AUTH_MOUNT_PATH
    assert defaults[mpi_operator.SpecField.LAUNCHER_CREATION_POLICY] == mpi_operator.AT_STARTUP


@pytest.mark.parametrize(("crd_file", "api_version", "path", "kind_of_value"), [
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", trainer.API_VERSION, trainer.SUSPEND_PATH, "boolean"),
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", trainer.API_VERSION, ("spec", trainer.RUNTIME_REF), "object"),
    ("trainer/trainer.kubeflow.org_trainingruntimes.yaml", trainer.API_VERSION,
     ("spec", "template", "spec", trainer.REPLICATED_JOBS), "array"),
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", trainer.API_VERSION, ("spec", trainer.TRAINER), "object"),
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", trainer.API_VERSION, ("spec", trainer.MANAGED_BY), "string"),
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", trainer.API_VERSION, ("spec", trainer.ACTIVE_DEADLINE_SECONDS),
     "integer"),
    ("scheduling/batch.volcano.sh_jobs.yaml", volcano_job.API_VERSION, ("spec", volcano_job.TASKS), "array"),
    ("scheduling/batch.volcano.sh_jobs.yaml", volcano_job.API_VERSION, ("spec", volcano_job.MIN_AVAILABLE), "integer"),
])
def test_trainer_and_volcano_field_paths_are_the_crds(upstream: Path, crd_file: str, api_version: str,
                                                      path: tuple[str, ...], kind_of_value: str):
    assert _schema_at(_crd(upstream / crd_file), api_version, path)["type"] == kind_of_value


def test_the_job_schema_offers_the_operators_values():
    job = _schema("job")
    assert sorted(*_property_enums(job, "mpiImplementation")) == sorted(mpi_operator.MPI_IMPLEMENTATIONS)
    assert sorted(*_property_enums(job, "launcherCreationPolicy")) == sorted(mpi_operator.LAUNCHER_CREATION_POLICIES)
    assert set(*_property_enums(job, "cleanPodPolicy")) <= set(mpi_operator.CLEAN_POD_POLICIES)


def test_profile_quantities_are_one_grammar_in_python_and_the_schema():
    patterns = {p for p in _values(_schema("job"), "pattern") if "Ki" in p}
    assert patterns == {kubernetes.PROFILE_QUANTITY_PATTERN}
    for text, number in [("500m", "0.5"), ("1Gi", "1073741824"), ("16", "16"), ("1.5k", "1500")]:
        assert kubernetes.quantity(text) == Decimal(number)
        assert re.match(kubernetes.QUANTITY_PATTERN, text)  # every profile quantity is one Kubernetes takes
    for text in ("+1", ".5", "1e3", "1Kb", ""):
        assert not re.match(kubernetes.PROFILE_QUANTITY_PATTERN, text)


@pytest.mark.parametrize(("text", "unit", "problem"), [
    ("500m", kubernetes.MILLICORES, None), ("1.5", kubernetes.MILLICORES, None), ("0.001", kubernetes.MILLICORES, None),
    ("1Gi", kubernetes.BYTES, None), ("0.5Gi", kubernetes.BYTES, None), ("7Ei", kubernetes.BYTES, None),
    ("9223372036854775807", kubernetes.BYTES, None), ("9223372036854775.807", kubernetes.MILLICORES, None),
    ("0.0000000000000000000000000000001", kubernetes.MILLICORES, "not a whole number of millicores: Kubernetes counts it "
     "as 1m"),
    ("0.5m", kubernetes.MILLICORES, "not a whole number of millicores: Kubernetes counts it as 1m"),
    ("1.00000000000000000000000000000000000000001", kubernetes.MILLICORES, "not a whole number of millicores: "
     "Kubernetes counts it as 1001m"),
    ("0.1Gi", kubernetes.BYTES, "not a whole number of bytes: Kubernetes counts it as 107374183"),
    ("1.5", kubernetes.BYTES, "not a whole number of bytes: Kubernetes counts it as 2"),
    ("8Ei", kubernetes.BYTES, "more than Kubernetes can count (at most 9223372036854775807: an int64 of bytes)"),
    ("9223372036854775808", kubernetes.BYTES, "more than Kubernetes can count"),
    ("9223372036854775.808", kubernetes.MILLICORES, "more than Kubernetes can count (at most 9223372036854775807m"),
    ("99999999999999999999999999999Ei", kubernetes.BYTES, "more than Kubernetes can count"),
    ("9" * 100_000 + "Ei", kubernetes.BYTES, "more than Kubernetes can count"),
    ("0." + "0" * 100_000 + "1", kubernetes.MILLICORES, "not a whole number of millicores: Kubernetes counts it as 1m"),
])
def test_a_quantity_kubernetes_would_round_up_or_cap_is_a_problem(text, unit, problem):
    """apimachinery rounds a quantity up to 1n and caps a binary one at 2^63 - 1; the scheduler and the kubelet
    count CPUs in millicores and memory in bytes (`MilliValue()`, `Value()`, rounding up), as int64s."""
    found = kubernetes.quantity_problem(text, unit)
    assert (found is None) if problem is None else (found is not None and found[0].startswith(problem))


def test_quantities_compute_exactly_whatever_the_callers_context():
    """The default context rounds to 28 digits and cannot divide into more: a node's CPUs over 10^-31 of a CPU raised
    decimal.InvalidOperation in derive.layout."""
    assert kubernetes.quantity("1.000000000000000000000000000000001Gi") == \
        Decimal("1073741824.000000000000000000000001073741824")  # 43 digits, which the default context rounds
    assert admission.cpu_memory({"memory": "1000000001"})["memory"] * 2**30 == 1_000_000_001  # bytes / 2^30, exact
    hardware = {"name": "box", "cpu": {"sockets": 2, "coresPerSocket": 16}, "memoryGiB": 8589934591}
    shape = derive.layout({"workers": 1, "resources": {"cpu": "0.0000000000000000000000000000001", "memory": "1"}},
                          hardware, 1)
    assert shape.workers_per_node == 1 << 30  # as many as the CPUs hold: 32 * 10^31 is no bound


def test_json_paths_read_as_kubectl_prints_them():
    assert kubernetes.json_path(["spec", "containers", 0, "image"]) == ".spec.containers[0].image"
    assert kubernetes.json_path([]) == ""
    assert kubernetes.json_path(["resources", "limits", "nvidia.com/gpu"], quote_keys=True) == \
        '.resources.limits["nvidia.com/gpu"]'


def test_dns1035_labels_as_apimachinery_judges_them():
    assert kubernetes.dns1035_label_problems("pi-worker-0") == []
    assert kubernetes.dns1035_label_problems("0pi") == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]
    assert kubernetes.dns1035_label_problems("a" * 64) == ["must be no more than 63 characters"]


def test_argocd_health_keys_name_the_group_and_kind():
    """argocd-cm's `resource.customizations.health.<group>_<kind>`: the keys a person copies the Lua checks under."""
    assert gitops.argocd_health_key(mpi_operator.GROUP, mpi_operator.KIND) == \
        "resource.customizations.health.kubeflow.org_MPIJob"
    assert gitops.argocd_health_key(volcano_job.GROUP, volcano_job.KIND) == \
        "resource.customizations.health.batch.volcano.sh_Job"


@pytest.mark.parametrize(("domain", "native"), [
    ("kubernetes.io", True), ("node.kubernetes.io", True), ("nvidia.com", False), ("openshift.io", False),
    ("mykubernetes.io", False), ("kubernetes.io.example.com", False),
])
def test_kubernetes_own_domain_is_kubernetes_io_and_its_subdomains(domain, native):
    """One rule for validate (a cluster's `resourcePrefix`) and check (which resources are a device plugin's)."""
    assert kubernetes.in_kubernetes_domain(domain) is native
