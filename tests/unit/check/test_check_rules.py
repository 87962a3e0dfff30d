"""generator/check/rules/: mpi-operator's validation, Multus networks, node capacity, reserved names.

Expected messages are written out by hand from the upstream sources the rules cite (mpi-operator's
validation.go and k8s.io/apimachinery's field errors), never copied from the rules' own output.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from mpigen.check import rules
from mpigen.check.rules import (
    check_capacity,
    check_extended_resources,
    check_mpijob,
    check_networks,
    check_reserved_names,
    registry,
    run_rules,
)
from mpigen.readback.findings import CheckContext, NodeShape, RenderedObject
from mpigen.support.diagnostics import Severity

SOURCE = "charts/lab/jobs/x/templates/mpijob.yaml"
CHART = "charts/lab/jobs/x"
NETWORKS = "k8s.v1.cni.cncf.io/networks"
RESOURCE_NAME = "k8s.v1.cni.cncf.io/resourceName"
ANNOTATION_PATH = '.spec.mpiReplicaSpecs.Worker.template.metadata.annotations["k8s.v1.cni.cncf.io/networks"]'
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def base_job() -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "x", "namespace": "ml"},
        "spec": {
            "slotsPerWorker": 8,
            "runPolicy": {"cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "l", "image": "i"}]}}},
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}},
            },
        },
    }


def job(change: Callable[[dict[str, Any]], Any] | None = None, chart: str = CHART) -> RenderedObject:
    obj = base_job()
    if change:
        change(obj)
    return RenderedObject(SOURCE, obj, chart)


def spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]


def replica(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return obj["spec"]["mpiReplicaSpecs"][role]


def worker_pod(obj: dict[str, Any]) -> dict[str, Any]:
    return replica(obj, "Worker")["template"]


def as_tuples(findings: list[rules.Finding]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in findings]


# --- mpi-operator -------------------------------------------------------------------------------------

def test_a_valid_job_passes():
    assert check_mpijob(job()) == []


MPI_CASES = [
    ("worker replicas 0", lambda o: replica(o, "Worker").update(replicas=0),
     ".spec.mpiReplicaSpecs.Worker.replicas",
     "spec.mpiReplicaSpecs[Worker].replicas: Invalid value: 0: must be greater than or equal to 1"),
    ("worker without replicas is defaulted to 0", lambda o: replica(o, "Worker").pop("replicas"),
     ".spec.mpiReplicaSpecs.Worker.replicas",
     "spec.mpiReplicaSpecs[Worker].replicas: Invalid value: 0: must be greater than or equal to 1"),
    ("launcher replicas 2", lambda o: replica(o, "Launcher").update(replicas=2),
     ".spec.mpiReplicaSpecs.Launcher.replicas",
     "spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1"),
    ("no launcher", lambda o: spec(o)["mpiReplicaSpecs"].pop("Launcher"),
     ".spec.mpiReplicaSpecs.Launcher",
     "spec.mpiReplicaSpecs[Launcher]: Required value: must have Launcher replica spec"),
    ("no replica specs", lambda o: spec(o).pop("mpiReplicaSpecs"),
     ".spec.mpiReplicaSpecs",
     "spec.mpiReplicaSpecs: Required value: must have replica specs"),
    ("launcher restartPolicy Always", lambda o: replica(o, "Launcher").update(restartPolicy="Always"),
     ".spec.mpiReplicaSpecs.Launcher.restartPolicy",
     'spec.mpiReplicaSpecs[Launcher].restartPolicy: Unsupported value: "Always": supported values: "Never", "OnFailure"'),
    ("worker restartPolicy ExitCode", lambda o: replica(o, "Worker").update(restartPolicy="ExitCode"),
     ".spec.mpiReplicaSpecs.Worker.restartPolicy",
     'spec.mpiReplicaSpecs[Worker].restartPolicy: Unsupported value: "ExitCode": supported values: "Never", "OnFailure"'),
    ("worker without containers", lambda o: worker_pod(o)["spec"].update(containers=[]),
     ".spec.mpiReplicaSpecs.Worker.template.spec.containers",
     "spec.mpiReplicaSpecs[Worker].template.spec.containers: Required value: must define at least one container"),
    ("launcher without template", lambda o: replica(o, "Launcher").pop("template"),
     ".spec.mpiReplicaSpecs.Launcher.template.spec.containers",
     "spec.mpiReplicaSpecs[Launcher].template.spec.containers: Required value: must define at least one container"),
    ("cleanPodPolicy", lambda o: spec(o)["runPolicy"].update(cleanPodPolicy="Sometimes"),
     ".spec.runPolicy.cleanPodPolicy",
     'spec.runPolicy.cleanPodPolicy: Unsupported value: "Sometimes": supported values: "All", "None", "Running"'),
    ("ttlSecondsAfterFinished", lambda o: spec(o)["runPolicy"].update(ttlSecondsAfterFinished=-1),
     ".spec.runPolicy.ttlSecondsAfterFinished",
     "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0"),
    ("activeDeadlineSeconds", lambda o: spec(o)["runPolicy"].update(activeDeadlineSeconds=-30),
     ".spec.runPolicy.activeDeadlineSeconds",
     "spec.runPolicy.activeDeadlineSeconds: Invalid value: -30: must be greater than or equal to 0"),
    ("backoffLimit", lambda o: spec(o)["runPolicy"].update(backoffLimit=-1),
     ".spec.runPolicy.backoffLimit",
     "spec.runPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
    ("managedBy", lambda o: spec(o)["runPolicy"].update(managedBy="invalid.com/controller"),
     ".spec.runPolicy.managedBy",
     'spec.runPolicy.managedBy: Unsupported value: "invalid.com/controller": supported values: '
     '"kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue"'),
    ("mpiImplementation", lambda o: spec(o).update(mpiImplementation="MVAPICH"),
     ".spec.mpiImplementation",
     'spec.mpiImplementation: Unsupported value: "MVAPICH": supported values: "Intel", "MPICH", "OpenMPI"'),
    ("slotsPerWorker negative", lambda o: spec(o).update(slotsPerWorker=-1),
     ".spec.slotsPerWorker",
     "spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0"),
    ("name starting with a digit", lambda o: o["metadata"].update(name="1-foo"),
     ".metadata.name",
     f'metadata.name: Invalid value: "1-foo": will not able to create pod and service with invalid DNS label '
     f'"1-foo-worker-1": {DNS1035}'),
    ("name with upper case and too long", lambda o: o["metadata"].update(name="A" * 60),
     ".metadata.name",
     f'metadata.name: Invalid value: "{"A" * 60}": will not able to create pod and service with invalid DNS label '
     f'"{"A" * 60}-worker-1": must be no more than 63 characters, {DNS1035}'),
]


@pytest.mark.parametrize(("change", "path", "message"), [c[1:] for c in MPI_CASES], ids=[c[0] for c in MPI_CASES])
def test_mpi_operator_rule_catches(change, path, message):
    findings = check_mpijob(job(change))
    assert as_tuples(findings) == [(path, message)]
    assert findings[0].rule == "mpi-operator"
    assert findings[0].severity is Severity.ERROR
    assert findings[0].source == SOURCE and findings[0].object.startswith("MPIJob/")


def test_upstream_invalid_fields_case_in_the_operators_order():
    """mpi-operator's own validation_test.go case "invalid fields", message by message."""
    name = "this-name-is-waaaaaaaay-too-long-for-a-worker-hostname"

    def change(o):
        o["metadata"]["name"] = name
        spec(o)["slotsPerWorker"] = 2
        spec(o)["sshAuthMountPath"] = "/root/.ssh"
        spec(o)["mpiImplementation"] = "Unknown"
        spec(o)["runPolicy"] = {"cleanPodPolicy": "unknown", "ttlSecondsAfterFinished": -1,
                                "activeDeadlineSeconds": -1, "backoffLimit": -1, "managedBy": "invalid.com/controller"}
        replica(o, "Launcher")["restartPolicy"] = "Never"
        replica(o, "Worker").update(replicas=1000, restartPolicy="Never")

    assert as_tuples(check_mpijob(job(change))) == [
        (".metadata.name", f'metadata.name: Invalid value: "{name}": will not able to create pod and service with '
                           f'invalid DNS label "{name}-worker-999": must be no more than 63 characters'),
        (".spec.runPolicy.cleanPodPolicy", 'spec.runPolicy.cleanPodPolicy: Unsupported value: "unknown": '
                                           'supported values: "All", "None", "Running"'),
        (".spec.runPolicy.ttlSecondsAfterFinished",
         "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0"),
        (".spec.runPolicy.activeDeadlineSeconds",
         "spec.runPolicy.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"),
        (".spec.runPolicy.backoffLimit",
         "spec.runPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
        (".spec.runPolicy.managedBy", 'spec.runPolicy.managedBy: Unsupported value: "invalid.com/controller": '
                                      'supported values: "kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue"'),
        (".spec.mpiImplementation", 'spec.mpiImplementation: Unsupported value: "Unknown": supported values: '
                                    '"Intel", "MPICH", "OpenMPI"'),
    ]


def test_upstream_missing_replica_spec_fields_case():
    """validation_test.go "missing replica spec fields", after the operator's defaulting: only the containers remain."""
    def change(o):
        spec(o)["mpiReplicaSpecs"] = {"Launcher": {}, "Worker": {}}

    assert as_tuples(check_mpijob(job(change))) == [
        (".spec.mpiReplicaSpecs.Launcher.template.spec.containers",
         "spec.mpiReplicaSpecs[Launcher].template.spec.containers: Required value: must define at least one container"),
        (".spec.mpiReplicaSpecs.Worker.template.spec.containers",
         "spec.mpiReplicaSpecs[Worker].template.spec.containers: Required value: must define at least one container"),
        (".spec.mpiReplicaSpecs.Worker.replicas",
         "spec.mpiReplicaSpecs[Worker].replicas: Invalid value: 0: must be greater than or equal to 1"),
    ]


def test_name_limit_is_the_last_worker_hostname():
    name = "a" * 54  # "-worker-9" makes 63, "-worker-10" 64
    assert check_mpijob(job(lambda o: (o["metadata"].update(name=name), replica(o, "Worker").update(replicas=10)))) == []
    findings = check_mpijob(job(lambda o: (o["metadata"].update(name=name), replica(o, "Worker").update(replicas=11))))
    assert as_tuples(findings) == [(".metadata.name", f'metadata.name: Invalid value: "{name}": will not able to create '
                                                      f'pod and service with invalid DNS label "{name}-worker-10": '
                                                      "must be no more than 63 characters")]


def test_zero_workers_are_rejected_even_with_run_launcher_as_worker():
    """mpi-operator v0.8 rejects them (the fix, kubeflow/mpi-operator#833, came after v0.8.2)."""
    findings = check_mpijob(job(lambda o: (spec(o).update(runLauncherAsWorker=True),
                                           replica(o, "Worker").update(replicas=0))))
    assert [f.path for f in findings] == [".spec.mpiReplicaSpecs.Worker.replicas"]


def test_defaults_fill_what_the_operator_fills():
    def change(o):
        for key in ("slotsPerWorker", "runPolicy"):
            spec(o).pop(key)
        spec(o).update(sshAuthMountPath="", mpiImplementation="")
        replica(o, "Launcher").pop("replicas")
        o["spec"]["mpiReplicaSpecs"].pop("Worker")

    assert check_mpijob(job(change)) == []


def test_slots_per_worker_zero_is_only_a_warning():
    findings = check_mpijob(job(lambda o: spec(o).update(slotsPerWorker=0)))
    assert [(f.path, f.severity, f.rule) for f in findings] == [(".spec.slotsPerWorker", Severity.WARNING, "mpi-operator")]
    assert findings[0].message.startswith("slotsPerWorker 0 passes mpi-operator's validation, but ")


def test_other_api_versions_are_not_judged_by_v2beta1_rules():
    document = job(lambda o: (o.update(apiVersion="kubeflow.org/v1"), replica(o, "Launcher").update(replicas=3)))
    assert check_mpijob(document) == []


def test_go_quoting_of_bad_values():
    assert rules.go_quote('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert rules.go_json_string("<x>&") == '"\\u003cx\\u003e\\u0026"'
    findings = check_mpijob(job(lambda o: replica(o, "Launcher").update(restartPolicy="<Always>")))
    assert findings[0].message == ('spec.mpiReplicaSpecs[Launcher].restartPolicy: Unsupported value: '
                                   '"\\u003cAlways\\u003e": supported values: "Never", "OnFailure"')


def load_upstream_examples(upstream: Path) -> list[RenderedObject]:
    yaml = YAML(typ="safe", pure=True)
    documents = []
    for path in sorted((upstream / "mpi-operator" / "examples").glob("*.yaml")):
        for obj in yaml.load_all(path.read_text(encoding="utf-8")):
            if isinstance(obj, dict):
                documents.append(RenderedObject(path.name, obj, ""))
    return documents


def test_upstream_example_mpijobs_pass(upstream):
    documents = load_upstream_examples(upstream)
    assert len([d for d in documents if d.kind == "MPIJob"]) == 5
    for document in documents:
        assert check_mpijob(document) == [], document.source
    assert run_rules(documents, CheckContext()) == []


# --- network ------------------------------------------------------------------------------------------

def nad(name: str, namespace: str = "ml", resource: str | None = "nvidia.com/rdma_rail0",
        config: Any = '{"cniVersion": "0.3.1", "name": "r", "plugins": [{"type": "ib-sriov"}, {"type": "rdma"}]}'
        ) -> RenderedObject:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if resource:
        metadata["annotations"] = {RESOURCE_NAME: resource}
    return RenderedObject("charts/lab/infra/templates/network-attachments.yaml",
                    {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": metadata,
                     "spec": {"config": config}}, "charts/lab/infra")


def networked_job(annotation: Any, limits: dict[str, Any] | None = None) -> RenderedObject:
    def change(o):
        worker_pod(o)["metadata"] = {"annotations": {NETWORKS: annotation}}
        worker_pod(o)["spec"]["containers"][0]["resources"] = {"limits": limits or {"nvidia.com/rdma_rail0": 1}}
    return job(change)


def test_networks_that_exist_and_get_their_device_pass():
    documents = [nad("rail0"), networked_job('[{"name": "rail0", "namespace": "ml", "interface": "rail0"}]')]
    assert check_networks(documents, CheckContext()) == []
    assert check_networks([networked_job("rail0@net1")], CheckContext(extra=(nad("rail0"),))) == []


def test_a_missing_network_is_caught():
    documents = [nad("rail0"), networked_job("rail0@net1, other/rail9")]
    findings = check_networks(documents, CheckContext())
    assert as_tuples(findings) == [(ANNOTATION_PATH,
                                    "no NetworkAttachmentDefinition other/rail9 (named in k8s.v1.cni.cncf.io/networks) in "
                                    "this render or the extra manifests; Multus cannot attach it and the pod never starts")]
    assert findings[0].rule == "network" and findings[0].object == "MPIJob/x"


def test_an_entry_without_namespace_looks_in_the_pods_namespace():
    findings = check_networks([nad("rail0", namespace="other"), networked_job("rail0")], CheckContext())
    assert [f.message.split(" (")[0] for f in findings] == ["no NetworkAttachmentDefinition ml/rail0"]


@pytest.mark.parametrize(("annotation", "message"), [
    ('{"name": "rail0"}',
     'k8s.v1.cni.cncf.io/networks must be a JSON list of {"name": ..., "namespace": ..., "interface": ...} objects, '
     "or a comma-separated <namespace>/<name>@<interface> list"),
    ('[{"namespace": "ml"}]', 'k8s.v1.cni.cncf.io/networks entry 0 has no "name" string'),
    ("[3]", "k8s.v1.cni.cncf.io/networks entry 0 is not a JSON object"),
    ("Rail0", "k8s.v1.cni.cncf.io/networks entry \"Rail0\": \"Rail0\" is not a DNS-1123 label (lower case "
              "alphanumeric characters or '-', starting and ending with an alphanumeric character)"),
    ("a/b/rail0", "k8s.v1.cni.cncf.io/networks entry \"a/b/rail0\" has more than one '/' "
                  "(expected <namespace>/<name>@<interface>)"),
    ("rail0@averyveryverylongname", 'k8s.v1.cni.cncf.io/networks entry "rail0@averyveryverylongname": interface name '
                                    "\"averyveryverylongname\" must be at most 15 characters without '/' or spaces"),
    (7, "k8s.v1.cni.cncf.io/networks must be a string"),
])
def test_a_malformed_networks_annotation_is_caught(annotation, message):
    assert as_tuples(check_networks([nad("rail0"), networked_job(annotation)], CheckContext())) == [
        (ANNOTATION_PATH, message)]


def test_networks_annotation_that_is_not_json_is_caught():
    findings = check_networks([nad("rail0"), networked_job('[{"name": "rail0",]')], CheckContext())
    assert [f.path for f in findings] == [ANNOTATION_PATH]
    assert findings[0].message.startswith("k8s.v1.cni.cncf.io/networks is not valid JSON (")
    assert findings[0].message.endswith('Multus fails the pod: "failed to parse pod Network Attachment Selection '
                                        'Annotation JSON format"')


@pytest.mark.parametrize(("config", "message"), [
    ('{"cniVersion": "0.3.1", "name": "r"}',
     'spec.config names no CNI plugin: it needs a "type", or a "plugins" list whose entries each have a "type"'),
    ('{"cniVersion": "0.3.1", "plugins": [{"type": "sriov"}, {"ipam": {}}]}', 'spec.config: plugins[1] has no CNI "type"'),
    ('{"plugins": []}', 'spec.config: "plugins" must be a non-empty list of CNI plugin configurations'),
    ('["sriov"]', "spec.config must be a JSON object (a CNI configuration or configuration list)"),
    ({"type": "sriov"}, "spec.config must be a string holding the CNI configuration as JSON"),
])
def test_a_nad_without_usable_cni_config_is_caught(config, message):
    findings = check_networks([nad("rail0", config=config), networked_job("rail0")], CheckContext())
    assert [(f.source, f.object, f.path, f.message) for f in findings] == [
        ("charts/lab/infra/templates/network-attachments.yaml", "NetworkAttachmentDefinition/rail0", ".spec.config",
         message)]


def test_a_nad_config_that_is_not_json_is_caught():
    findings = check_networks([nad("rail0", config='{"type": "sriov",}')], CheckContext())
    assert [f.path for f in findings] == [".spec.config"]
    assert findings[0].message.startswith("spec.config is not valid JSON: ")


def test_the_nads_resource_must_be_requested():
    findings = check_networks([nad("rail0"), networked_job("rail0", limits={"nvidia.com/gpu": 8})], CheckContext())
    assert as_tuples(findings) == [(
        ".spec.mpiReplicaSpecs.Worker.template.spec.containers",
        "network ml/rail0 needs a nvidia.com/rdma_rail0 device (its k8s.v1.cni.cncf.io/resourceName), but no container "
        "of this pod requests nvidia.com/rdma_rail0 in resources.limits; Multus fails with \"VF pci addr is required\"")]


def test_each_attachment_needs_its_own_device():
    findings = check_networks([nad("rail0"), networked_job("rail0@a, rail0@b", limits={"nvidia.com/rdma_rail0": "1"})],
                              CheckContext())
    assert as_tuples(findings) == [(
        ".spec.mpiReplicaSpecs.Worker.template.spec.containers",
        "the pod attaches network ml/rail0 2 times, but its containers request 1 nvidia.com/rdma_rail0 (the NAD's "
        "k8s.v1.cni.cncf.io/resourceName); each attachment needs its own device")]
    assert check_networks([nad("rail0"), networked_job("rail0@a, rail0@b", limits={"nvidia.com/rdma_rail0": 2})],
                          CheckContext()) == []


MACVLAN = '{"cniVersion": "0.3.1", "name": "m", "type": "macvlan", "master": "eth1"}'


def test_a_nad_without_resource_name_needs_no_request():
    assert check_networks([nad("macvlan", resource=None, config=MACVLAN), networked_job("macvlan", limits={})],
                          CheckContext()) == []


def test_an_sriov_nad_without_resource_name_is_caught():
    findings = check_networks([nad("rail0", resource=None)], CheckContext())
    assert [(f.path, f.severity) for f in findings] == [(".metadata.annotations", Severity.ERROR)]
    assert findings[0].message == (
        "a ib-sriov network needs the k8s.v1.cni.cncf.io/resourceName annotation naming the device-plugin resource of "
        'its VFs; without it Multus fails with "VF pci addr is required"')


def test_a_nad_without_config_is_a_warning():
    # Multus then reads a CNI configuration file of the NAD's name from each node's configuration folder.
    findings = check_networks([nad("rail0", config=None)], CheckContext())
    assert [(f.path, f.severity) for f in findings] == [(".spec.config", Severity.WARNING)]
    assert findings[0].message.startswith("spec.config is missing: Multus then looks for a CNI configuration file")


def test_networks_made_by_the_sriov_network_operator_count_as_nads():
    sriov_network = RenderedObject("cluster/sriov.yaml", {
        "apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetwork",
        "metadata": {"name": "rail0", "namespace": "sriov-network-operator"},
        "spec": {"resourceName": "rail0", "networkNamespace": "ml", "ipam": "{}"}})
    pod = networked_job("rail0")
    assert check_networks([pod], CheckContext(extra=(sriov_network,))) == []
    elsewhere = {**sriov_network.obj, "spec": {"resourceName": "rail0", "networkNamespace": "other"}}
    assert len(check_networks([pod], CheckContext(extra=(RenderedObject("c.yaml", elsewhere),)))) == 1


@pytest.mark.parametrize(("interface", "own"), [("eth0", "cluster network"), ("lo", "loopback")])
def test_a_pods_own_interface_is_not_an_attachment_interface(interface, own):
    findings = check_networks([nad("rail0"), networked_job(f"ml/rail0@{interface}")], CheckContext())
    assert len(findings) == 1 and f"interface {interface} is the pod's {own}" in findings[0].message


@pytest.mark.parametrize(("resources", "message"), [
    ({"limits": {"nvidia.com/gpu": "1.5"}}, 'resources.limits["nvidia.com/gpu"]: Invalid value: "1.5": must be an integer'),
    ({"requests": {"nvidia.com/rdma_rail1": 1}},
     'resources.requests["nvidia.com/rdma_rail1"]: Forbidden: Limit must be set for non overcommitable resources'),
    ({"limits": {"nvidia.com/gpu": 2}, "requests": {"nvidia.com/gpu": 1}},
     'resources.requests["nvidia.com/gpu"]: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2'),
])
def test_extended_resources_as_the_api_server_takes_them(resources, message):
    document = job(lambda o: worker_pod(o)["spec"]["containers"][0].update(resources=resources))
    findings = check_extended_resources([document])
    assert len(findings) == 1 and findings[0].rule == "resources"
    assert findings[0].message.endswith(message), findings[0].message


def test_plain_workload_templates_are_checked_too():
    deployment = RenderedObject("charts/y/templates/d.yaml", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ml"},
        "spec": {"template": {"metadata": {"annotations": {NETWORKS: "rail5"}}, "spec": {"containers": [{}]}}}})
    pod = RenderedObject("charts/y/templates/p.yaml", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "annotations": {NETWORKS: "rail5"}},
        "spec": {"containers": [{}]}})
    findings = check_networks([deployment, pod], CheckContext())
    assert [(f.object, f.path) for f in findings] == [
        ("Deployment/d", '.spec.template.metadata.annotations["k8s.v1.cni.cncf.io/networks"]'),
        ("Pod/p", '.metadata.annotations["k8s.v1.cni.cncf.io/networks"]')]


# --- annotations that move a pod off its namespace's network ------------------------------------------

DEFAULT_NETWORK = "v1.multus-cni.io/default-network"
REPLACES = ("Multus replaces the pod's cluster network (eth0) with that attachment, which it finds in its own namespace "
            "(kube-system) unless the value names another, whatever its namespace isolation says: the pod leaves the "
            "cluster network its NetworkPolicies and Services are on; remove it (a job's pods attach their networks in "
            "k8s.v1.cni.cncf.io/networks)")
WORKER_ANNOTATIONS = ".spec.mpiReplicaSpecs.Worker.template.metadata.annotations"


@pytest.mark.parametrize(("value", "named"), [
    ("kube-system/host-bridge", "kube-system/host-bridge"), ("host-bridge", "kube-system/host-bridge"),
    ("ml/macvlan", "ml/macvlan"), ('[{"name": "host-bridge", "namespace": "kube-system"}]', "kube-system/host-bridge"),
])
def test_a_default_network_annotation_is_refused_with_the_attachment_it_names(value, named):
    """The second red team's case, written by hand: Multus looks the attachment up in its own namespace when the
    value names none (pkg/k8sclient tryLoadK8sPodDefaultNetwork parses it with `conf.MultusNamespace`), and its
    namespace isolation only judges `k8s.v1.cni.cncf.io/networks`."""
    document = job(lambda o: worker_pod(o).update(metadata={"annotations": {DEFAULT_NETWORK: value}}))
    findings = check_networks([document], CheckContext())
    assert as_tuples(findings) == [(f'{WORKER_ANNOTATIONS}["{DEFAULT_NETWORK}"]',
                                    f"{DEFAULT_NETWORK} names {named}: {REPLACES}")]
    assert findings[0].rule == "network" and findings[0].severity is Severity.ERROR


@pytest.mark.parametrize("value", ["a/b/c", "", 7, '[{"name": "a"}, {"name": "b"}]'])
def test_a_default_network_multus_cannot_read_is_refused_as_written(value):
    document = job(lambda o: worker_pod(o).update(metadata={"annotations": {DEFAULT_NETWORK: value}}))
    (found,) = check_networks([document], CheckContext())
    assert found.message.startswith(f"{DEFAULT_NETWORK} is ") and found.message.endswith(REPLACES)


def test_calicos_addresses_past_its_ipam_are_refused():
    key = "cni.projectcalico.org/ipAddrsNoIpam"
    document = job(lambda o: worker_pod(o).update(metadata={"annotations": {key: '["10.0.0.1"]'}}))
    assert as_tuples(check_networks([document], CheckContext())) == [(
        f'{WORKER_ANNOTATIONS}["{key}"]', f'{key} is "[\\"10.0.0.1\\"]": Calico gives the pod these addresses past '
        "its IPAM: the pod can take another workload's address; remove it (a job's pods attach their networks in "
        "k8s.v1.cni.cncf.io/networks)")]


FIXED = ("gives the pod this fixed address, one that firewalls, NetworkPolicy ipBlocks or DNS may know as another "
         "workload's, taken while that workload is away")
POOL = ("rather than its namespace's: one that firewalls and NetworkPolicy ipBlocks let through for the workloads that "
        "own it")


@pytest.mark.parametrize(("key", "value", "what"), [
    ("cni.projectcalico.org/ipAddrs", '["10.0.0.9"]', f"Calico {FIXED}"),
    ("ovn.kubernetes.io/ip_address", "10.16.0.15", f"Kube-OVN {FIXED}"),
    ("ipam.antrea.io/pod-ips", "10.0.0.9", f"Antrea {FIXED}"),
    ("ovn.kubernetes.io/mac_address", "00:00:00:53:6b:b6",
     "Kube-OVN gives the pod this fixed MAC address: the pod can answer for another workload's"),
    ("cni.projectcalico.org/ipv4pools", '["dmz"]', f"Calico gives the pod an address from that pool {POOL}"),
    ("cni.projectcalico.org/ipv6pools", '["dmz6"]', f"Calico gives the pod an address from that pool {POOL}"),
    ("ipam.cilium.io/ip-pool", "dmz", f"Cilium gives the pod an address from that pool {POOL}"),
    ("ovn.kubernetes.io/logical_switch", "tenant-b", "Kube-OVN gives the pod an address from that subnet (logical "
     f"switch, perhaps another tenant's) {POOL}"),
    ("ipam.antrea.io/ippools", "dmz", f"Antrea gives the pod an address from that pool {POOL}"),
    ("ipam.spidernet.io/ippool", '{"ipv4": ["dmz"]}', f"Spiderpool gives the pod an address from that pool {POOL}"),
    ("ipam.spidernet.io/ippools", '[{"ipv4": ["dmz"]}]', f"Spiderpool gives the pod an address from that pool {POOL}"),
])
def test_a_fixed_address_or_another_pool_is_refused(key: str, value: str, what: str) -> None:
    """The review's keys: the address-choosing annotations of Calico, Cilium, Kube-OVN, Antrea and Spiderpool."""
    document = job(lambda o: worker_pod(o).update(metadata={"annotations": {key: value}}))
    assert as_tuples(check_networks([document], CheckContext())) == [(
        f'{WORKER_ANNOTATIONS}["{key}"]', f"{key} is {json.dumps(value)}: {what}; remove it (a job's pods attach their "
        "networks in k8s.v1.cni.cncf.io/networks)")]


def _with_default_network(kind: str) -> RenderedObject:
    """One object of `kind` whose pods carry the default-network annotation where that kind keeps pod metadata."""
    annotated = {"metadata": {"annotations": {DEFAULT_NETWORK: "kube-system/host-bridge"}}, "spec": {"containers": [{}]}}
    objects: dict[str, dict[str, Any]] = {
        "Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", **annotated["metadata"]},
                "spec": annotated["spec"]},
        "Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                       "spec": {"template": annotated}},
        "CronJob": {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "x"},
                    "spec": {"jobTemplate": {"spec": {"template": annotated}}}},
        "Job": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "x"},
                "spec": {"tasks": [{"name": "worker", "template": annotated}]}},
        "TrainingRuntime": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
                            "metadata": {"name": "x"}, "spec": {"template": {"spec": {"replicatedJobs": [
                                {"name": "node", "template": {"spec": {"template": annotated}}}]}}}},
        "TrainJob": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "x"},
                     "spec": {"runtimePatches": [{"trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                         {"name": "node", "template": {"spec": {"template": {"metadata": annotated["metadata"]}}}}]}}}}]}},
        "JobSet": {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "x"},
                   "spec": {"replicatedJobs": [{"name": "w", "template": {"spec": {"template": annotated}}}]}},
    }
    return RenderedObject("charts/y/templates/x.yaml", objects[kind], "charts/y")


@pytest.mark.parametrize("kind", ["Pod", "Deployment", "CronJob", "Job", "TrainingRuntime", "TrainJob", "JobSet"])
def test_the_default_network_is_found_wherever_a_kind_keeps_its_pods_metadata(kind):
    findings = check_networks([_with_default_network(kind)], CheckContext())
    assert [(f.object, f.path.endswith(f'.metadata.annotations["{DEFAULT_NETWORK}"]')) for f in findings] == [
        (f"{kind}/x", True)]


def test_a_network_of_a_system_or_controller_namespace_is_refused_even_where_it_exists():
    """`k8s.v1.cni.cncf.io/networks: kube-system/host-bridge` would attach a second interface on the host's bridge:
    given the NAD (--context), it exists, and Multus attaches it unless its namespace isolation is on."""
    bridge = nad("host-bridge", namespace="kube-system", resource=None, config='{"cniVersion": "0.3.1", "type": "bridge"}')
    operator = nad("sriov-net", namespace="sriov-network-operator", resource=None)
    document = networked_job("kube-system/host-bridge, sriov-network-operator/sriov-net")
    assert as_tuples(check_networks([document], CheckContext(extra=(bridge, operator)))) == [
        (ANNOTATION_PATH, "k8s.v1.cni.cncf.io/networks attaches kube-system/host-bridge, a network of namespace "
         "kube-system, which belongs to Kubernetes: its networks are the cluster's and its controllers', not a job's; "
         "attach networks of the pod's own namespace"),
        (ANNOTATION_PATH, "k8s.v1.cni.cncf.io/networks attaches sriov-network-operator/sriov-net, a network of "
         "namespace sriov-network-operator, which belongs to the SR-IOV network operator: its networks are the "
         "cluster's and its controllers', not a job's; attach networks of the pod's own namespace")]


def test_a_network_of_another_plain_namespace_is_judged_as_before():
    """NVIDIA's network operator renders its networks into `default` unless told otherwise: that stays allowed."""
    shared = nad("hostdev", namespace="default", resource=None, config='{"cniVersion": "0.3.1", "type": "host-device"}')
    assert check_networks([networked_job("default/hostdev")], CheckContext(extra=(shared,))) == []


# --- capacity -----------------------------------------------------------------------------------------

DGX = NodeShape("lab", "dgx", {"nvidia.com/gpu": 8, **{f"nvidia.com/rdma_rail{i}": None for i in range(4)}})
CPU = NodeShape("lab", "cpu", {})
LIMITS = ".spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits"


def gpu_job(limits: dict[str, Any], chart: str = CHART) -> RenderedObject:
    return job(lambda o: worker_pod(o)["spec"]["containers"][0].update(resources={"limits": limits}), chart=chart)


def test_requests_that_fit_the_node_pass():
    limits = {"cpu": "32", "nvidia.com/gpu": 8, "nvidia.com/rdma_rail0": 1, "nvidia.com/rdma_rail3": 4}
    assert check_capacity([gpu_job(limits)], CheckContext(node_shapes={CHART: DGX})) == []


def test_more_gpus_than_a_node_has_are_caught():
    findings = check_capacity([gpu_job({"nvidia.com/gpu": 16})], CheckContext(node_shapes={CHART: DGX}))
    assert as_tuples(findings) == [(f'{LIMITS}["nvidia.com/gpu"]', "the worker container requests 16 nvidia.com/gpu, but "
                                    "a node of pool dgx (cluster lab) has 8; the workers never schedule")]
    assert findings[0].rule == "capacity"


def test_a_resource_the_node_lacks_is_caught():
    findings = check_capacity([gpu_job({"nvidia.com/rdma_rail7": 1})], CheckContext(node_shapes={CHART: DGX}))
    assert as_tuples(findings) == [(
        f'{LIMITS}["nvidia.com/rdma_rail7"]',
        "the worker pod requests nvidia.com/rdma_rail7, which a node of pool dgx (cluster lab) does not offer (it offers: "
        "nvidia.com/gpu, nvidia.com/rdma_rail0, nvidia.com/rdma_rail1, nvidia.com/rdma_rail2, nvidia.com/rdma_rail3); "
        "the workers never schedule")]
    findings = check_capacity([gpu_job({"nvidia.com/gpu": 1})], CheckContext(node_shapes={CHART: CPU}))
    assert [f.message for f in findings] == [
        "the worker pod requests nvidia.com/gpu, which a node of pool cpu (cluster lab) does not offer (it offers: "
        "no extended resources); the workers never schedule"]


def test_containers_of_one_pod_add_up():
    def change(o):
        containers = worker_pod(o)["spec"]["containers"]
        containers.append({"name": "side", "image": "i"})
        for container in containers:
            container["resources"] = {"limits": {"nvidia.com/gpu": 5}}

    findings = check_capacity([job(change)], CheckContext(node_shapes={CHART: DGX}))
    assert as_tuples(findings) == [(".spec.mpiReplicaSpecs.Worker.template.spec.containers",
                                    "the worker pod's containers together request 10 nvidia.com/gpu, but a node of pool "
                                    "dgx (cluster lab) has 8; the workers never schedule")]


def test_capacity_needs_the_charts_node_shape():
    assert check_capacity([gpu_job({"nvidia.com/gpu": 64})], CheckContext(node_shapes={"other": DGX})) == []
    assert check_capacity([gpu_job({"nvidia.com/gpu": 64}, chart="")], CheckContext(node_shapes={"": DGX})) == []


# --- names --------------------------------------------------------------------------------------------

def other(kind: str, name: str, namespace: str = "ml") -> RenderedObject:
    return RenderedObject(f"charts/lab/jobs/x/templates/{kind.lower()}.yaml",
                    {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": namespace}}, CHART)


def test_a_configmap_named_like_the_operators_is_caught():
    findings = check_reserved_names([job(), other("ConfigMap", "x-config")])
    assert as_tuples(findings) == [(".metadata.name",
                                    "name x-config is mpi-operator's for MPIJob x: the operator creates ConfigMap x-config "
                                    "(hostfile and discover_hosts.sh, mounted at /etc/mpi); with this ConfigMap in its "
                                    "place the job never starts (event ErrResourceExists: \"already exists and is not "
                                    "managed by MPIJob\")")]
    assert findings[0].rule == "names" and findings[0].object == "ConfigMap/x-config"


def test_any_kind_under_an_operator_name_is_caught():
    findings = check_reserved_names([job(), other("ConfigMap", "x-ssh")])
    assert [f.message for f in findings] == [
        "name x-ssh is mpi-operator's for MPIJob x: the operator creates Secret x-ssh (the job's SSH keys); "
        "rename this ConfigMap"]


@pytest.mark.parametrize(("kind", "name"), [
    ("Secret", "x-ssh"), ("Job", "x-launcher"), ("Service", "x-launcher"), ("Pod", "x-worker-0"),
    ("Pod", "x-worker-17"), ("Service", "x"), ("ConfigMap", "x-worker-1"),
])
def test_every_operator_name_is_reserved(kind, name):
    findings = check_reserved_names([job(), other(kind, name)])
    assert [(f.object, f.path, f.rule) for f in findings] == [(f"{kind}/{name}", ".metadata.name", "names")]


@pytest.mark.parametrize(("kind", "name", "namespace"), [
    ("ConfigMap", "x-config", "elsewhere"), ("ConfigMap", "x-hostfile", "ml"), ("Pod", "x-worker-01", "ml"),
    ("ConfigMap", "x", "ml"), ("Pod", "x-worker-", "ml"), ("ConfigMap", "y-config", "ml"),
])
def test_names_the_operator_does_not_take_pass(kind, name, namespace):
    assert check_reserved_names([job(), other(kind, name, namespace)]) == []


def test_the_mpijob_may_be_in_the_extra_manifests():
    context = CheckContext(extra=(job(),))
    assert [f.object for f in check_reserved_names([other("Secret", "x-ssh")], context)] == ["Secret/x-ssh"]


# --- robustness and the example fleet -----------------------------------------------------------------

MALFORMED: list[Callable[[dict[str, Any]], Any]] = [
    lambda o: o.update(spec=[]),
    lambda o: o.update(spec=None),
    lambda o: o.update(metadata=None),
    lambda o: o.update(metadata={"name": 5}),
    lambda o: spec(o).update(mpiReplicaSpecs="many"),
    lambda o: spec(o).update(mpiReplicaSpecs={"Launcher": None, "Worker": "two", 3: {}}),
    lambda o: replica(o, "Worker").update(replicas="2", restartPolicy=5, template=[]),
    lambda o: replica(o, "Worker").update(template={"spec": {"containers": "w"}}),
    lambda o: replica(o, "Worker").update(template={"metadata": [], "spec": None}),
    lambda o: replica(o, "Worker").update(replicas=True),
    lambda o: spec(o).update(runPolicy="all", slotsPerWorker="8", mpiImplementation=["OpenMPI"]),
    lambda o: spec(o)["runPolicy"].update(ttlSecondsAfterFinished="1h", managedBy=3, cleanPodPolicy=None),
    lambda o: worker_pod(o).update(metadata={"annotations": None}),
    lambda o: worker_pod(o).update(metadata={"annotations": {NETWORKS: ""}}),
    lambda o: worker_pod(o).update(metadata={"annotations": {NETWORKS: '[{"name": "r", "interface": 3}]'}}),
    lambda o: worker_pod(o)["spec"].update(containers=[None, {"resources": []}, {"resources": {"limits": [1]}},
                                                       {"resources": {"limits": {"nvidia.com/gpu": "lots"}}}],
                                           initContainers={"a": 1}),
]


@pytest.mark.parametrize("change", MALFORMED, ids=[str(i) for i in range(len(MALFORMED))])
def test_malformed_documents_never_raise(change):
    documents = [job(change), nad("r", config=None), nad("s", config=7), other("ConfigMap", "x-config"),
                 RenderedObject("weird.yaml", {"kind": "NetworkAttachmentDefinition", "metadata": {"name": "t"}, "spec": 3}),
                 RenderedObject("weird.yaml", {"kind": "Pod", "metadata": "p", "spec": {"containers": {}}}),
                 RenderedObject("weird.yaml", {"kind": "CronJob", "spec": {"jobTemplate": []}}),
                 RenderedObject("weird.yaml", {})]
    shapes = {CHART: NodeShape("lab", "dgx", {"nvidia.com/gpu": "eight"})}  # type: ignore[dict-item]
    findings = run_rules(documents, CheckContext(node_shapes=shapes))
    assert not [f for f in findings if f.message.startswith("internal error")]


def test_a_failing_rule_is_reported_not_raised(monkeypatch):
    def broken(documents, context):
        raise RuntimeError("boom")

    monkeypatch.setattr(registry, "check_capacity", broken)
    findings = run_rules([job()], CheckContext())
    assert [(f.rule, f.message) for f in findings] == [
        ("capacity", "internal error in rule capacity: RuntimeError('boom'); please report it")]


def example_shapes(example) -> dict[str, NodeShape]:
    """By hand, from profiles/: dgx pool nodes offer 8 GPUs and the four rails, cpu pool nodes nothing extended;
    netapp-lab's, volcano-lab's and kai-lab's dgx nodes offer 8 GPUs and four rails from rdma-shared-dev-plugin
    (prefix `rdma`), dgx-pod's 8 GPUs and four rails of VFs from sriov-network-operator (prefix `openshift.io`);
    roce-lab has no job; h100-dra's and gb200-rack's nodes offer nothing extended: their GPUs and NICs are claimed
    through DRA."""
    dgx = NodeShape("dgx-lab", "dgx", {"nvidia.com/gpu": 8, **{f"nvidia.com/rdma_rail{i}": None for i in range(4)}})
    cpu = NodeShape("dgx-lab", "cpu", {})
    pools = {"dgx-lab/jobs/resnet50-dgx": dgx, "dgx-lab/jobs/resnet50-trainjob": dgx,
             "dgx-lab/jobs/tensorflow-benchmarks": dgx, "dgx-lab/jobs/pi": cpu,
             "cpu-lab/jobs/cpu-pi": NodeShape("cpu-lab", "cpu", {}),
             "netapp-lab/jobs/netapp-resnet50": NodeShape("netapp-lab", "dgx", {
                 "nvidia.com/gpu": 8, **{f"rdma/rdma_rail{i}": None for i in range(4)}}),
             "volcano-lab/jobs/volcano-allreduce": NodeShape("volcano-lab", "dgx", {
                 "nvidia.com/gpu": 8, **{f"rdma/rdma_rail{i}": None for i in range(4)}}),
             "volcano-lab/jobs/allreduce-vcjob": NodeShape("volcano-lab", "dgx", {
                 "nvidia.com/gpu": 8, **{f"rdma/rdma_rail{i}": None for i in range(4)}})}
    kai = NodeShape("kai-lab", "dgx", {"nvidia.com/gpu": 8, **{f"rdma/rdma_rail{i}": None for i in range(4)}})
    pools |= {"kai-lab/jobs/kai-allreduce": kai, "kai-lab/jobs/kai-research": kai}
    pod = NodeShape("dgx-pod", "dgx", {"nvidia.com/gpu": 8, **{f"openshift.io/rdma_rail{i}": None for i in range(4)}})
    pools |= {"dgx-pod/jobs/vision-resnet50": pod, "dgx-pod/jobs/language-bert": pod,
              "kueue-lab/jobs/kueue-pi": NodeShape("kueue-lab", "cpu", {}),
              "h100-dra/jobs/llm-pretrain": NodeShape("h100-dra", "h100", {}),
              "gb200-rack/jobs/mnnvl-allreduce": NodeShape("gb200-rack", "gb200", {})}
    # The acceptance jobs run on their clusters' GPU pools: roce-lab's dgx-1-roce nodes offer VFs of its four rails
    # from sriov-network-operator.
    roce = NodeShape("roce-lab", "dgx", {"nvidia.com/gpu": 8, **{f"openshift.io/rdma_rail{i}": None for i in range(4)}})
    by_cluster = {"dgx-lab": dgx, "dgx-pod": pod, "roce-lab": roce, "h100-dra": pools["h100-dra/jobs/llm-pretrain"],
                  "gb200-rack": pools["gb200-rack/jobs/mnnvl-allreduce"],
                  "netapp-lab": pools["netapp-lab/jobs/netapp-resnet50"],
                  "volcano-lab": pools["volcano-lab/jobs/volcano-allreduce"]}
    pools |= {job.chart_dir: by_cluster[job.cluster.name] for job in example.fleet.acceptance}
    assert {c.directory for c in example.charts} == {*pools, "dgx-lab/infra", "cpu-lab/infra", "netapp-lab/infra",
                                                     "dgx-pod/infra", "volcano-lab/infra", "roce-lab/infra",
                                                     "kueue-lab/infra", "h100-dra/infra", "gb200-rack/infra",
                                                     "kai-lab/infra"}
    return pools


def test_the_example_fleet_is_clean(example):
    documents = [RenderedObject(f"{chart.directory}/templates/{manifest.template}", copy.deepcopy(manifest.obj),
                                chart.directory)
                 for chart in example.charts for manifest in chart.manifests]
    assert {"MPIJob", "NetworkAttachmentDefinition", "ConfigMap"} <= {d.kind for d in documents}
    assert run_rules(documents, CheckContext(node_shapes=example_shapes(example))) == []


def test_the_example_fleet_breaks_when_its_infra_is_missing(example):
    """The clean result above is not vacuous: without the infra chart the rails are missing, and the runtime of
    resnet50-trainjob's TrainJob (Trainer's webhook would refuse the TrainJob)."""
    documents = [RenderedObject(f"{chart.directory}/templates/{manifest.template}", manifest.obj, chart.directory)
                 for chart in example.charts if chart.directory != "dgx-lab/infra" for manifest in chart.manifests]
    findings = run_rules(documents, CheckContext(node_shapes=example_shapes(example)))
    (trainjob,) = [m.obj["metadata"]["name"] for chart in example.charts for m in chart.manifests
                   if m.obj["kind"] == "TrainJob"]
    assert sorted({f.message.split(" (")[0].split(";")[0] for f in findings}) == [
        *(f"no NetworkAttachmentDefinition ml-training/rail{i}" for i in range(4)),
        f"no TrainingRuntime ml-training/{trainjob} in this render or the extra manifests"]


# --- pod-security: Pod Security admission refuses pods above the namespace's enforce level -------------------------


def namespace(name: str, level: str | None) -> RenderedObject:
    labels = {"pod-security.kubernetes.io/enforce": level} if level is not None else {}
    return RenderedObject("charts/lab/infra/templates/namespaces.yaml",
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})


def rdma_job() -> RenderedObject:
    obj = base_job()
    worker = obj["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    return RenderedObject(SOURCE, obj, CHART)


def test_a_workload_above_its_namespace_level_is_refused():
    findings = rules.check_pod_security([rdma_job(), namespace("ml", "baseline")], CheckContext())
    assert [f.format() for f in findings] == [
        f"{SOURCE}: MPIJob/x: namespace ml enforces Pod Security level baseline, but these pods need privileged "
        "(container w adds capability IPC_LOCK): the API server will refuse to create them and the job never starts; "
        "raise the namespace's pod-security.kubernetes.io/enforce label to privileged (the infra chart mpigen "
        "compiles for the cluster does), or ask for less"]
    assert findings[0].rule == "pod-security" and findings[0].severity is Severity.ERROR


@pytest.mark.parametrize("level", ["privileged", None])
def test_a_namespace_that_allows_it_or_says_nothing_passes(level):
    assert rules.check_pod_security([rdma_job(), namespace("ml", level)], CheckContext()) == []


def test_the_namespace_may_come_from_the_context_charts():
    assert len(rules.check_pod_security([rdma_job()], CheckContext(extra=(namespace("ml", "restricted"),)))) == 1
    assert rules.check_pod_security([rdma_job()], CheckContext(extra=(namespace("other", "restricted"),))) == []


def test_an_unknown_level_on_a_namespace_is_refused():
    findings = rules.check_pod_security([namespace("ml", "Privileged")], CheckContext())
    assert [f.format() for f in findings] == [
        "charts/lab/infra/templates/namespaces.yaml: Namespace/ml: .metadata.labels[\"pod-security.kubernetes.io/"
        "enforce\"]: 'Privileged' is not a Pod Security level; the API server refuses it: write one of restricted, "
        "baseline, privileged"]


def test_run_rules_includes_pod_security():
    found = run_rules([rdma_job(), namespace("ml", "restricted")], CheckContext())
    assert [f.rule for f in found] == ["pod-security"]


def test_namespaces_of_one_name_in_two_clusters_are_two():
    """`mpigen check charts/` sees every cluster's infra chart: cluster a's `ml` must not judge cluster b's jobs."""
    job = RenderedObject(SOURCE, rdma_job().obj, "charts/b/jobs/x")
    ns_a = RenderedObject("charts/a/infra/templates/namespaces.yaml", namespace("ml", "baseline").obj, "charts/a/infra")
    ns_b = RenderedObject("charts/b/infra/templates/namespaces.yaml", namespace("ml", "privileged").obj, "charts/b/infra")
    clusters = {"charts/a/infra": "a", "charts/b/infra": "b", "charts/b/jobs/x": "b"}
    assert rules.check_pod_security([job, ns_b, ns_a], CheckContext(chart_clusters=clusters)) == []
    assert len(rules.check_pod_security([job, ns_a], CheckContext(chart_clusters=clusters))) == 0  # b's ml: unknown
    only_b = {**clusters, "charts/b/infra": "a"}  # now both namespaces are cluster a's: b's job has none
    assert rules.check_pod_security([job, ns_a], CheckContext(chart_clusters=only_b)) == []
    unscoped = RenderedObject("cluster/ns.yaml", namespace("ml", "baseline").obj)  # a manifest file: any cluster's
    assert len(rules.check_pod_security([job, unscoped], CheckContext(chart_clusters=clusters))) == 1


def test_reserved_names_clash_only_within_one_cluster():
    """mpi-operator creates `<job>-config` in the MPIJob's own cluster: a ConfigMap of that name in another cluster,
    though of the same namespace, takes nothing from it (issue of `mpigen check` over several clusters)."""
    mpijob = job(chart="charts/a/jobs/x")
    config = RenderedObject("charts/b/jobs/y/templates/configmap.yaml", other("ConfigMap", "x-config").obj,
                            "charts/b/jobs/y")
    apart = CheckContext(chart_clusters={"charts/a/jobs/x": "a", "charts/b/jobs/y": "b"})
    assert check_reserved_names([mpijob, config], apart) == []
    together = CheckContext(chart_clusters={"charts/a/jobs/x": "a", "charts/b/jobs/y": "a"})
    assert len(check_reserved_names([mpijob, config], together)) == 1
    unknown = RenderedObject("manifests/cm.yaml", other("ConfigMap", "x-config").obj)  # of every cluster
    assert len(check_reserved_names([mpijob, unknown], apart)) == 1


def _runtime_and_trainjob() -> tuple[dict[str, Any], dict[str, Any]]:
    """A TrainingRuntime whose node pods ask for 8 GPUs, and the TrainJob `ml/t-1` of the same name."""
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
               "metadata": {"name": "t-1", "namespace": "ml"},
               "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {
                   "template": {"spec": {"containers": [{"name": "node", "image": "i", "resources": {
                       "limits": {"nvidia.com/gpu": 8}}}]}}}}}]}}}}
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "t-1", "namespace": "ml"}, "spec": {"runtimeRef": {"name": "t-1"}}}
    return runtime, trainjob


def test_a_training_runtime_is_judged_by_the_pool_of_its_own_clusters_trainjob():
    """A TrainJob's TrainingRuntime lives in its cluster's infra chart; a TrainJob of the same namespace and name in
    another cluster, whose pool has no such GPUs, says nothing of it."""
    runtime_obj, trainjob_obj = _runtime_and_trainjob()
    runtime = RenderedObject("charts/a/infra/templates/training-runtimes.yaml", runtime_obj, "charts/a/infra")
    theirs = RenderedObject("charts/b/jobs/t/templates/trainjob.yaml", trainjob_obj, "charts/b/jobs/t")
    small = NodeShape("b", "small", {"nvidia.com/gpu": 4})
    clusters = {"charts/a/infra": "a", "charts/b/jobs/t": "b"}
    context = CheckContext(node_shapes={"charts/b/jobs/t": small}, chart_clusters=clusters)
    assert check_capacity([runtime, theirs], context) == []
    same = CheckContext(node_shapes={"charts/b/jobs/t": small}, chart_clusters={**clusters, "charts/a/infra": "b"})
    assert len(check_capacity([runtime, theirs], same)) == 1


def test_a_manifest_of_unknown_origin_is_judged_with_its_own_and_any_clusters_objects():
    """Checking `charts/` beside hand-written manifests: a pod of unknown origin takes the NAD of unknown origin
    beside it before a compiled cluster's of the same name; a namespace only a compiled cluster labels still
    judges it (at that cluster's level, the least strict where several do)."""
    nad = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
           "metadata": {"name": "rail0", "namespace": "ml"},
           "spec": {"config": '{"cniVersion": "0.3.1", "name": "rail0", "type": "macvlan", "master": "ib0"}'}}
    theirs = copy.deepcopy(nad)
    theirs["metadata"]["annotations"] = {"k8s.v1.cni.cncf.io/resourceName": "nvidia.com/rdma_rail0"}
    theirs["spec"]["config"] = '{"cniVersion": "0.3.1", "name": "rail0", "type": "sriov"}'
    pod = copy.deepcopy(rdma_job().obj)
    pod["spec"]["mpiReplicaSpecs"]["Worker"]["template"].setdefault("metadata", {})["annotations"] = {
        "k8s.v1.cni.cncf.io/networks": "rail0"}
    for container in pod["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]:
        container.get("resources", {}).get("limits", {}).pop("nvidia.com/rdma_rail0", None)
    hand = RenderedObject("manifests/job.yaml", pod)
    context = CheckContext(chart_clusters={"charts/a/infra": "a"})
    compiled = RenderedObject("charts/a/infra/templates/network-attachments.yaml", theirs, "charts/a/infra")
    own = RenderedObject("manifests/nad.yaml", nad)
    assert [f for f in rules.check_networks([hand, compiled, own], context) if "rdma_rail0" in f.message] == []
    assert [f for f in rules.check_networks([hand, compiled], context) if "rdma_rail0" in f.message], \
        "with no NAD of its own, the compiled cluster's is the one it may meet"
    # Of two compiled clusters' NADs of that name, the one whose device the pod does not request is not its own.
    shared = RenderedObject("charts/b/infra/templates/network-attachments.yaml", nad, "charts/b/infra")
    two = CheckContext(chart_clusters={"charts/a/infra": "a", "charts/b/infra": "b"})
    assert [f for f in rules.check_networks([hand, compiled, shared], two) if "rdma_rail0" in f.message] == []
    ns_a = RenderedObject("charts/a/infra/templates/namespaces.yaml", namespace("ml", "restricted").obj, "charts/a/infra")
    job_of_unknown_origin = RenderedObject("manifests/job.yaml", rdma_job().obj)
    assert len(rules.check_pod_security([job_of_unknown_origin, ns_a], context)) == 1
    ns_b = RenderedObject("charts/b/infra/templates/namespaces.yaml", namespace("ml", "privileged").obj, "charts/b/infra")
    both = CheckContext(chart_clusters={"charts/a/infra": "a", "charts/b/infra": "b"})
    assert rules.check_pod_security([job_of_unknown_origin, ns_a, ns_b], both) == []


def test_cluster_folders_group_files_as_they_were_reached(tmp_path):
    """`--cluster NAME=PATH`: the deepest folder holding a file gives its cluster; a file reached through a link in
    the folder is the folder's (paths are made absolute, never resolved through links)."""
    from mpigen.check.run import _grouped

    (tmp_path / "m/a/deep").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (tmp_path / "m/a/net").symlink_to(tmp_path / "shared")
    groups = (("a", tmp_path / "m/a"), ("d", tmp_path / "m/a/deep"))
    assert _grouped(str(tmp_path / "m/a/net/nads.yaml"), groups) == "a"
    assert _grouped(str(tmp_path / "m/a/deep/x.yaml"), groups) == "d"
    assert _grouped(str(tmp_path / "m/b/x.yaml"), groups) == ""


def test_a_runtime_of_unknown_origin_is_judged_by_the_trainjob_of_its_name():
    runtime_obj, trainjob_obj = _runtime_and_trainjob()
    runtime = RenderedObject("manifests/runtime.yaml", runtime_obj)
    trainjob = RenderedObject("charts/b/jobs/t/templates/trainjob.yaml", trainjob_obj, "charts/b/jobs/t")
    context = CheckContext(node_shapes={"charts/b/jobs/t": NodeShape("b", "small", {"nvidia.com/gpu": 4})},
                           chart_clusters={"charts/b/jobs/t": "b"})
    assert len(check_capacity([runtime, trainjob], context)) == 1
