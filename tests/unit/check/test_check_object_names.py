"""generator/check/rules/names.py, check_object_names: names, namespaces, labels and container names as the API server
judges them; check_job_namespaces: no job in a namespace of Kubernetes or a controller.

Expected messages are written out by hand from k8s.io/apimachinery (validation.go's IsDNS1123Subdomain,
IsDNS1123Label, IsDNS1035Label, RegexError; content/kube.go's IsLabelKey and IsLabelValue; path.go's
IsPathSegmentName) and field/errors.go's `<field>: Invalid value: "<value>": <detail>`.
"""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.check.rules import check_job_namespaces, check_object_names, run_rules
from mpigen.readback.findings import CheckContext, RenderedObject
from mpigen.support.diagnostics import Severity

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
         "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
KEY_NAME = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
         "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
         "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
PODS_REFUSED = "; the API server takes the MPIJob, and refuses every pod made of it"


def obj(kind: str, name: str, namespace: str | None = "ml", api_version: str = "v1", **fields: Any) -> RenderedObject:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return RenderedObject("m.yaml", {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields})


def pod(name: str = "p", namespace: str = "ml", containers: tuple[str, ...] = ("c",), **spec: Any) -> RenderedObject:
    return obj("Pod", name, namespace, spec={"containers": [{"name": c, "image": "i"} for c in containers], **spec})


def shown(findings) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in findings]


def test_the_second_red_teams_four_names_are_refused_as_the_api_server_refuses_them():
    # The issue's cases, through every rule: a Pod `A_B..`, a container `C!`, a ConfigMap `../x`, a namespace
    # `Kube System`; main passed all four.
    findings = run_rules([pod("A_B.."), pod(containers=("C!",)), obj("ConfigMap", "../x"), obj("Namespace", "Kube System",
                                                                                               None)], CheckContext())
    assert [(f.object, f.path, f.message, f.rule) for f in findings if f.rule == "names"] == [
        ("Pod/A_B..", ".metadata.name", f'metadata.name: Invalid value: "A_B..": {SUBDOMAIN}', "names"),
        ("Pod/p", ".spec.containers[0].name", f'spec.containers[0].name: Invalid value: "C!": {LABEL}', "names"),
        ("ConfigMap/../x", ".metadata.name", f'metadata.name: Invalid value: "../x": {SUBDOMAIN}', "names"),
        ("Namespace/Kube System", ".metadata.name", f'metadata.name: Invalid value: "Kube System": {LABEL}', "names"),
    ]


def test_an_object_in_a_namespace_no_cluster_can_have_is_refused():
    assert shown(check_object_names([obj("ConfigMap", "c", "Kube System")])) == [
        (".metadata.namespace", f'metadata.namespace: Invalid value: "Kube System": {LABEL}')]


@pytest.mark.parametrize(("kind", "api_version", "name"), [
    ("Pod", "v1", "a.b-c.d"), ("ConfigMap", "v1", "a" * 253), ("Secret", "v1", "0x"), ("Deployment", "apps/v1", "a.b"),
    ("MPIJob", "kubeflow.org/v2beta1", "pi-0a1b2c3"), ("Service", "v1", "svc-1"), ("Namespace", "v1", "a" * 63),
    ("Role", "rbac.authorization.k8s.io/v1", "system:controller:Job_Runner"),
    ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "Anything Goes"), ("CronJob", "batch/v1", "c" * 52),
])
def test_names_the_api_server_takes_pass(kind, api_version, name):
    namespace = None if kind in ("Namespace", "ClusterRoleBinding") else "ml"
    assert check_object_names([obj(kind, name, namespace, api_version)]) == []


@pytest.mark.parametrize(("kind", "api_version", "name", "problems"), [
    ("ConfigMap", "v1", "a" * 254, ["must be no more than 253 characters"]),
    ("Pod", "v1", "Caps", [SUBDOMAIN]),
    ("Pod", "v1", "é", [SUBDOMAIN]),
    ("Pod", "v1", "name\n", [SUBDOMAIN]),  # Go's `$` is the end of the text, not before a last newline
    ("Namespace", "v1", "a.b", ["must not contain dots"]),
    ("Namespace", "v1", "é" * 32, ["must be no more than 63 characters", LABEL]),  # 64 bytes of UTF-8, as Go counts
    ("Service", "v1", "1abc", [DNS1035]),  # Services are DNS-1035 labels: no leading digit, no dot
    ("Service", "v1", "a.b", [DNS1035]),
    ("ClusterRole", "rbac.authorization.k8s.io/v1", "a/b%c", ["may not contain '/'", "may not contain '%'"]),
    ("Role", "rbac.authorization.k8s.io/v1", "..", ["may not be '..'"]),
    ("CronJob", "batch/v1", "c" * 53, ["must be no more than 52 characters"]),
    ("Queue", "scheduling.volcano.sh/v1beta1", "Q", [SUBDOMAIN]),  # any custom resource: a DNS-1123 subdomain
])
def test_names_the_api_server_refuses_are_found_with_its_words(kind, api_version, name, problems):
    namespace = None if kind in ("Namespace", "ClusterRole", "Queue") else "ml"
    findings = check_object_names([obj(kind, name, namespace, api_version)])
    assert [f.message for f in findings] == [f"metadata.name: Invalid value: {_go(name)}: {p}" for p in problems]
    assert {f.path for f in findings} == {".metadata.name"} and {f.rule for f in findings} == {"names"}


def _go(text: str) -> str:
    return '"' + text.replace("\n", "\\n") + '"'


def test_the_namespace_of_a_cluster_scoped_kind_is_dropped_not_judged():
    # The API server clears metadata.namespace on a cluster-scoped object; a CRD's `scope: Cluster` says the same
    # of a custom kind.
    crd = RenderedObject("crd.yaml", {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                                      "metadata": {"name": "widgets.example.com"},
                                      "spec": {"group": "example.com", "scope": "Cluster",
                                               "names": {"kind": "Widget", "plural": "widgets"}}})
    documents = [obj("PriorityClass", "high", "Not A Namespace", "scheduling.k8s.io/v1"),
                 obj("Widget", "w", "Not A Namespace", "example.com/v1")]
    assert check_object_names(documents, CheckContext(extra=(crd,))) == []
    assert [f.path for f in check_object_names(documents)] == [".metadata.namespace"]  # no CRD: taken as namespaced


def test_label_keys_values_and_annotation_keys_follow_the_qualified_name_grammar():
    document = obj("ConfigMap", "c")
    document.obj["metadata"] |= {"labels": {"ok/Key_1": "V.a-l", "a/b/c": "x", "bad key": "", "k": "v" * 64,
                                            "example.com/": "no space"},
                                 "annotations": {"Example.COM/Upper": "any value at all\n", "not/ok/": ""}}
    findings = check_object_names([document])
    assert shown(findings) == [
        ('.metadata.labels["a/b/c"]', 'metadata.labels: Invalid value: "a/b/c": a valid label key must consist of '
         "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
         "'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
         " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
        ('.metadata.labels["bad key"]', f'metadata.labels: Invalid value: "bad key": {KEY_NAME}'),
        ('.metadata.labels.k', 'metadata.labels: Invalid value: "' + "v" * 64 + '": must be no more than 63 characters'),
        ('.metadata.labels["example.com/"]', 'metadata.labels: Invalid value: "example.com/": name part must be '
         "non-empty"),
        ('.metadata.labels["example.com/"]', f'metadata.labels: Invalid value: "example.com/": {KEY_NAME}'),
        ('.metadata.labels["example.com/"]', f'metadata.labels: Invalid value: "no space": {VALUE}'),
        ('.metadata.annotations["not/ok/"]', 'metadata.annotations: Invalid value: "not/ok/": a valid label key must '
         "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
         "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
         "(e.g. 'example.com/MyName')"),
    ]


def mpijob(worker: dict[str, Any]) -> RenderedObject:
    return RenderedObject("mpijob.yaml", {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                                          "metadata": {"name": "x", "namespace": "ml"},
                                          "spec": {"mpiReplicaSpecs": {"Worker": {"template": worker}}}})


def test_a_jobs_pod_template_is_judged_as_the_pods_made_of_it():
    worker = {"metadata": {"labels": {"team": "A B"}},
              "spec": {"containers": [{"name": "Worker", "image": "i"}, {"name": "w", "image": "i"}],
                       "initContainers": [{"name": "w", "image": "i"}]}}
    at = ".spec.mpiReplicaSpecs.Worker.template"
    assert shown(check_object_names([mpijob(worker)])) == [
        (f'{at}.metadata.labels.team', 'spec.mpiReplicaSpecs.Worker.template.metadata.labels: Invalid value: "A B": '
         f"{VALUE}{PODS_REFUSED}"),
        (f"{at}.spec.containers[0].name", 'spec.mpiReplicaSpecs.Worker.template.spec.containers[0].name: Invalid value: '
         f'"Worker": {LABEL}{PODS_REFUSED}'),
        (f"{at}.spec.initContainers[0].name", "spec.mpiReplicaSpecs.Worker.template.spec.initContainers[0].name: "
         f'Duplicate value: "w"{PODS_REFUSED}'),
    ]


def test_a_built_in_workloads_template_is_refused_with_the_workload():
    deployment = obj("Deployment", "d", api_version="apps/v1", spec={"template": {
        "metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "", "image": "i"}]}}})
    assert shown(check_object_names([deployment])) == [
        (".spec.template.spec.containers[0].name", "spec.template.spec.containers[0].name: Required value")]


def test_what_it_cannot_read_is_the_schema_checks_to_report():
    documents = [RenderedObject("w.yaml", {"kind": "Pod", "metadata": {"name": 5, "labels": {"k": 7, 3: "v"},
                                                                       "annotations": ["a"]},
                                           "spec": {"containers": [None, {"name": None}, "c"]}}),
                 RenderedObject("w.yaml", {"kind": "ConfigMap", "metadata": None}),
                 RenderedObject("w.yaml", {})]
    assert check_object_names(documents) == []


def test_each_problem_of_a_container_name_is_a_finding_of_its_own():
    long_name = "C" * 64
    assert [f.message for f in check_object_names([pod(containers=(long_name,))])] == [
        f'spec.containers[0].name: Invalid value: "{long_name}": must be no more than 63 characters',
        f'spec.containers[0].name: Invalid value: "{long_name}": {LABEL}']


PORT_CHARSET = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
PORT_LETTER = "must contain at least one letter (a-z)"


@pytest.mark.parametrize(("kind", "api_version", "generate_name", "problems"), [
    ("Pod", "v1", "train-", []),  # the random characters follow the '-'
    ("Pod", "v1", "a-", []),
    ("Service", "v1", "svc-", []),
    ("Namespace", "v1", "team-", []),
    ("Role", "rbac.authorization.k8s.io/v1", "system:x-", []),
    ("Pod", "v1", "Train-", [SUBDOMAIN]),
    ("Pod", "v1", "train.", [SUBDOMAIN]),  # only a trailing '-' is masked
    ("Service", "v1", "1svc-", [DNS1035]),
    ("Namespace", "v1", "a.b-", ["must not contain dots"]),
    ("Pod", "v1", "a" * 254 + "-", ["must be no more than 253 characters"]),
])
def test_generate_name_is_judged_as_a_prefix_of_the_kinds_name(kind: str, api_version: str, generate_name: str,
                                                                problems: list[str]) -> None:
    """ValidateObjectMeta runs the kind's name function on generateName with prefix=true (maskTrailingDash)."""
    document = obj(kind, "", "ml" if kind != "Namespace" else None, api_version)
    del document.obj["metadata"]["name"]
    document.obj["metadata"]["generateName"] = generate_name
    assert shown(check_object_names([document])) == [
        (".metadata.generateName", f'metadata.generateName: Invalid value: "{generate_name}": {problem}')
        for problem in problems]


def test_volume_names_are_labels_unique_in_the_pod() -> None:
    """validateVolumes: each volume's name a DNS-1123 label, required, none twice."""
    volumes = [{"name": "data", "emptyDir": {}}, {"name": "Data", "emptyDir": {}}, {"name": "data", "emptyDir": {}},
               {"name": "", "emptyDir": {}}, {"name": "a.b", "emptyDir": {}}]
    assert shown(check_object_names([pod(volumes=volumes)])) == [
        (".spec.volumes[1].name", f'spec.volumes[1].name: Invalid value: "Data": {LABEL}'),
        (".spec.volumes[2].name", 'spec.volumes[2].name: Duplicate value: "data"'),
        (".spec.volumes[3].name", "spec.volumes[3].name: Required value"),
        (".spec.volumes[4].name", 'spec.volumes[4].name: Invalid value: "a.b": must not contain dots')]


@pytest.mark.parametrize(("name", "problems"), [
    ("ssh", []), ("nccl-2", []), ("a" * 15, []), ("", []),  # a port needs no name
    ("a" * 16, ["must be no more than 15 characters"]),
    ("SSH", [PORT_CHARSET, PORT_LETTER]),
    ("2222", [PORT_LETTER]),
    ("a--b", ["must not contain consecutive hyphens"]),
    ("-ssh", ["must not begin or end with a hyphen"]),
    ("ssh_2", [PORT_CHARSET]),
])
def test_container_port_names_are_iana_service_names(name: str, problems: list[str]) -> None:
    """validateContainerPorts: IsValidPortName, message for message."""
    container = {"name": "c", "image": "i", "ports": [{"containerPort": 22, "name": name}]}
    document = obj("Pod", "p", spec={"containers": [container]})
    assert shown(check_object_names([document])) == [
        (".spec.containers[0].ports[0].name", f'spec.containers[0].ports[0].name: Invalid value: "{name}": {problem}')
        for problem in problems]


def test_container_port_names_are_unique_in_their_container() -> None:
    ports = [{"containerPort": 22, "name": "ssh"}, {"containerPort": 23, "name": "ssh"}]
    containers = [{"name": "a", "ports": ports}, {"name": "b", "ports": ports[:1]}]
    assert shown(check_object_names([obj("Pod", "p", spec={"containers": containers})])) == [
        (".spec.containers[0].ports[1].name", 'spec.containers[0].ports[1].name: Duplicate value: "ssh"')]


# --- namespaces of Kubernetes and the controllers (check_job_namespaces) ------------------------------------------

ARGOCD_SECRET = {"name": "A", "valueFrom": {"secretKeyRef": {"name": "argocd-secret", "key": "admin.password"}}}
JOB_KINDS = {
    "MPIJob": ("kubeflow.org/v2beta1", {"mpiReplicaSpecs": {"Worker": {"template": {"spec": {"containers": []}}}}}),
    "Job": ("batch.volcano.sh/v1alpha1", {"tasks": [{"name": "w", "template": {"spec": {"containers": []}}}]}),
    "TrainJob": ("trainer.kubeflow.org/v1alpha1", {"runtimeRef": {"name": "r", "kind": "TrainingRuntime"}}),
    "TrainingRuntime": ("trainer.kubeflow.org/v1alpha1", {"template": {"spec": {"replicatedJobs": []}}}),
}


def namespace_findings(*documents: RenderedObject, job_charts: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    findings = check_job_namespaces(list(documents), CheckContext(job_charts=frozenset(job_charts)))
    return [(f.object, f.severity.value, f.message) for f in findings]


def job_there(owner: str, namespace: str) -> str:
    return (f"namespace {namespace} belongs to {owner}: a job there could read its Secrets by `secretKeyRef` and runs "
            "beside its pods, under the Pod Security label its pods need; run the job in a namespace of its own "
            "(mpigen refuses it as a job namespace)")


@pytest.mark.parametrize("kind", sorted(JOB_KINDS))
@pytest.mark.parametrize(("namespace", "owner"), [("argocd", "Argo CD"), ("kube-system", "Kubernetes"),
                                                  ("kueue-system", "Kueue"), ("mpi-operator", "mpi-operator")])
def test_a_job_in_a_namespace_of_kubernetes_or_a_controller_is_an_error(kind: str, namespace: str, owner: str) -> None:
    """The second review's case: validate refuses these job namespaces in profiles, check let hand-written jobs in."""
    api_version, spec = JOB_KINDS[kind]
    assert namespace_findings(obj(kind, "j", namespace, api_version, spec=spec)) == [
        (f"{kind}/j", "error", job_there(owner, namespace))]


def test_any_workload_of_an_mpigen_job_chart_is_a_job() -> None:
    """A Pod or a batch Job added to a job chart makes a job's pods, whatever its kind."""
    added = [RenderedObject("c/templates/x.yaml", {"apiVersion": api, "kind": kind, "metadata": {
        "name": "x", "namespace": "argocd"}, "spec": spec}, "c")
        for api, kind, spec in (("v1", "Pod", {"containers": [{"name": "c"}]}),
                                ("batch/v1", "Job", {"template": {"spec": {"containers": [{"name": "c"}]}}}))]
    assert namespace_findings(*added, job_charts=("c",)) == [
        ("Pod/x", "error", job_there("Argo CD", "argocd")), ("Job/x", "error", job_there("Argo CD", "argocd"))]
    assert namespace_findings(*added) == []  # not a job chart: the platform's own workloads
    config = RenderedObject("c/templates/h.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                                   "metadata": {"name": "h", "namespace": "argocd"}}, "c")
    assert namespace_findings(config, job_charts=("c",)) == []  # makes no pod


@pytest.mark.parametrize("namespace", ["kube-system", "argocd", "gpu-operator"])
def test_the_platforms_own_workloads_there_pass(namespace: str) -> None:
    """A device plugin runs in kube-system at system-node-critical; the operators' own pods in theirs."""
    daemonset = obj("DaemonSet", "plugin", namespace, "apps/v1", spec={"template": {"spec": {
        "priorityClassName": "system-node-critical", "containers": [{"name": "c", "image": "i"}]}}})
    assert namespace_findings(daemonset, pod("p", namespace)) == []


def test_a_workload_reading_a_secret_in_a_controllers_namespace_is_a_warning() -> None:
    """Unless it is the controller's own, it reads the controller's credentials: by secretKeyRef, envFrom or a volume.
    In Kubernetes' own namespaces the platform's pods read Secrets of their own: no finding."""
    reading = pod("p", "argocd")
    reading.obj["spec"] = {"containers": [{"name": "c", "env": [ARGOCD_SECRET], "envFrom": [{"secretRef": {
        "name": "argocd-notifications-secret"}}]}], "volumes": [
        {"name": "v", "secret": {"secretName": "argocd-repo-creds"}},
        {"name": "w", "projected": {"sources": [{"secret": {"name": "argocd-secret"}}]}}]}
    assert namespace_findings(reading) == [("Pod/p", Severity.WARNING.value, (
        "namespace argocd belongs to Argo CD, and this Pod reads Secret(s) argocd-notifications-secret, "
        "argocd-repo-creds, argocd-secret there: unless it is Argo CD's own, it reads the controller's credentials; "
        "run it in a namespace of its own"))]
    reading.obj["metadata"]["namespace"] = "kube-system"
    assert namespace_findings(reading) == []
    reading.obj["metadata"]["namespace"] = "ml"
    assert namespace_findings(reading) == []


def test_annotations_of_more_than_256_kib_in_all_are_refused() -> None:
    # ValidateAnnotationsSize counts every key and value: 262144 bytes pass, one more does not.
    at_limit = obj("ConfigMap", "c")
    at_limit.obj["metadata"]["annotations"] = {"a": "x" * (256 * 1024 - 1)}
    assert check_object_names([at_limit]) == []
    over = obj("ConfigMap", "c")
    over.obj["metadata"]["annotations"] = {"a": "x" * (256 * 1024 - 1), "b": ""}
    assert shown(check_object_names([over])) == [(".metadata.annotations", (
        "metadata.annotations: Too long: must have at most 262144 bytes; keep long text elsewhere (a ConfigMap) and "
        "link to it"))]
