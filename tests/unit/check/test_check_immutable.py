"""generator/check/rules/immutable.py: an update the API server refuses for changing a field it keeps as created,
judged against the live object `--context` gives (one with a resourceVersion, as `kubectl get -o yaml` writes it), in
the server's words (batch, apps, core, scheduling and rbac validation's Update functions). Without a live object
nothing is said; a change only to what may change, or to what the rendered object leaves out, is no finding."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpigen.check.rules import check_immutable
from mpigen.readback.findings import CheckContext, RenderedObject

RECREATE = "delete the {kind} and apply it again (`kubectl replace --force` does both), or give the new one another name"
JOB_FIX = "a Job's pods are made once: delete the Job (its pods go with it) and apply again, or name the new run anew"


def rendered(api_version: str, kind: str, name: str = "x", namespace: str | None = "ml", **fields: Any) -> RenderedObject:
    metadata: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
    return RenderedObject("chart.yaml", {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields})


def live(document: RenderedObject, **changes: Any) -> RenderedObject:
    """The object as the cluster holds it: `changes` on top, with server fields a `kubectl get` shows."""
    obj = copy.deepcopy(document.obj)
    obj.update(changes)
    obj["metadata"] = {**obj["metadata"], "resourceVersion": "42", "uid": "u-1", "namespace": obj["metadata"].get(
        "namespace", "default")}
    return RenderedObject("export.yaml", obj)


def judged(document: RenderedObject, *live_objects: RenderedObject) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in check_immutable([document], CheckContext(extra=live_objects))]


def job(image: str = "train:1", **spec: Any) -> RenderedObject:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": image}]}}
    return rendered("batch/v1", "Job", spec={"template": template, **spec})


def test_a_jobs_template_change_is_refused_and_nothing_is_said_without_a_live_object() -> None:
    old = live(job("train:1"))
    # The server adds labels and defaults to the live template; the rendered one leaves them out: no change there.
    old.obj["spec"]["template"]["metadata"] = {"labels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    old.obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    old.obj["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    assert judged(job("train:1"), old) == []
    assert judged(job("train:2")) == []
    assert judged(job("train:2"), old) == [(".spec.template", (
        'spec.template: Invalid value: {"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"train:2"}]}}: '
        'field is immutable (spec.template.spec.containers[0].image: "train:2", live "train:1"); ' + JOB_FIX))]


def test_an_object_exported_without_resource_version_is_not_live() -> None:
    old = job("train:1")  # a rendered object given as context: not what the cluster holds
    assert judged(job("train:2"), RenderedObject("other.yaml", old.obj)) == []


def test_a_suspended_jobs_scheduling_directives_may_change() -> None:
    old = live(job("train:1", suspend=True))
    new = job("train:1", suspend=True)
    new.obj["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "b"}
    assert judged(new, old) == []
    new.obj["spec"]["template"]["spec"]["containers"][0]["image"] = "train:2"
    assert [p for p, _ in judged(new, old)] == [".spec.template"]


def test_a_jobs_completion_mode_and_completions_are_immutable() -> None:
    old = live(job(completions=4, completionMode="NonIndexed"))
    assert [m.split(";")[0] for _, m in judged(job(completions=8, completionMode="NonIndexed"), old)] == [
        "spec.completions: Invalid value: 8: field is immutable"]
    assert [m.split(";")[0] for _, m in judged(job(completions=4, completionMode="Indexed"), old)] == [
        'spec.completionMode: Invalid value: "Indexed": field is immutable']


def workload(kind: str, labels: dict[str, str], **spec: Any) -> RenderedObject:
    return rendered("apps/v1", kind, spec={"selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, **spec})


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "DaemonSet"])
def test_a_workloads_selector_is_immutable(kind: str) -> None:
    old = live(workload(kind, {"app": "a"}))
    assert judged(workload(kind, {"app": "a"}, replicas=3), old) == []
    assert judged(workload(kind, {"app": "b"}), old) == [(".spec.selector", (
        f'spec.selector: Invalid value: {{"matchLabels":{{"app":"b"}}}}: field is immutable (spec.selector.matchLabels.app:'
        f' "b", live "a"); a {kind}\'s selector stays as created: ' + RECREATE.format(kind=kind)))]


def test_a_statefulset_changes_only_what_it_may() -> None:
    claim = {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "10Gi"}}}}
    old = live(workload("StatefulSet", {"app": "a"}, serviceName="s", volumeClaimTemplates=[claim]))
    bigger = copy.deepcopy(claim)
    bigger["spec"]["resources"]["requests"]["storage"] = "20Gi"
    assert judged(workload("StatefulSet", {"app": "a"}, serviceName="s", volumeClaimTemplates=[claim], replicas=5,
                           minReadySeconds=3), old) == []
    assert judged(workload("StatefulSet", {"app": "a"}, serviceName="s", volumeClaimTemplates=[bigger]), old) == [(
        ".spec.volumeClaimTemplates[0].spec.resources.requests.storage",
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden "
        "(spec.volumeClaimTemplates[0].spec.resources.requests.storage changes); delete the StatefulSet but not its "
        "pods and claims (`kubectl delete statefulset NAME --cascade=orphan`) and apply again")]


def test_a_services_cluster_ip_may_not_change_once_set() -> None:
    service = rendered("v1", "Service", spec={"ports": [{"port": 80}]})
    old = live(service, spec={"ports": [{"port": 80}], "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]})
    assert judged(service, old) == []  # left out: the live one stays
    moved = rendered("v1", "Service", spec={"ports": [{"port": 80}], "clusterIP": "10.0.0.9"})
    assert judged(moved, old) == [(".spec.clusterIP", (
        'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.9"}: may not change once set; leave `clusterIP` out (the '
        "live one, 10.0.0.5, stays), or " + RECREATE.format(kind="Service")))]


def test_an_immutable_configmap_keeps_its_data() -> None:
    old = live(rendered("v1", "ConfigMap", data={"a": "1"}, immutable=True))
    assert judged(rendered("v1", "ConfigMap", data={"a": "1"}, immutable=True), old) == []
    assert [m.split(";")[0] for _, m in judged(rendered("v1", "ConfigMap", data={"a": "2"}), old)] == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set"]
    # A ConfigMap that is not immutable changes freely.
    assert judged(rendered("v1", "ConfigMap", data={"a": "2"}), live(rendered("v1", "ConfigMap", data={"a": "1"}))) == []


def test_an_immutable_secrets_string_data_is_its_data() -> None:
    old = live(rendered("v1", "Secret", data={"k": "dg=="}, immutable=True))  # base64 of "v"
    assert judged(rendered("v1", "Secret", stringData={"k": "v"}, immutable=True), old) == []
    assert [p for p, _ in judged(rendered("v1", "Secret", stringData={"k": "w"}, immutable=True), old)] == [".data"]


def test_a_priority_class_keeps_its_value() -> None:
    old = live(rendered("scheduling.k8s.io/v1", "PriorityClass", namespace=None, value=100))
    assert judged(rendered("scheduling.k8s.io/v1", "PriorityClass", namespace=None, value=100), old) == []
    assert [m.split(";")[0] for _, m in judged(rendered("scheduling.k8s.io/v1", "PriorityClass", namespace=None,
                                                        value=200), old)] == [
        "value: Forbidden: may not be changed in an update."]


def test_a_bindings_role_ref_cannot_change() -> None:
    def binding(role: str) -> RenderedObject:
        return rendered("rbac.authorization.k8s.io/v1", "RoleBinding", roleRef={
            "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}, subjects=[])
    assert judged(binding("a"), live(binding("a"))) == []
    assert [m.split(";")[0] for _, m in judged(binding("b"), live(binding("a")))] == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: cannot '
        "change roleRef"]


def test_a_claims_spec_is_immutable_but_its_storage_request_grows() -> None:
    def claim(size: str, mode: str = "ReadWriteOnce") -> RenderedObject:
        return rendered("v1", "PersistentVolumeClaim", spec={"accessModes": [mode], "resources": {"requests": {
            "storage": size}}})
    old = live(claim("10Gi"))
    old.obj["spec"]["volumeName"] = "pv-1"
    assert judged(claim("20Gi"), old) == []
    assert [m.split(" (")[0] for _, m in judged(claim("10Gi", "ReadWriteMany"), old)] == [
        "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for "
        "bound claims"]
    assert [m.split(";")[0] for _, m in judged(claim("5Gi"), old)] == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"]


def test_a_pods_spec_changes_only_in_its_images() -> None:
    def pod(image: str, cpu: str) -> RenderedObject:
        return rendered("v1", "Pod", spec={"containers": [{"name": "c", "image": image, "resources": {"limits": {
            "cpu": cpu}}}]})
    old = live(pod("a", "1"))
    assert judged(pod("b", "1000m"), old) == []  # a new image, the same quantity written otherwise
    assert [p for p, _ in judged(pod("a", "2"), old)] == [".spec.containers[0].resources.limits.cpu"]


def test_a_rendered_object_without_namespace_is_the_live_one_in_default_and_no_other() -> None:
    old = live(job("train:1"))
    old.obj["metadata"]["namespace"] = "default"
    assert len(judged(rendered("batch/v1", "Job", namespace=None, spec=job("train:2").obj["spec"]), old)) == 1
    old.obj["metadata"]["namespace"] = "other"
    assert judged(rendered("batch/v1", "Job", namespace=None, spec=job("train:2").obj["spec"]), old) == []


def test_a_zero_value_the_server_never_stores_is_no_change() -> None:
    """`hostNetwork: false`, `readOnly: false`, `hostPort: 0` are Go omitempty fields: a live object leaves them out."""
    def with_zeros(image: str) -> RenderedObject:
        document = job(image)
        spec = document.obj["spec"]["template"]["spec"]
        spec["hostNetwork"] = False
        spec["volumes"] = [{"name": "data", "emptyDir": {}}]
        spec["containers"][0].update(volumeMounts=[{"name": "data", "mountPath": "/data", "readOnly": False}],
                                     ports=[{"containerPort": 22, "hostPort": 0}])
        return document
    stored = live(with_zeros("train:1"))
    template = stored.obj["spec"]["template"]["spec"]
    del template["hostNetwork"], template["containers"][0]["volumeMounts"][0]["readOnly"]
    del template["containers"][0]["ports"][0]["hostPort"]
    assert judged(with_zeros("train:1"), stored) == []
    assert [path for path, _ in judged(with_zeros("train:2"), stored)] == [".spec.template"]


def test_items_an_admission_plugin_added_are_kept_by_their_merge_key() -> None:
    """The ServiceAccount admission plugin adds a token volume and its mount to a Pod: `kubectl apply` merges volumes by
    name and mounts by mountPath, so only what the chart sends is compared, and an image-only change is accepted."""
    def pod(image: str) -> RenderedObject:
        return rendered("v1", "Pod", spec={"volumes": [{"name": "data", "emptyDir": {}}], "containers": [{
            "name": "c", "image": image, "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]})
    stored = live(pod("a"))
    spec = stored.obj["spec"]
    spec["volumes"].append({"name": "kube-api-access-x7k2p", "projected": {"sources": []}})
    spec["containers"][0]["volumeMounts"].append({"name": "kube-api-access-x7k2p",
                                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    assert judged(pod("b"), stored) == []
    moved = pod("a")
    moved.obj["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = "/scratch"
    assert [path for path, _ in judged(moved, stored)] == [".spec.containers[0].volumeMounts[0]"]
