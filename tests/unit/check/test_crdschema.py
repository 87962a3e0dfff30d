"""generator/check/crdschema.py: CRD structural schemas turned into strict JSON Schema.

Unit tests pin each Kubernetes extension; the rest runs the converter against the real upstream
CRDs, whose own examples must pass and whose mutated examples must fail at the field that broke.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import DROPPED, CustomResourceSchemas
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from mpigen.check.crdschema import convert_schema, resource_schema
from mpigen.check.schemas import bundled_kube_versions

MPIJOB = ("kubeflow.org/v2beta1", "MPIJob")
NAD = ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
PODGROUP_X = ("scheduling.x-k8s.io/v1alpha1", "PodGroup")
PODGROUP_VOLCANO = ("scheduling.volcano.sh/v1beta1", "PodGroup")


def load_all(path: Path) -> list[Any]:
    return [doc for doc in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")) if doc is not None]


def accepts(node: dict[str, Any], value: Any) -> bool:
    return Draft202012Validator(convert_schema(node)).is_valid(value)


# --- conversion units ------------------------------------------------------------------------------

INT_OR_STRING = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}],
                 "pattern": "^[0-9]+(m|Gi)?$"}


@pytest.mark.parametrize(("value", "ok"), [(8, True), ("8", True), ("500m", True), ("lots", False), (1.5, False),
                                           (True, False), ([8], False), (None, False)])
def test_int_or_string_takes_integers_and_matching_strings_only(value: Any, ok: bool) -> None:
    assert accepts(INT_OR_STRING, value) is ok


def test_int_or_string_without_anyof_still_restricts_the_type() -> None:
    node = {"x-kubernetes-int-or-string": True}
    assert accepts(node, 3) and accepts(node, "3")
    assert not accepts(node, {"a": 1})


def test_strict_object_rejects_unknown_fields_but_maps_take_any_key() -> None:
    node = {"type": "object", "properties": {
        "name": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    }}
    assert accepts(node, {"name": "x", "labels": {"any.key/at-all": "v"}})
    assert not accepts(node, {"name": "x", "nmae": "typo"})
    assert not accepts(node, {"labels": {"k": 1}})


def test_preserve_unknown_fields_allows_extra_keys_but_keeps_declared_ones_typed() -> None:
    node = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {"type": "string"}}}
    assert accepts(node, {"a": "x", "b": {"anything": [1, 2]}})
    assert not accepts(node, {"a": 1})
    assert accepts({"x-kubernetes-preserve-unknown-fields": True}, [1, "two", None])


@pytest.mark.parametrize("node", [{"type": "string"}, {"type": "string", "enum": ["a", "b"]},
                                  {"type": "object", "properties": {"a": {"type": "string"}}},
                                  {"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]}])
def test_nullable_also_accepts_null_and_nothing_else(node: dict[str, Any]) -> None:
    assert not accepts(node, None)
    assert accepts({**node, "nullable": True}, None)
    assert not accepts({**node, "nullable": True}, 7)


def test_nullable_enum_still_rejects_other_values() -> None:
    node = {"type": "string", "enum": ["a", "b"], "nullable": True}
    assert accepts(node, "a") and accepts(node, None)
    assert not accepts(node, "c")


def test_value_keywords_are_kept_and_format_is_dropped() -> None:
    node = {"type": "object", "required": ["n"], "properties": {
        "n": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 3},
        "s": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
        "l": {"type": "array", "items": {"type": "string", "enum": ["x"]}, "maxItems": 1},
    }}
    converted = convert_schema(node)
    assert "format" not in converted["properties"]["n"]
    assert accepts(node, {"n": 2, "s": "ab", "l": ["x"]})
    for bad in ({}, {"n": 0}, {"n": 4}, {"n": 1, "s": "AB"}, {"n": 1, "s": "abcd"}, {"n": 1, "l": ["y"]},
                {"n": 1, "l": ["x", "x"]}):
        assert not accepts(node, bad), bad


def test_openapi_boolean_exclusive_minimum_becomes_a_number() -> None:
    node = {"type": "integer", "minimum": 0, "exclusiveMinimum": True}
    assert convert_schema(node) == {"type": "integer", "exclusiveMinimum": 0}
    assert accepts(node, 1) and not accepts(node, 0)


def test_junctor_branches_add_checks_without_closing_the_object() -> None:
    # A structural schema's anyOf branch may name a subset of the fields; that must not reject the others.
    node = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "anyOf": [{"properties": {"a": {"minLength": 2}}, "required": ["a"]}, {"required": ["b"]}]}
    assert accepts(node, {"a": "xy", "b": "z"})
    assert accepts(node, {"b": "z"})
    assert not accepts(node, {"a": "x"})
    assert not accepts(node, {})


def test_embedded_resource_allows_type_and_object_meta() -> None:
    node = {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {"type": "object"}}}
    assert accepts(node, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}})
    assert not accepts(node, {"metadata": "p"})
    assert not accepts(node, {"status": {}})


def test_top_level_allows_apiversion_kind_metadata_and_nothing_undeclared() -> None:
    schema = resource_schema({"type": "object", "properties": {"spec": {"type": "object",
                                                                        "properties": {"x": {"type": "string"}}}}})
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}},
                               "spec": {"x": "y"}})
    assert not validator.is_valid({"apiVersion": "g/v1", "kind": "K", "metadata": "n"})
    assert not validator.is_valid({"apiVersion": "g/v1", "kind": "K", "status": {}})


CRD_FILE = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-crd}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              command: {type: array, items: {type: string}}
              note: {type: string, nullable: true}
              list:
                type: array
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
  - name: v1beta1
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
  - name: v1alpha1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""


@pytest.fixture
def widget_schemas(tmp_path: Path) -> CustomResourceSchemas:
    path = tmp_path / "widgets.yaml"
    path.write_text(CRD_FILE, encoding="utf-8")
    return CustomResourceSchemas([path])


def widget(spec: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec, **(extra or {})}


def test_load_reads_every_served_version_and_skips_other_documents(widget_schemas: CustomResourceSchemas) -> None:
    assert widget_schemas.keys == {("example.com/v1", "Widget"), ("example.com/v1alpha1", "Widget")}


def test_messages_carry_the_json_path(widget_schemas: CustomResourceSchemas) -> None:
    assert widget_schemas.problems(widget({"size": 2})) == []
    assert widget_schemas.problems(widget({"size": 0})) == [
        ".spec.size: 0 is less than the minimum of 1"]
    assert widget_schemas.problems(widget({"size": 1, "colour": "red"})) == [
        ".spec.colour: unknown field" + DROPPED]
    assert widget_schemas.problems(widget({"size": 1, "list": [{"name": "a"}, {}]})) == [
        ".spec.list[1]: 'name' is a required property"]
    assert widget_schemas.problems(widget({"size": 1}, {"status": {}})) == [".status: unknown field" + DROPPED]
    assert widget_schemas.problems(widget({})) == [".spec: 'size' is a required property"]


def test_null_fields_are_pruned_like_the_api_server_unless_nullable(widget_schemas: CustomResourceSchemas) -> None:
    # `command:` with no value (upstream pi-intel) is dropped by the API server, not rejected.
    assert widget_schemas.problems(widget({"size": 1, "command": None, "note": None})) == []
    # ... but a required field given as null is then missing.
    assert widget_schemas.problems(widget({"size": None})) == [".spec: 'size' is a required property"]
    # and a null list item is not a field: it stays and fails.
    assert widget_schemas.problems(widget({"size": 1, "command": [None]})) == [
        ".spec.command[0]: None is not of type 'string'"]


def test_errors_inside_a_nullable_object_point_at_the_field() -> None:
    spec = {"type": "object", "nullable": True, "properties": {"a": {"type": "string"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    schemas = CustomResourceSchemas(documents=[{
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "ks.g"},
        "spec": {"group": "g", "names": {"kind": "K", "plural": "ks"}, "scope": "Namespaced",
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}}])
    doc = {"apiVersion": "g/v1", "kind": "K"}
    assert schemas.problems({**doc, "spec": None}) == []
    assert schemas.problems({**doc, "spec": {"a": "x"}}) == []
    assert schemas.problems({**doc, "spec": {"a": 1}}) == [".spec.a: 1 is not of type 'string'"]
    assert schemas.problems({**doc, "spec": {"a": "x", "c": 1}}) == [".spec.c: unknown field" + DROPPED]
    assert schemas.problems({**doc, "spec": "x"}) == [".spec: 'x' is not of type 'object'"]


def test_preserve_unknown_version_and_unknown_kind(widget_schemas: CustomResourceSchemas) -> None:
    loose = {"apiVersion": "example.com/v1alpha1", "kind": "Widget", "metadata": {"name": "w"}, "anything": [1]}
    assert widget_schemas.problems(loose) == []
    assert widget_schemas.problems({**loose, "apiVersion": "example.com/v1beta1"}) == [
        f".: no schema known for example.com/v1beta1 Widget: not a built-in kind of Kubernetes "
        f"{bundled_kube_versions()[-1]}, and no CRD for it was given; add its CRD with --crds DIR"]


def test_each_validator_is_compiled_once(widget_schemas: CustomResourceSchemas) -> None:
    widget_schemas.problems(widget({"size": 2}))
    compiled = widget_schemas.schema_set.compiled_count
    widget_schemas.problems(widget({"size": 0}))
    assert widget_schemas.schema_set.compiled_count == compiled


# --- the real upstream CRDs ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def schemas(upstream: Path) -> CustomResourceSchemas:
    return CustomResourceSchemas([
        upstream / "mpi-operator" / "kubeflow.org_mpijobs.yaml",
        upstream / "network" / "nad-client" / "artifacts__networks-crd.yaml",
        upstream / "scheduling" / "scheduling.x-k8s.io_podgroups.yaml",
        upstream / "scheduling" / "scheduling.volcano.sh_podgroups.yaml",
    ])


def test_upstream_crds_give_the_expected_kinds(schemas: CustomResourceSchemas) -> None:
    assert {MPIJOB, NAD, PODGROUP_X, PODGROUP_VOLCANO} <= schemas.keys


def test_converted_mpijob_schema_is_valid_json_schema(schemas: CustomResourceSchemas) -> None:
    Draft202012Validator.check_schema(schemas.converted[MPIJOB])


def test_every_upstream_mpijob_example_passes(upstream: Path, schemas: CustomResourceSchemas) -> None:
    examples = sorted((upstream / "mpi-operator" / "examples").glob("*.yaml"))
    assert len(examples) >= 5
    results = {path.name: [msg for doc in load_all(path) for msg in schemas.problems(doc)]
               for path in examples}
    assert results == {name: [] for name in results}


@pytest.fixture
def pi(upstream: Path) -> dict[str, Any]:
    (doc,) = load_all(upstream / "mpi-operator" / "examples" / "pi__pi.yaml")
    return doc


LAUNCHER = ".spec.mpiReplicaSpecs.Launcher.template.spec"
WORKER = ".spec.mpiReplicaSpecs.Worker.template.spec"


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node = doc
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[last] = value
    return mutate


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node = doc
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        del node[last]
    return mutate


LAUNCHER_C0 = "spec/mpiReplicaSpecs/Launcher/template/spec/containers/0"
WORKER_C0 = "spec/mpiReplicaSpecs/Worker/template/spec/containers/0"

MPIJOB_MUTATIONS = [
    ("unknown-spec-field", _set("spec/slotPerWorker", 2), ".spec.slotPerWorker: unknown field"),
    ("slots-as-word", _set("spec/slotsPerWorker", "two"), ".spec.slotsPerWorker: 'two' is not of type 'integer'"),
    ("implementation-enum", _set("spec/mpiImplementation", "OpenMPI5"),
     ".spec.mpiImplementation: 'OpenMPI5' is not one of ['OpenMPI', 'Intel', 'MPICH']"),
    ("container-without-name", _delete(f"{LAUNCHER_C0}/name"), f"{LAUNCHER}.containers[0]: 'name' is a required property"),
    ("replicas-as-string", _set("spec/mpiReplicaSpecs/Worker/replicas", "2"),
     ".spec.mpiReplicaSpecs.Worker.replicas: '2' is not of type 'integer'"),
    ("unknown-container-field", _set(f"{WORKER_C0}/imagePullPolicyy", "Always"),
     f"{WORKER}.containers[0].imagePullPolicyy: unknown field"),
    ("quantity-not-a-quantity", _set(f"{WORKER_C0}/resources/limits/cpu", "lots"),
     f"{WORKER}.containers[0].resources.limits.cpu: 'lots' is not a quantity (such as 8, 500m or 16Gi)"),
    ("quantity-as-float", _set(f"{WORKER_C0}/resources/limits/cpu", 1.5),
     f"{WORKER}.containers[0].resources.limits.cpu: 1.5 is not of type 'integer', 'string'"),
    ("command-not-a-list", _set(f"{WORKER_C0}/command", "/usr/sbin/sshd"),
     f"{WORKER}.containers[0].command: '/usr/sbin/sshd' is not of type 'array'"),
    ("run-policy-typo", _set("spec/runPolicy/cleanupPodPolicy", "Running"),
     ".spec.runPolicy.cleanupPodPolicy: unknown field"),
    ("no-replica-specs", _delete("spec/mpiReplicaSpecs"), ".spec: 'mpiReplicaSpecs' is a required property"),
    ("unknown-top-level", _set("specs", {}), ".specs: unknown field"),
]


@pytest.mark.parametrize(("mutate", "expected"), [case[1:] for case in MPIJOB_MUTATIONS],
                         ids=[case[0] for case in MPIJOB_MUTATIONS])
def test_mutated_upstream_mpijob_fails_at_the_field(pi: dict, schemas: CustomResourceSchemas, mutate: Callable,
                                                  expected: str) -> None:
    assert schemas.problems(pi) == []
    broken = copy.deepcopy(pi)
    mutate(broken)
    messages = schemas.problems(broken)
    assert any(message.startswith(expected) for message in messages), messages


def test_every_upstream_nad_example_passes(upstream: Path, schemas: CustomResourceSchemas) -> None:
    docs = load_all(upstream / "network" / "rdma-cni" / "examples__rdma_net_crd.yaml")
    docs += load_all(upstream / "network" / "nad-client" / "artifacts__my-network.yaml")
    assert len(docs) == 2
    assert [schemas.problems(doc) for doc in docs] == [[], []]


@pytest.mark.parametrize(("mutate", "expected"), [
    (_set("spec/config", {"cniVersion": "0.3.1"}), ".spec.config: {'cniVersion': '0.3.1'} is not of type 'string'"),
    (_set("spec/configs", "{}"), ".spec.configs: unknown field" + DROPPED + ' (did you mean "config"?)'),
    (_set("metadata", "sriov-rdma-net"), ".metadata: 'sriov-rdma-net' is not of type 'object'"),
    (_set("data", {}), ".data: unknown field" + DROPPED),
], ids=["config-as-object", "spec-typo", "metadata-as-string", "unknown-top-level"])
def test_mutated_upstream_nad_fails_at_the_field(upstream: Path, schemas: CustomResourceSchemas, mutate: Callable,
                                              expected: str) -> None:
    (doc,) = load_all(upstream / "network" / "rdma-cni" / "examples__rdma_net_crd.yaml")
    mutate(doc)
    assert expected in schemas.problems(doc)


# PodGroups as mpi-operator creates them for `--gang-scheduling` (docs/facts.md section 1); no upstream example exists.
PODGROUPS = {
    PODGROUP_X: {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": "resnet50-dgx", "namespace": "ml-training"},
                 "spec": {"minMember": 3, "scheduleTimeoutSeconds": 600,
                          "minResources": {"cpu": "65", "memory": "513Gi", "nvidia.com/gpu": 16}}},
    PODGROUP_VOLCANO: {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                       "metadata": {"name": "resnet50-dgx", "namespace": "ml-training"},
                       "spec": {"minMember": 3, "queue": "training", "priorityClassName": "high",
                                "minResources": {"cpu": 65, "nvidia.com/gpu": "16"},
                                "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}},
}


@pytest.mark.parametrize("key", list(PODGROUPS), ids=["scheduler-plugins", "volcano"])
def test_podgroups_pass(schemas: CustomResourceSchemas, key: tuple[str, str]) -> None:
    assert schemas.problems(PODGROUPS[key]) == []


@pytest.mark.parametrize(("key", "mutate", "expected"), [
    (PODGROUP_X, _set("spec/minMember", 0), ".spec.minMember: 0 is less than the minimum of 1"),
    (PODGROUP_X, _set("spec/minMember", "3"), ".spec.minMember: '3' is not of type 'integer'"),
    (PODGROUP_X, _set("spec/minResources/cpu", "lots"),
     ".spec.minResources.cpu: 'lots' is not a quantity (such as 8, 500m or 16Gi)"),
    (PODGROUP_X, _set("spec/queue", "training"), ".spec.queue: unknown field"),
    (PODGROUP_VOLCANO, _set("spec/minMember", -1), ".spec.minMember: -1 is less than the minimum of 0"),
    (PODGROUP_VOLCANO, _set("spec/queue", "Training_Queue"), ".spec.queue: 'Training_Queue' does not match"),
    (PODGROUP_VOLCANO, _set("spec/networkTopology/mode", "medium"),
     ".spec.networkTopology.mode: 'medium' is not one of ['hard', 'soft']"),
    (PODGROUP_VOLCANO, _set("spec/scheduleTimeoutSeconds", 600), ".spec.scheduleTimeoutSeconds: unknown field"),
], ids=["x-min-member-zero", "x-min-member-string", "x-quantity", "x-volcano-field", "volcano-negative",
        "volcano-queue-pattern", "volcano-enum", "volcano-x-field"])
def test_mutated_podgroups_fail_at_the_field(schemas: CustomResourceSchemas, key: tuple[str, str], mutate: Callable,
                                             expected: str) -> None:
    doc = copy.deepcopy(PODGROUPS[key])
    mutate(doc)
    messages = schemas.problems(doc)
    assert any(message.startswith(expected) for message in messages), messages


# --- GitOps consumers: Argo CD Application and Flux HelmRelease (docs/facts.md section 5) -------------

APPLICATION = ("argoproj.io/v1alpha1", "Application")
HELMRELEASE = ("helm.toolkit.fluxcd.io/v2", "HelmRelease")


@pytest.fixture(scope="session")
def gitops_schemas(upstream: Path) -> CustomResourceSchemas:
    return CustomResourceSchemas([upstream / "gitops" / "argocd" / "application-crd.yaml",
                             upstream / "gitops" / "flux" / "helm.toolkit.fluxcd.io_helmreleases.yaml"])


# One Application per compiled chart, as a user would point Argo CD at mpigen's output.
ARGO_APPLICATION = {
    "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
    "metadata": {"name": "dgx-lab-resnet50-dgx", "namespace": "argocd",
                 "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
    "spec": {
        "project": "default",
        "source": {"repoURL": "https://git.example.com/ml/fleet.git", "targetRevision": "main",
                   "path": "charts/dgx-lab/jobs/resnet50-dgx",
                   "helm": {"releaseName": "resnet50-dgx", "valueFiles": ["values.yaml"],
                            "parameters": [{"name": "image", "value": "nvcr.io/nvidia/tensorflow:24.03-tf2-py3"}],
                            "valuesObject": {"any": {"nested": ["values", 1, True]}}}},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": "ml-training"},
        "syncPolicy": {"automated": {"prune": True, "selfHeal": True},
                       "syncOptions": ["CreateNamespace=true", "Replace=true"],
                       "retry": {"limit": 5, "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}}},
        "ignoreDifferences": [{"group": "kubeflow.org", "kind": "MPIJob", "jsonPointers": ["/status"]}],
    },
}

FLUX_HELMRELEASE = {
    "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
    "metadata": {"name": "resnet50-dgx", "namespace": "flux-system"},
    "spec": {
        "interval": "10m",
        "releaseName": "resnet50-dgx",
        "targetNamespace": "ml-training",
        "chart": {"spec": {"chart": "./charts/dgx-lab/jobs/resnet50-dgx", "reconcileStrategy": "Revision",
                           "sourceRef": {"kind": "GitRepository", "name": "fleet", "namespace": "flux-system"}}},
        "dependsOn": [{"name": "dgx-lab-infra"}],
        "install": {"createNamespace": True, "remediation": {"retries": 3}},
        "upgrade": {"remediation": {"retries": 3, "strategy": "rollback"}, "crds": "CreateReplace"},
        "values": {"image": "nvcr.io/nvidia/tensorflow:24.03-tf2-py3", "workers": 2, "nested": {"any": [1, "x"]}},
        "valuesFrom": [{"kind": "ConfigMap", "name": "fleet-values", "valuesKey": "values.yaml"}],
    },
}


def test_gitops_examples_pass(gitops_schemas: CustomResourceSchemas) -> None:
    assert {APPLICATION, HELMRELEASE} <= gitops_schemas.keys
    assert gitops_schemas.problems(ARGO_APPLICATION) == []
    assert gitops_schemas.problems(FLUX_HELMRELEASE) == []


@pytest.mark.parametrize(("mutate", "expected"), [
    (_set("spec/destination", "in-cluster"), ".spec.destination: 'in-cluster' is not of type 'object'"),
    (_delete("spec/project"), ".spec: 'project' is a required property"),
    (_delete("spec/source/repoURL"), ".spec.source: 'repoURL' is a required property"),
    (_set("spec/source/helm/valueFile", ["values.yaml"]), ".spec.source.helm.valueFile: unknown field"),
    (_set("spec/source/helm/values", {"workers": 2}), ".spec.source.helm.values: {'workers': 2} is not of type 'string'"),
    (_set("spec/syncPolicy/automated/prune", "true"), ".spec.syncPolicy.automated.prune: 'true' is not of type 'boolean'"),
    (_set("spec/syncPolicy/syncOptions", "CreateNamespace=true"),
     ".spec.syncPolicy.syncOptions: 'CreateNamespace=true' is not of type 'array'"),
    (_set("spec/syncPolicy/retry/limit", "5"), ".spec.syncPolicy.retry.limit: '5' is not of type 'integer'"),
    (_set("spec/ignoreDifferences/0/jsonPointer", "/status"), ".spec.ignoreDifferences[0].jsonPointer: unknown field"),
    (_set("spec/source/helm/parameters/0/forceString", "yes"),
     ".spec.source.helm.parameters[0].forceString: 'yes' is not of type 'boolean'"),
], ids=["destination-as-string", "no-project", "no-repo-url", "helm-typo", "helm-values-as-object", "prune-as-string",
        "sync-options-as-string", "retry-limit-as-string", "ignore-differences-typo", "parameter-flag-as-string"])
def test_mutated_argo_application_fails_at_the_field(gitops_schemas: CustomResourceSchemas, mutate: Callable,
                                                     expected: str) -> None:
    doc = copy.deepcopy(ARGO_APPLICATION)
    mutate(doc)
    messages = gitops_schemas.problems(doc)
    assert any(message.startswith(expected) for message in messages), messages


@pytest.mark.parametrize(("mutate", "expected"), [
    (_set("spec/interval", "ten minutes"), ".spec.interval: 'ten minutes' does not match"),
    (_delete("spec/interval"), ".spec: 'interval' is a required property"),
    (_set("spec/chart/spec/reconcileStrategy", "Always"),
     ".spec.chart.spec.reconcileStrategy: 'Always' is not one of ['ChartVersion', 'Revision']"),
    (_set("spec/chart/spec/sourceRef/kind", "OCIRepository"),
     ".spec.chart.spec.sourceRef.kind: 'OCIRepository' is not one of ['HelmRepository', 'GitRepository', 'Bucket']"),
    (_delete("spec/chart/spec/sourceRef/name"), ".spec.chart.spec.sourceRef: 'name' is a required property"),
    (_set("spec/dependsOn", ["dgx-lab-infra"]), ".spec.dependsOn[0]: 'dgx-lab-infra' is not of type 'object'"),
    (_set("spec/install/createNamespaces", True), ".spec.install.createNamespaces: unknown field"),
    (_set("spec/upgrade/remediation/strategy", "retry"),
     ".spec.upgrade.remediation.strategy: 'retry' is not one of ['rollback', 'uninstall']"),
    (_set("spec/valuesFrom/0/kind", "Secrets"), ".spec.valuesFrom[0].kind: 'Secrets' is not one of ['Secret', 'ConfigMap']"),
    (_set("spec/valuesFrom/0/valuesKey", "values yaml"), ".spec.valuesFrom[0].valuesKey: 'values yaml' does not match"),
    (_set("spec/chart/specs", {}), ".spec.chart.specs: unknown field"),
], ids=["interval-pattern", "no-interval", "strategy-enum", "source-kind-enum", "source-without-name", "depends-on-strings",
        "install-typo", "remediation-enum", "values-from-kind-enum", "values-key-pattern", "chart-typo"])
def test_mutated_flux_helmrelease_fails_at_the_field(gitops_schemas: CustomResourceSchemas, mutate: Callable,
                                                     expected: str) -> None:
    doc = copy.deepcopy(FLUX_HELMRELEASE)
    mutate(doc)
    messages = gitops_schemas.problems(doc)
    assert any(message.startswith(expected) for message in messages), messages


def test_preserved_values_take_anything_but_only_there(gitops_schemas: CustomResourceSchemas) -> None:
    """`values` (Flux) and `valuesObject` (Argo CD) keep unknown fields; their siblings do not."""
    release = copy.deepcopy(FLUX_HELMRELEASE)
    release["spec"]["values"] = {"deeply": {"nested": {"unknown": [{"keys": None}]}}}
    assert gitops_schemas.problems(release) == []
    application = copy.deepcopy(ARGO_APPLICATION)
    application["spec"]["source"]["helm"]["valuesObject"] = {"x": {"y": [1, {"z": "w"}]}}
    assert gitops_schemas.problems(application) == []
    application["spec"]["source"]["helm"]["valuesObjects"] = {}
    assert gitops_schemas.problems(application) == [".spec.source.helm.valuesObjects: unknown field" + DROPPED
                                                 + ' (did you mean "valuesObject"?)']
