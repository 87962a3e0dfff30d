"""Fields the API server lets no update change, judged against the live object `check --context` gives: a Job's pod
template and selector, a workload's selector, a StatefulSet's spec beyond what may change, a Service's cluster IPs,
an immutable ConfigMap's or Secret's data, a PriorityClass's value, a binding's roleRef, a claim's spec, a Pod's spec
beyond its images. `kubectl apply` (and Argo CD's sync) of such a change is refused, so the chart cannot roll out
until the object is deleted and created anew.

A live object is one read from the cluster (`kubectl get -o yaml`, a `kind: List` of them or one object): it carries
`metadata.resourceVersion` or `metadata.uid`. It is the old object of the rendered one of its API group, kind,
namespace and name (a rendered object with no namespace is taken to be in `default`). Without one nothing is said:
an update is judged only against what it updates.

What is compared is what `kubectl apply` sends: a field the rendered object leaves out keeps its live value (the
server's defaults, a generated selector), so only fields it sets can change; quantities are compared as numbers.

Sources: kubernetes pkg/apis/batch/validation/validation.go @ 3989b18586203eb366257fa4c8e9c0d605ec41df
(ValidateJobSpecUpdate: selector, template (a suspended Job's scheduling directives and pod metadata aside),
completionMode, podFailurePolicy and, but for elastic Indexed Jobs, completions are immutable), pkg/apis/apps/
validation/validation.go @ 2dd1588c490775be7cd90d0afc59c6dcef07032a (ValidateStatefulSetUpdate's Forbidden text;
Deployment, ReplicaSet and DaemonSet selectors ValidateImmutableField), pkg/apis/core/validation/validation.go
@ 000f26050b9be6fb3d79fae95e06b47fc96128cd (ValidatePersistentVolumeClaimUpdate, ValidatePodUpdate,
ValidateServiceUpdate's cluster IPs `may not change once set`, ValidateConfigMapUpdate and ValidateSecretUpdate),
pkg/apis/scheduling/validation (PriorityClass value), pkg/apis/rbac/validation (`cannot change roleRef`), and
apimachinery's FieldImmutableErrorMsg `field is immutable`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from mpigen.check.live_objects import LiveObjects
from mpigen.check.rules.goerrors import go_quote
from mpigen.check.rules.reading import Path, as_dict, path_of
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.vocabulary.kubernetes import api_group
from mpigen.vocabulary.server_values import parse_quantity

RULE_IMMUTABLE = "immutable"
IMMUTABLE = "field is immutable"
_SHOWN_VALUE = 80
_RECREATE = "delete the {kind} and apply it again (`kubectl replace --force` does both), or give the new one another name"


def _same_scalar(new: Any, old: Any) -> bool:
    if new == old and type(new) is type(old):
        return True
    if isinstance(new, bool) or isinstance(old, bool):
        return False
    if isinstance(new, (int, float, str)) and isinstance(old, (int, float, str)):
        if str(new) == str(old):
            return True
        left, right = parse_quantity(new), parse_quantity(old)
        return left is not None and left == right
    return False


_ZERO: tuple[Any, ...] = ({}, [], "", False, 0)
"""Values the API server does not store (Go's omitempty: a false bool, a 0, an empty string, list or map), so that a
live object leaves them out where a chart writes them."""
_MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "volumes": "name",
               "volumeMounts": "mountPath", "volumeDevices": "devicePath", "env": "name", "imagePullSecrets": "name",
               "resourceClaims": "name", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey"}
"""The strategic-merge keys of lists `kubectl apply` merges item by item (k8s.io/api core/v1 types.go patchMergeKey): an
item it does not send (a ServiceAccount token volume an admission plugin added) stays as it is."""


def first_change(new: Any, old: Any, at: Path = ()) -> Path | None:
    """Where `new`, as `kubectl apply` sends it, changes `old`: a key `new` leaves out keeps its old value (and so does
    a null one, or a zero value the server never stores); a list with a merge key is compared item by item of the same
    key (items only the live object has are kept), any other list item by item in order. None: no change."""
    if isinstance(new, dict):
        old_map = old if isinstance(old, dict) else {}
        if not isinstance(old, dict) and old is not None and new:
            return at
        for key, value in new.items():
            if value is None or (key not in old_map and any(value == zero and type(value) is type(zero)
                                                            for zero in _ZERO)):
                continue
            if key not in old_map:
                return (*at, key)
            found = _list_change(value, old_map[key], (*at, key), _merge_key(key, value)) \
                if isinstance(value, list) else first_change(value, old_map[key], (*at, key))
            if found is not None:
                return found
        return None
    if isinstance(new, list):
        return _list_change(new, old, at, None)
    return None if _same_scalar(new, old) else at


def _merge_key(field: str, items: list[Any]) -> str | None:
    """The key `kubectl apply` merges the list `field` by, where every item has it; a container's `ports` are keyed by
    `containerPort`, a Service's by `port`."""
    key = _MERGE_KEYS.get(field) or ("containerPort" if field == "ports" and items and isinstance(items[0], dict)
                                     and "containerPort" in items[0] else "port" if field == "ports" else None)
    return key if key and all(isinstance(item, dict) and key in item for item in items) else None


def _list_change(new: list[Any], old: Any, at: Path, key: str | None) -> Path | None:
    if not isinstance(old, list):
        return at
    if key is not None:
        by_key = {repr(item.get(key)): item for item in old if isinstance(item, dict)}
        for i, item in enumerate(new):
            matching = by_key.get(repr(item[key]))
            found = (*at, i) if matching is None else first_change(item, matching, (*at, i))
            if found is not None:
                return found
        return None
    if len(new) != len(old):
        return at
    for i, (item, old_item) in enumerate(zip(new, old, strict=True)):
        found = first_change(item, old_item, (*at, i))
        if found is not None:
            return found
    return None


def _held(obj: Any, parts: Path) -> Any:
    for part in parts:
        if isinstance(obj, dict) and isinstance(part, str):
            obj = obj.get(part)
        elif isinstance(obj, list) and isinstance(part, int) and 0 <= part < len(obj):
            obj = obj[part]
        else:
            return None
    return obj


def _shown(value: Any) -> str:
    """A bad value as a finding shows it: a string quoted, anything else as compact JSON, cut short."""
    text = go_quote(value) if isinstance(value, str) else json.dumps(value, separators=(",", ":"), default=str)
    return text if len(text) <= _SHOWN_VALUE else text[:_SHOWN_VALUE - 3] + "..."


def _without(value: Any, keys: tuple[str, ...]) -> Any:
    return {k: v for k, v in value.items() if k not in keys} if isinstance(value, dict) else value


class _Judge:
    """One rendered object against its live one: what its kind lets no update change."""

    def __init__(self, document: RenderedObject, live: RenderedObject) -> None:
        self.document, self.new, self.old = document, document.obj, live.obj
        self.findings: list[Finding] = []
        self.recreate = _RECREATE.format(kind=document.kind)

    def report(self, parts: Path, message: str) -> None:
        self.findings.append(finding(self.document, path_of(parts), message, RULE_IMMUTABLE))

    def changed(self, parts: Path, new: Any = None, old: Any = None) -> Path | None:
        new = _held(self.new, parts) if new is None else new
        old = _held(self.old, parts) if old is None else old
        return None if new is None else first_change(new, old, parts)

    def immutable(self, parts: Path, fix: str = "", new: Any = None, old: Any = None) -> None:
        """ValidateImmutableField: `<field>: Invalid value: <new>: field is immutable`, and where it changes (`new`
        and `old`: what to compare, where some of the field may change)."""
        change = self.changed(parts, new, old)
        if change is None:
            return
        detail = "" if change == parts else (f" ({path_of(change)[1:]}: {_shown(_held(self.new, change))}, live "
                                              f"{_shown(_held(self.old, change))})")
        self.report(parts, f"{path_of(parts)[1:]}: Invalid value: {_shown(_held(self.new, parts))}: {IMMUTABLE}"
                           f"{detail}; {fix or self.recreate}")

    def forbidden(self, parts: Path, detail: str, new: Any, old: Any, fix: str = "") -> None:
        change = first_change(new, old, parts)
        if change is not None:
            self.report(change, f"{path_of(parts)[1:] or 'spec'}: Forbidden: {detail} ({path_of(change)[1:]} "
                                f"changes); {fix or self.recreate}")


def _job(judge: _Judge) -> None:
    spec = as_dict(judge.old.get("spec")) or {}
    fix = "a Job's pods are made once: delete the Job (its pods go with it) and apply again, or name the new run anew"
    judge.immutable(("spec", "selector"), fix)
    template = ("spec", "template")
    if spec.get("suspend") is True:  # a suspended Job's scheduling directives and pod metadata may change
        judge.immutable(template, fix, _schedulable(_held(judge.new, template)), _schedulable(_held(judge.old, template)))
    else:
        judge.immutable(template, fix)
    judge.immutable(("spec", "completionMode"), fix)
    judge.immutable(("spec", "podFailurePolicy"), fix)
    if spec.get("completionMode") != "Indexed":
        judge.immutable(("spec", "completions"), fix)


def _schedulable(template: Any) -> dict[str, Any]:
    """A pod template without what a suspended Job lets change: its metadata and scheduling directives."""
    template = as_dict(template) or {}
    return {**_without(template, ("metadata",)),
            "spec": _without(template.get("spec"), ("nodeSelector", "tolerations", "affinity", "schedulingGates"))}


def _selector(judge: _Judge) -> None:
    judge.immutable(("spec", "selector"), f"a {judge.document.kind}'s selector stays as created: {judge.recreate}")


_STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                        "minReadySeconds", "revisionHistoryLimit")


def _statefulset(judge: _Judge) -> None:
    judge.forbidden(("spec",), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                               "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                               "forbidden", _without(judge.new.get("spec"), _STATEFULSET_MUTABLE),
                    _without(judge.old.get("spec"), _STATEFULSET_MUTABLE),
                    "delete the StatefulSet but not its pods and claims (`kubectl delete statefulset NAME "
                    "--cascade=orphan`) and apply again")


def _service(judge: _Judge) -> None:
    old_spec, new_spec = as_dict(judge.old.get("spec")) or {}, as_dict(judge.new.get("spec")) or {}
    if "ExternalName" in (old_spec.get("type"), new_spec.get("type")):
        return  # a Service changing to or from ExternalName gives up or takes new IPs
    old_ips = old_spec.get("clusterIPs") or ([old_spec["clusterIP"]] if old_spec.get("clusterIP") else [])
    new_ips = new_spec.get("clusterIPs") or ([new_spec["clusterIP"]] if new_spec.get("clusterIP") else [])
    if not isinstance(old_ips, list) or not isinstance(new_ips, list):
        return
    for i, (new_ip, old_ip) in enumerate(zip(new_ips, old_ips, strict=False)):
        if new_ip != old_ip:
            shown = "[]string{" + ", ".join(go_quote(str(ip)) for ip in new_ips) + "}"
            judge.report(("spec", "clusterIPs" if "clusterIPs" in new_spec else "clusterIP"),
                         f"spec.clusterIPs[{i}]: Invalid value: {shown}: may not change once set; leave "
                         f"`clusterIP` out (the live one, {old_ip}, stays), or {judge.recreate}")
            return


def _data(document: dict[str, Any]) -> dict[str, Any]:
    """A ConfigMap's or Secret's data as stored: a Secret's `stringData` is written into `data`, base64-encoded."""
    data = dict(as_dict(document.get("data")) or {})
    for key, value in (as_dict(document.get("stringData")) or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    return data


def _immutable_data(judge: _Judge) -> None:
    fix = (f"an immutable {judge.document.kind} keeps its data: create one under a new name and point its users "
           f"at it, or {judge.recreate}")
    if judge.old.get("immutable") is not True:
        if judge.document.kind == "Secret":
            judge.immutable(("type",))
        return
    detail = "field is immutable when `immutable` is set"
    if judge.new.get("immutable") is not True:
        judge.report(("immutable",), f"immutable: Forbidden: {detail}; {fix}")
    if _data(judge.new) != _data(judge.old):
        judge.report(("data",), f"data: Forbidden: {detail}; {fix}")
    if judge.document.kind == "ConfigMap" and (judge.new.get("binaryData") or {}) != (judge.old.get("binaryData") or {}):
        judge.report(("binaryData",), f"binaryData: Forbidden: {detail}; {fix}")


def _priority_class(judge: _Judge) -> None:
    if judge.changed(("value",)) is not None:
        judge.report(("value",), "value: Forbidden: may not be changed in an update.; a PriorityClass keeps its "
                                 f"value: create one under a new name and point the pods at it, or {judge.recreate}")


def _role_binding(judge: _Judge) -> None:
    if judge.changed(("roleRef",)) is None:
        return
    ref = as_dict(judge.new.get("roleRef")) or {}
    shown = ("rbac.RoleRef{" + ", ".join(f"{field}:{go_quote(str(ref.get(key, '')))}" for field, key in
                                         (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))) + "}")
    judge.report(("roleRef",), f"roleRef: Invalid value: {shown}: cannot change roleRef; {judge.recreate}")


def _claim(judge: _Judge) -> None:
    old_spec = as_dict(judge.old.get("spec")) or {}
    mutable = ("resources", "volumeAttributesClassName") + (("volumeName",) if not old_spec.get("volumeName") else ())
    judge.forbidden(("spec",), "spec is immutable after creation except resources.requests and "
                               "volumeAttributesClassName for bound claims",
                    _without(judge.new.get("spec"), mutable), _without(old_spec, mutable),
                    "a claim keeps the volume it was made for: create a claim under a new name (and copy the data), "
                    f"or {judge.recreate} (its data may go with it)")
    storage = ("spec", "resources", "requests", "storage")
    new_size, old_size = parse_quantity(_held(judge.new, storage)), parse_quantity(_held(judge.old, storage))
    if new_size is not None and old_size is not None and new_size < old_size:
        judge.report(storage, "spec.resources.requests.storage: Forbidden: field can not be less than previous value; "
                              "a volume only grows: keep the live size")


_POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")


def _pod_spec_without_images(spec: Any) -> Any:
    spec = _without(spec, _POD_MUTABLE)
    if not isinstance(spec, dict):
        return spec
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            spec = {**spec, key: [_without(container, ("image",)) for container in spec[key]]}
    return spec


def _pod(judge: _Judge) -> None:
    judge.forbidden(("spec",), "pod updates may not change fields other than `spec.containers[*].image`,"
                               "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
                               "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
                               "set to 1 if it was previously negative)",
                    _pod_spec_without_images(judge.new.get("spec")), _pod_spec_without_images(judge.old.get("spec")),
                    f"a Pod's spec stays as created: {judge.recreate}, or run it from a workload (a Deployment, a Job) "
                    "that replaces its pods")


_JUDGES: dict[tuple[str, str], Callable[[_Judge], None]] = {
    ("batch", "Job"): _job,
    ("apps", "Deployment"): _selector, ("apps", "ReplicaSet"): _selector, ("apps", "DaemonSet"): _selector,
    ("apps", "StatefulSet"): _statefulset,
    ("", "Service"): _service,
    ("", "ConfigMap"): _immutable_data, ("", "Secret"): _immutable_data,
    ("scheduling.k8s.io", "PriorityClass"): _priority_class,
    ("rbac.authorization.k8s.io", "RoleBinding"): _role_binding,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _role_binding,
    ("", "PersistentVolumeClaim"): _claim,
    ("", "Pod"): _pod,
}
"""(API group, kind) -> what an update of it may not change."""


def check_immutable(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """Each rendered object against the live object of its group, kind, namespace and name among the `--context`
    objects: an update the API server would refuse as changing an immutable field. Without live objects, nothing."""
    context = context if context is not None else CheckContext()
    live = LiveObjects(context, lambda other: (api_group(other.api_version), other.kind) in _JUDGES)
    if not live:
        return []
    findings: list[Finding] = []
    for document in documents:
        judge_kind = _JUDGES.get((api_group(document.api_version), document.kind))
        old = live.old_of(document) if judge_kind is not None else None
        if judge_kind is None or old is None or not isinstance(document.obj, dict):
            continue
        judge = _Judge(document, old)
        judge_kind(judge)
        findings += judge.findings
    return findings
