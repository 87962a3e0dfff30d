"""Multus networks: each network a pod names exists as a NetworkAttachmentDefinition (in the render, the
extra manifests, or made by a network operator), its CNI config is readable, and the pod requests the
device-plugin resource the NAD needs. Otherwise Multus fails the pod and the job never starts. And a Volcano Job
whose tasks run on the nodes' network turns its svc plugin's NetworkPolicy off, or its ranks cannot connect.

No object may move a pod off the network its namespace owns: an annotation that replaces its cluster network
(`v1.multus-cni.io/default-network`) or hands it addresses past the CNI's IPAM (vocabulary/reserved.py
`NETWORK_INSTRUCTIONS`), wherever in the object it stands (pod templates of any kind, a TrainJob's runtime patches),
or a network of Kubernetes' or a controller's namespace in `k8s.v1.cni.cncf.io/networks`."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mpigen.check.rules.goerrors import go_quote
from mpigen.check.rules.pods import PodTemplate, is_volcano_job, pod_requests, pod_templates
from mpigen.check.rules.reading import Path, Trail, as_dict, as_str, containers_below, metadata_name, path_of, unwind
from mpigen.providers import PROVIDERS
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.support.diagnostics import Severity
from mpigen.vocabulary import volcano_job
from mpigen.vocabulary.kubernetes import DNS1123_LABEL
from mpigen.vocabulary.multus import (
    CLUSTER_NETWORK_INTERFACE,
    DEFAULT_NETWORK_ANNOTATION,
    NAD_KIND,
    NETWORKS_ANNOTATION,
    POD_OWN_INTERFACES,
    RESOURCE_NAME_ANNOTATION,
)
from mpigen.vocabulary.reserved import NETWORK_INSTRUCTIONS, reserved_namespace_owner

RULE_NETWORK = "network"


# Kinds whose operator renders a NetworkAttachmentDefinition of the same name, and the namespace it goes to
# when spec.networkNamespace is not set ('' = the object's own): those of the providers' operators, and NVIDIA
# network-operator's.
OPERATOR_NETWORK_KINDS = {**{kind: namespace for provider in PROVIDERS.values()
                             for kind, namespace in provider.network_kinds.items()},
                          "HostDeviceNetwork": "default", "IPoIBNetwork": "default", "MacvlanNetwork": "default"}

_IFNAMSIZ = 16
MULTUS_NAMESPACE = "kube-system"
"""Where Multus looks for a default network the annotation names without a namespace (its `multusNamespace`,
kube-system in its own daemonsets)."""


@dataclass(frozen=True)
class NetworkSelection:
    """One entry of a pod's `k8s.v1.cni.cncf.io/networks`; namespace '' means the pod's own."""

    namespace: str
    name: str
    interface: str = ""


def parse_networks_annotation(value: str) -> tuple[list[NetworkSelection], list[str]]:
    """Multus' parsePodNetworkAnnotation: a JSON list when the text holds `[`, `{` or `"`, else `ns/name@if, ...`.

    Returns the selections and, when the annotation is malformed, why (Multus then fails the pod).
    """
    if value.strip() == "":
        return [], []
    if any(char in value for char in '[{"'):
        return _parse_networks_json(value)
    selections: list[NetworkSelection] = []
    problems: list[str] = []
    for raw in value.split(","):
        item = raw.strip()
        slash = item.split("/")
        if len(slash) > 2:
            problems.append(f"entry {go_quote(item)} has more than one '/' (expected <namespace>/<name>@<interface>)")
            continue
        namespace, rest = (slash[0].strip(), slash[1]) if len(slash) == 2 else ("", slash[0])
        at = rest.split("@")
        if len(at) > 2:
            problems.append(f"entry {go_quote(item)} has more than one '@' (expected <namespace>/<name>@<interface>)")
            continue
        name, interface = at[0].strip(), (at[1].strip() if len(at) == 2 else "")
        if not name:
            problems.append(f"entry {go_quote(item)} names no network")
            continue
        bad = [part for part in (namespace, name) if part and not DNS1123_LABEL.fullmatch(part)]
        if bad:
            problems.append(f"entry {go_quote(item)}: {go_quote(bad[0])} is not a DNS-1123 label (lower case "
                            "alphanumeric characters or '-', starting and ending with an alphanumeric character)")
            continue
        interface_problem = _interface_problem(interface)
        if interface_problem:
            problems.append(f"entry {go_quote(item)}: {interface_problem}")
            continue
        selections.append(NetworkSelection(namespace, name, interface))
    return selections, problems


def _interface_problem(interface: str) -> str:
    if interface in POD_OWN_INTERFACES:
        own = "cluster network" if interface == CLUSTER_NETWORK_INTERFACE else "loopback"
        return f"interface {interface} is the pod's {own}; name the attachment's interface otherwise"
    if len(interface) > _IFNAMSIZ - 1 or re.search(r"[\s/]", interface):
        return (f"interface name {go_quote(interface)} must be at most {_IFNAMSIZ - 1} characters without '/' "
                "or spaces")
    return ""


def _parse_networks_json(value: str) -> tuple[list[NetworkSelection], list[str]]:
    try:
        data = json.loads(value)
    except ValueError as exc:
        return [], [f"is not valid JSON ({exc}); Multus fails the pod: \"failed to parse pod Network Attachment "
                    "Selection Annotation JSON format\""]
    if not isinstance(data, list):
        return [], ['must be a JSON list of {"name": ..., "namespace": ..., "interface": ...} objects, or a '
                    "comma-separated <namespace>/<name>@<interface> list"]
    selections: list[NetworkSelection] = []
    problems: list[str] = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            problems.append(f"entry {index} is not a JSON object")
            continue
        name, namespace, interface = item.get("name"), item.get("namespace", ""), item.get("interface", "")
        if not isinstance(name, str) or not name:
            problems.append(f'entry {index} has no "name" string')
            continue
        if not isinstance(namespace, str) or not isinstance(interface, str):
            problems.append(f'entry {index}: "namespace" and "interface" must be strings')
            continue
        interface_problem = _interface_problem(interface)
        if interface_problem:
            problems.append(f"entry {index}: {interface_problem}")
            continue
        selections.append(NetworkSelection(namespace, name, interface))
    return selections, problems


def cni_config_problem(config: Any) -> str:
    """Why a NAD's `spec.config` is no usable CNI configuration, or ''."""
    if config is None:
        return "spec.config is missing: the NetworkAttachmentDefinition holds no CNI configuration"
    if not isinstance(config, str):
        return "spec.config must be a string holding the CNI configuration as JSON"
    try:
        data = json.loads(config)
    except ValueError as exc:
        return f"spec.config is not valid JSON: {exc}"
    if not isinstance(data, dict):
        return "spec.config must be a JSON object (a CNI configuration or configuration list)"
    if "plugins" in data:
        plugins = data["plugins"]
        if not isinstance(plugins, list) or not plugins:
            return 'spec.config: "plugins" must be a non-empty list of CNI plugin configurations'
        for index, plugin in enumerate(plugins):
            if not isinstance(plugin, dict) or not isinstance(plugin.get("type"), str) or not plugin["type"]:
                return f'spec.config: plugins[{index}] has no CNI "type"'
        return ""
    if not isinstance(data.get("type"), str) or not data["type"]:
        return 'spec.config names no CNI plugin: it needs a "type", or a "plugins" list whose entries each have a "type"'
    return ""


class _NadIndex:
    """NetworkAttachmentDefinitions by namespace and name; a document without a namespace is in the release's. A pod
    sees only those of its own cluster (`CheckContext.same_cluster`)."""

    def __init__(self, documents: Iterable[RenderedObject], context: CheckContext) -> None:
        self.context = context
        self.by_key: dict[tuple[str, str], list[RenderedObject]] = {}
        self.by_name: dict[str, list[RenderedObject]] = {}
        for document in documents:
            name = metadata_name(document)
            if not name:
                continue
            if document.kind == NAD_KIND:
                namespace = document.namespace
            elif document.kind in OPERATOR_NETWORK_KINDS:
                # The network operators render a NAD of the same name into spec.networkNamespace.
                spec = as_dict(document.obj.get("spec")) or {}
                namespace = as_str(spec.get("networkNamespace")) or OPERATOR_NETWORK_KINDS[document.kind] or \
                    document.namespace
            else:
                continue
            self.by_key.setdefault((namespace, name), []).append(document)
            self.by_name.setdefault(name, []).append(document)

    def _of(self, pod: RenderedObject, found: list[RenderedObject],
            fits: Callable[[RenderedObject], bool]) -> RenderedObject | None:
        """The first of `found` in the pod's cluster: one of that very cluster (named or unknown) before one that is
        only taken to be of it. A pod of unknown origin may be of any cluster: among those, one that `fits` it (whose
        device the pod requests) is its own, where there is one."""
        mine = self.context.seen_by(pod, found)
        if not mine or self.context.cluster_of(pod) or not self.context.cluster_of(mine[0]):
            return next(iter(mine), None)
        return next((other for other in mine if fits(other)), mine[0])

    def find(self, pod: RenderedObject, namespace: str, name: str,
             fits: Callable[[RenderedObject], bool]) -> RenderedObject | None:
        """Exact match first; where a namespace is unknown (not written), a NAD of that name is taken on trust."""
        exact = self._of(pod, self.by_key.get((namespace, name), []), fits)
        if exact is not None:
            return exact
        if namespace == "":
            return self._of(pod, self.by_name.get(name, []), fits)
        return self._of(pod, self.by_key.get(("", name), []), fits)


def _annotations(metadata: dict[str, Any]) -> dict[str, Any]:
    return as_dict(metadata.get("annotations")) or {}


def _check_volcano_network_policy(document: RenderedObject, templates: list[PodTemplate]) -> list[Finding]:
    """Volcano's svc plugin creates a NetworkPolicy admitting only the job's pods, by their labels, unless told
    `--disable-network-policy`; pods on the nodes' network reach others from their node's address, which no pod
    selector matches, so an MPI job with such tasks cannot connect its ranks where the CNI enforces policies."""
    plugins = as_dict((as_dict(document.obj.get("spec")) or {}).get("plugins")) or {}
    svc = plugins.get(volcano_job.SVC_PLUGIN)
    if not isinstance(svc, list) or volcano_job.DISABLE_NETWORK_POLICY_FLAG in svc:
        return []
    host = [template.role for template in templates if template.spec.get("hostNetwork") is True]
    if not host:
        return []
    return [finding(document, path_of(("spec", "plugins", volcano_job.SVC_PLUGIN)), (
        f"task(s) {', '.join(host)} run on the nodes' network, but the svc plugin's NetworkPolicy admits only the "
        "job's pods by their labels, and traffic from a node's address matches none: mpirun's daemons cannot "
        f"connect where the CNI enforces NetworkPolicies; add {volcano_job.DISABLE_NETWORK_POLICY_FLAG} to the svc "
        "plugin"), RULE_NETWORK)]


def check_networks(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    """Every Multus network a pod names exists, has a usable CNI config, and gets the device it needs."""
    findings: list[Finding] = []
    index = _NadIndex([*documents, *context.extra], context)
    to_check = {id(d): d for d in documents if d.kind == NAD_KIND}
    for document in documents:
        findings += _check_network_instructions(document)
        templates = pod_templates(document)
        for template in templates:
            findings += _check_pod_networks(template, index, to_check)
        if is_volcano_job(document):
            findings += _check_volcano_network_policy(document, templates)
    for nad in to_check.values():
        if nad.kind != NAD_KIND:
            continue
        config = (as_dict(nad.obj.get("spec")) or {}).get("config")
        if config is None:
            findings.append(finding(nad, path_of(("spec", "config")), (
                "spec.config is missing: Multus then looks for a CNI configuration file of this name on each node; "
                "put the configuration here to keep it in git"), RULE_NETWORK, Severity.WARNING))
            continue
        problem = cni_config_problem(config)
        if problem:
            findings.append(finding(nad, path_of(("spec", "config")), problem, RULE_NETWORK))
        elif _device_plugin_type(config) and not as_str(_annotations(as_dict(nad.obj.get("metadata")) or {}).get(
                RESOURCE_NAME_ANNOTATION)):
            findings.append(finding(nad, path_of(("metadata", "annotations")), (
                f"a {_device_plugin_type(config)} network needs the {RESOURCE_NAME_ANNOTATION} annotation naming the "
                "device-plugin resource of its VFs; without it Multus fails with \"VF pci addr is required\""),
                RULE_NETWORK))
    return findings


def _annotation_maps(obj: dict[str, Any]) -> Iterable[tuple[Path, dict[str, Any]]]:
    """Every `metadata.annotations` mapping in an object, at any depth, with the path to it, in document order: the
    object's own, its pod templates' whatever the kind, a TrainJob's runtime patches'."""
    stack: list[tuple[Trail, Any]] = [(None, obj)]
    while stack:
        trail, node = stack.pop()
        if isinstance(node, dict):
            metadata = node.get("metadata")
            mapping = metadata.get("annotations") if isinstance(metadata, dict) else None
            if isinstance(mapping, dict):
                yield (*unwind(trail), "metadata", "annotations"), mapping
        stack += containers_below(node, trail)


def _check_network_instructions(document: RenderedObject) -> list[Finding]:
    """Annotations that change a pod's network from outside what its namespace owns (NETWORK_INSTRUCTIONS)."""
    findings: list[Finding] = []
    for path, mapping in _annotation_maps(document.obj):
        for key, what in NETWORK_INSTRUCTIONS.items():
            if key not in mapping:
                continue
            value = mapping[key]
            named = _default_network(value) if key == DEFAULT_NETWORK_ANNOTATION else ""
            shown = f"names {named}" if named else f"is {go_quote(str(value)[:200])}"
            findings.append(finding(document, path_of((*path, key)), (
                f"{key} {shown}: {what}; remove it (a job's pods attach their networks in {NETWORKS_ANNOTATION})"),
                RULE_NETWORK))
    return findings


def _default_network(value: Any) -> str:
    """`namespace/name` of the attachment a default-network annotation names, as Multus resolves it, or ''."""
    selections, problems = parse_networks_annotation(value) if isinstance(value, str) else ([], ["not a string"])
    if problems or len(selections) != 1:
        return ""
    return f"{selections[0].namespace or MULTUS_NAMESPACE}/{selections[0].name}"


def _device_plugin_type(config: str) -> str:
    """`sriov` or `ib-sriov` when the main plugin of a CNI config needs a device from a device plugin."""
    try:
        data = json.loads(config)
    except ValueError:
        return ""
    main = (data.get("plugins") or [{}])[0] if isinstance(data.get("plugins"), list) else data
    kind = main.get("type") if isinstance(main, dict) else None
    return kind if kind in ("sriov", "ib-sriov") else ""


def _check_pod_networks(template: PodTemplate, index: _NadIndex, to_check: dict[int, RenderedObject]) -> list[Finding]:
    document = template.document
    annotations = _annotations(template.metadata)
    if NETWORKS_ANNOTATION not in annotations:
        return []
    where = path_of((*template.path, "metadata", "annotations", NETWORKS_ANNOTATION))
    value = annotations[NETWORKS_ANNOTATION]
    if not isinstance(value, str):
        return [finding(document, where, f"{NETWORKS_ANNOTATION} must be a string", RULE_NETWORK)]
    selections, problems = parse_networks_annotation(value)
    findings = [finding(document, where, f"{NETWORKS_ANNOTATION} {problem}", RULE_NETWORK) for problem in problems]
    attached: Counter[int] = Counter()
    nads: dict[int, RenderedObject] = {}
    requests = pod_requests(template)

    def fits(nad: RenderedObject) -> bool:
        resource = as_str(_annotations(as_dict(nad.obj.get("metadata")) or {}).get(RESOURCE_NAME_ANNOTATION))
        return not resource or resource in requests

    for selection in selections:
        namespace = selection.namespace or document.namespace
        owner = reserved_namespace_owner(namespace) if namespace != document.namespace else None
        if owner is not None:
            findings.append(finding(document, where, (
                f"{NETWORKS_ANNOTATION} attaches {namespace}/{selection.name}, a network of namespace {namespace}, "
                f"which belongs to {owner}: its networks are the cluster's and its controllers', not a job's; attach "
                "networks of the pod's own namespace"), RULE_NETWORK))
            continue
        nad = index.find(document, namespace, selection.name, fits)
        if nad is None:
            shown = f"{namespace}/{selection.name}" if namespace else selection.name
            findings.append(finding(document, where, (
                f"no NetworkAttachmentDefinition {shown} (named in {NETWORKS_ANNOTATION}) in this render or the extra "
                "manifests; Multus cannot attach it and the pod never starts"), RULE_NETWORK))
            continue
        attached[id(nad)] += 1
        nads[id(nad)] = nad
        to_check.setdefault(id(nad), nad)
    containers = path_of((*template.path, "spec", "containers"))
    for key, count in attached.items():
        nad = nads[key]
        metadata = as_dict(nad.obj.get("metadata")) or {}
        resource = as_str(_annotations(metadata).get(RESOURCE_NAME_ANNOTATION))
        if not resource:
            continue
        shown = f"{nad.namespace}/{metadata_name(nad)}" if nad.namespace else metadata_name(nad)
        asked = requests.get(resource)
        if asked is None:
            findings.append(finding(document, containers, (
                f"network {shown} needs a {resource} device (its {RESOURCE_NAME_ANNOTATION}), but no container of "
                f"this pod requests {resource} in resources.limits; Multus fails with \"VF pci addr is required\""),
                RULE_NETWORK))
        elif asked.total is not None and asked.total < count:
            findings.append(finding(document, containers, (
                f"the pod attaches network {shown} {count} times, but its containers request {asked.total} "
                f"{resource} (the NAD's {RESOURCE_NAME_ANNOTATION}); each attachment needs its own device"),
                RULE_NETWORK))
    return findings
