"""Dynamic Resource Allocation (`resource.k8s.io`) as pods ask for it, in charts written by hand as much as in
mpigen's: what the API server refuses, or what leaves the pods Pending with nothing said until someone reads them.

- A pod's `spec.resourceClaims` name a ResourceClaimTemplate of its namespace (or the channel template a
  ComputeDomain's controller makes there) or a ResourceClaim of it; each container's `resources.claims` names an
  entry of them (the API server refuses the pod otherwise).
- Each request of a ResourceClaimTemplate or ResourceClaim names a DeviceClass the cluster has: one among the
  documents, or one NVIDIA's GPU DRA driver installs (vocabulary/dra.DRIVER_CLASSES).
- No pod asks for a device both through a claim and as the extended resource its DeviceClass stands for (the
  class's `extendedResourceName`): it would be allocated twice.
- A constraint's `matchAttribute` is an attribute every driver of the requests it constrains publishes
  (vocabulary/dra.DRIVERS); a request whose driver is not known is passed over.

Objects are looked up as the other rules look them up: among the render and the extra manifests of the same cluster,
in the pod's namespace (a namespace not written is taken on trust); one that is missing is an error, as a missing
NetworkAttachmentDefinition or LocalQueue is. A ComputeDomain's channel template is made by its controller, so only
its name is known: its requests are not judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mpigen.check.rules.goerrors import go_quote
from mpigen.check.rules.pods import PodTemplate, container_requests, pod_templates
from mpigen.check.rules.reading import Path, as_dict, as_str, metadata_name, path_of
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.vocabulary import dra

RULE_DEVICES = "devices"
_CHANNEL = "ComputeDomain channel"
"""The index key of the templates ComputeDomains' controllers make (by the name each ComputeDomain gives its own)."""

_DRIVER_TEST = re.compile(r"""\(*\s*(?:device\.driver\s*==\s*(["'])([^"'\\]+)\1|"""
                          r"""(["'])([^"'\\]+)\3\s*==\s*device\.driver)\s*\)*""")


def selector_driver(expressions: Iterable[str]) -> str | None:
    """The driver CEL selectors pin (`device.driver == "x"` or `'x'`, alone or joined by `&&`), or None where none
    does, an `||` leaves it open, or two selectors name different drivers (then no device qualifies)."""
    drivers: set[str] = set()
    for expression in expressions:
        if "||" in expression:
            continue
        for part in expression.split("&&"):
            match = _DRIVER_TEST.fullmatch(part.strip())
            if match:
                drivers.add(match[2] or match[4])
    return next(iter(drivers)) if len(drivers) == 1 else None


def _expressions(holder: dict[str, Any]) -> tuple[str, ...]:
    selectors = holder.get("selectors")
    return tuple(expression for selector in (selectors if isinstance(selectors, list) else [])
                 if isinstance(expression := (as_dict((as_dict(selector) or {}).get("cel")) or {}).get("expression"), str))


@dataclass(frozen=True)
class DeviceRequest:
    """One way a claim's request can be met: the request (`exactly`) or one of its `firstAvailable` subrequests
    (`name` is then `request/subrequest`), its DeviceClass, where that is named, and its own CEL selectors."""

    name: str
    request: str
    device_class: str
    path: Path
    expressions: tuple[str, ...]


def claim_devices(document: RenderedObject) -> tuple[Path, dict[str, Any]]:
    """`spec.devices` of a ResourceClaim, `spec.spec.devices` of a ResourceClaimTemplate, and its path."""
    spec = as_dict(document.obj.get("spec")) or {}
    if document.kind == dra.RESOURCE_CLAIM_TEMPLATE:
        return ("spec", "spec", "devices"), as_dict((as_dict(spec.get("spec")) or {}).get("devices")) or {}
    return ("spec", "devices"), as_dict(spec.get("devices")) or {}


def device_requests(document: RenderedObject) -> list[DeviceRequest]:
    """Every way each request of a claim (template) can be met, in document order; `resource.k8s.io/v1beta1`'s
    requests, which name their class without `exactly`, too."""
    at, devices = claim_devices(document)
    requests = devices.get("requests")
    found: list[DeviceRequest] = []
    for i, request in enumerate(requests if isinstance(requests, list) else []):
        name = as_str((as_dict(request) or {}).get("name"))
        if not name or not isinstance(request, dict):
            continue
        exactly = as_dict(request.get("exactly"))
        holder, where = (exactly, (*at, "requests", i, "exactly")) if exactly is not None else \
            (request, (*at, "requests", i))
        if isinstance(holder.get("deviceClassName"), str):
            found.append(DeviceRequest(name, name, holder["deviceClassName"], (*where, "deviceClassName"),
                                       _expressions(holder)))
        alternatives = request.get("firstAvailable")
        for j, sub in enumerate(alternatives if isinstance(alternatives, list) else []):
            sub_name, device_class = as_str((as_dict(sub) or {}).get("name")), as_str((as_dict(sub) or {}).get(
                "deviceClassName"))
            if sub_name and device_class and isinstance(sub, dict):
                found.append(DeviceRequest(f"{name}/{sub_name}", name, device_class,
                                           (*at, "requests", i, "firstAvailable", j, "deviceClassName"),
                                           _expressions(sub)))
    return found


@dataclass(frozen=True)
class _Class:
    """What a DeviceClass stands for: its driver (None: not known) and the extended resource it is also asked as."""

    name: str
    driver: str | None
    extended_resource: str | None


class _Known:
    """The DRA objects among the documents (and the extra manifests), by kind and name; a ComputeDomain under the
    name of the channel template its controller makes."""

    def __init__(self, documents: Iterable[RenderedObject], context: CheckContext) -> None:
        self.context = context
        self.by_name: dict[tuple[str, str], list[RenderedObject]] = {}
        for document in documents:
            group = document.api_version.rpartition("/")[0]
            if group == dra.GROUP and document.kind in (dra.RESOURCE_CLAIM_TEMPLATE, dra.RESOURCE_CLAIM, dra.DEVICE_CLASS):
                key = (document.kind, metadata_name(document))
            elif group == dra.COMPUTE_DOMAIN_GROUP and document.kind == dra.COMPUTE_DOMAIN_KIND:
                held: Any = document.obj
                for part in dra.COMPUTE_DOMAIN_CHANNEL_TEMPLATE:
                    held = held.get(part) if isinstance(held, dict) else None
                key = (_CHANNEL, held if isinstance(held, str) else "")
            else:
                continue
            if key[1]:
                self.by_name.setdefault(key, []).append(document)

    def find(self, kind: str, name: str, seen_from: RenderedObject, namespace: str | None = None) -> RenderedObject | None:
        """The object of `seen_from`'s cluster, in `namespace` where one is given ('' or an object without one: taken
        on trust)."""
        for other in self.context.seen_by(seen_from, self.by_name.get((kind, name), ())):
            if namespace is None or not namespace or other.namespace in (namespace, ""):
                return other
        return None

    def namespaces_of(self, kind: str, name: str, seen_from: RenderedObject) -> list[str]:
        return sorted({other.namespace for other in self.context.seen_by(seen_from, self.by_name.get((kind, name), ()))})

    def device_class(self, name: str, seen_from: RenderedObject) -> _Class | None:
        """A DeviceClass among the documents, else one NVIDIA's driver installs, else one the cluster's profile names
        (a chart mpigen compiled says so); None: the cluster is not known to have it."""
        document = self.find(dra.DEVICE_CLASS, name, seen_from)
        if document is not None:
            spec = as_dict(document.obj.get("spec")) or {}
            return _Class(name, selector_driver(_expressions(spec)), as_str(spec.get("extendedResourceName")))
        known = dra.DRIVER_CLASSES.get(name)
        if known is not None:
            return _Class(name, known.driver, known.extended_resource)
        shape = self.context.node_shapes.get(seen_from.chart)  # a chart mpigen compiled says what its cluster has
        return _Class(name, None, None) if shape is not None and name in shape.device_classes else None

    def driver(self, request: DeviceRequest, seen_from: RenderedObject) -> str | None:
        """The driver a request's devices come from: its class's, else the one its own selectors pin."""
        device_class = self.device_class(request.device_class, seen_from)
        return (device_class.driver if device_class else None) or selector_driver(request.expressions)


def check_devices(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    """The claims of every pod and every claim (template) among the documents, as the module says."""
    known = _Known([*documents, *context.extra], context)
    findings: list[Finding] = []
    for document in documents:
        for template in pod_templates(document):
            findings += _check_pod(template, known)
        if document.api_version.rpartition("/")[0] == dra.GROUP and \
                document.kind in (dra.RESOURCE_CLAIM_TEMPLATE, dra.RESOURCE_CLAIM):
            requests = device_requests(document)
            findings += _check_classes(document, requests, known)
            findings += _check_constraints(document, requests, known)
    return findings


def _shown(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def _check_pod(template: PodTemplate, known: _Known) -> list[Finding]:
    """The pod's claims exist in its namespace, its containers name only those, and none is asked for twice."""
    document, namespace = template.document, template.document.namespace
    findings: list[Finding] = []
    entries = template.spec.get("resourceClaims")
    names: set[str] = set()
    claimed: list[tuple[str, RenderedObject]] = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        entry = as_dict(entry) or {}
        name = as_str(entry.get("name")) or ""
        if name:
            names.add(name)
        for field, kind in (("resourceClaimTemplateName", dra.RESOURCE_CLAIM_TEMPLATE),
                            ("resourceClaimName", dra.RESOURCE_CLAIM)):
            target = as_str(entry.get(field))
            if not target:
                continue
            found = known.find(kind, target, document, namespace)
            if found is not None:
                claimed.append((name, found))
            elif kind != dra.RESOURCE_CLAIM_TEMPLATE or known.find(_CHANNEL, target, document, namespace) is None:
                findings.append(_missing(template, (*template.path, "spec", "resourceClaims", i, field), kind, target,
                                         known))
    for path, container in [*template.containers, *template.init_containers]:
        claims = (as_dict(container.get("resources")) or {}).get("claims")
        for j, claim in enumerate(claims if isinstance(claims, list) else []):
            claim_name = as_str((as_dict(claim) or {}).get("name"))
            if not claim_name or claim_name in names:
                continue
            where = path_of((*path, "resources", "claims", j))
            listed = f": {', '.join(sorted(names))}" if names else " which is empty"
            refused = "the API server refuses the pod" + ("" if document.kind == "Pod" else
                                                          ", so its controller cannot create it,")
            findings.append(finding(document, path_of((*path, "resources", "claims", j, "name")), (
                f"{where[1:]}: Not found: {go_quote(claim_name)}: must be one of the names in "
                f"pod.spec.resourceClaims{listed}; {refused} and the job never starts; add the claim to the pod's "
                "spec.resourceClaims or name one of its entries"), RULE_DEVICES))
    return findings + _check_twice(template, claimed, known)


def _missing(template: PodTemplate, where: Path, kind: str, name: str, known: _Known) -> Finding:
    """A pod's claim names a template or claim that is not there: the pod stays Pending."""
    document, namespace = template.document, template.document.namespace
    elsewhere = [other for other in known.namespaces_of(kind, name, document) if other and other != namespace]
    if kind == dra.RESOURCE_CLAIM_TEMPLATE:
        elsewhere += [other for other in known.namespaces_of(_CHANNEL, name, document) if other and other != namespace]
        what = (f"no ResourceClaimTemplate {_shown(namespace, name)} (named in resourceClaimTemplateName), nor a "
                "ComputeDomain whose channel template it is,")
        then = "Kubernetes cannot make the pod's ResourceClaim from it, so the pod stays Pending"
        fix = "add the ResourceClaimTemplate (or its ComputeDomain) beside the job, or give the cluster's with --context"
    else:
        what = f"no ResourceClaim {_shown(namespace, name)} (named in resourceClaimName)"
        then = "the scheduler waits for the claim, so the pod stays Pending"
        fix = "add the ResourceClaim, or give the cluster's with --context"
    there = (f" (there is one in namespace {', '.join(sorted(set(elsewhere)))}: a pod claims only from its own "
             "namespace)") if elsewhere else ""
    return finding(document, path_of(where), f"{what} in this render or the extra manifests (--context){there}; "
                   f"{then}; {fix}", RULE_DEVICES)


def _check_twice(template: PodTemplate, claimed: list[tuple[str, RenderedObject]], known: _Known) -> list[Finding]:
    """A container asking as an extended resource for what the pod's claims already give it: its devices are
    allocated twice. The claims are the pod's (all its containers share their devices)."""
    stands_for: dict[str, tuple[str, DeviceRequest]] = {}
    for claim_name, claim in claimed:
        for request in device_requests(claim):
            device_class = known.device_class(request.device_class, claim)
            if device_class and device_class.extended_resource:
                stands_for.setdefault(device_class.extended_resource, (claim_name, request))
    findings: list[Finding] = []
    if not stands_for:
        return findings
    for path, container in [*template.containers, *template.init_containers]:
        for resource, (_, where) in sorted(container_requests(container, path).items()):
            if resource not in stands_for:
                continue
            claim_name, request = stands_for[resource]
            findings.append(finding(template.document, path_of(where), (
                f"the pod claims {resource} devices through DRA (claim {claim_name}, request {request.name}: "
                f"DeviceClass {request.device_class}, whose extended resource is {resource}) and this container asks "
                f"for {resource} as an extended resource too: the devices are allocated twice, once for each, so the "
                "pod holds twice the devices it uses, or stays Pending where a node has too few; remove "
                f"{resource} from the container's resources (the claim gives it the devices)"), RULE_DEVICES))
    return findings


def _check_classes(document: RenderedObject, requests: list[DeviceRequest], known: _Known) -> list[Finding]:
    """Each request's DeviceClass is one the cluster has."""
    installed = ", ".join(sorted(dra.DRIVER_CLASSES))
    return [finding(document, path_of(request.path), (
        f"no DeviceClass {request.device_class} (request {request.name}) in this render or the extra manifests "
        f"(--context), nor one NVIDIA's GPU DRA driver installs ({installed}); the scheduler cannot allocate the "
        "request, so every pod claiming it stays Pending; name a DeviceClass the cluster has, add it beside the "
        "claim, or give the cluster's with --context (kubectl get deviceclasses -o yaml)"), RULE_DEVICES)
        for request in requests if known.device_class(request.device_class, document) is None]


def _check_constraints(document: RenderedObject, requests: list[DeviceRequest], known: _Known) -> list[Finding]:
    """Each `matchAttribute` is fully qualified, constrains requests of the claim, and is published by every driver
    of them: a request all of whose ways come from drivers that lack it can never be met."""
    at, devices = claim_devices(document)
    constraints = devices.get("constraints")
    findings: list[Finding] = []
    names = {request.request for request in requests} | {request.name for request in requests}
    for k, constraint in enumerate(constraints if isinstance(constraints, list) else []):
        constraint = as_dict(constraint) or {}
        attribute = as_str(constraint.get("matchAttribute"))
        where = path_of((*at, "constraints", k, "matchAttribute"))
        if not attribute:
            continue
        if "/" not in attribute:
            findings.append(finding(document, where, (
                f"matchAttribute {attribute} names no domain: the API server takes only a fully qualified attribute "
                f"(<domain>/<name>, such as {dra.PCIE_ROOT}) and refuses the claim"), RULE_DEVICES))
            continue
        named = [name for name in constraint.get("requests") or [] if isinstance(name, str)] \
            if isinstance(constraint.get("requests"), list) else []
        for i, name in enumerate(named):
            if name not in names:
                findings.append(finding(document, path_of((*at, "constraints", k, "requests", i)), (
                    f"{name} is no request of this claim (it has {', '.join(sorted(names)) or 'none'}): the API server "
                    "refuses the claim; name a request, or a request and its subrequest as request/subrequest"),
                    RULE_DEVICES))
        constrained = [request for request in requests
                       if not named or request.request in named or request.name in named]
        findings += _unpublished(document, where, attribute, constrained, known)
    return findings


def _lacks(driver: str | None, attribute: str) -> bool:
    """Whether the driver is one mpigen knows and its devices do not publish the attribute."""
    return driver is not None and driver in dra.DRIVERS and attribute not in dra.DRIVERS[driver].attributes


def _unpublished(document: RenderedObject, where: str, attribute: str, constrained: list[DeviceRequest],
                 known: _Known) -> list[Finding]:
    """One finding naming the requests none of whose ways can have `attribute`, with what their drivers share."""
    drivers = {request.name: known.driver(request, document) for request in constrained}
    lacking: list[DeviceRequest] = []
    for name in dict.fromkeys(request.request for request in constrained):
        ways = [request for request in constrained if request.request == name]
        if all(_lacks(drivers[way.name], attribute) for way in ways):
            lacking += ways
    if not lacking:
        return []
    published = [dra.DRIVERS[driver].attributes for driver in {drivers[r.name] for r in constrained}
                 if driver is not None and driver in dra.DRIVERS]
    common = frozenset.intersection(*published) if published else frozenset()
    standard = sorted(name for name in common if name.startswith(f"{dra.STANDARD_PREFIX}/")) or sorted(common)
    fix = (f"match on an attribute all of them publish ({', '.join(standard)})" if standard else
           "their drivers publish no attribute in common: constrain fewer requests")
    said = " and ".join(f"request {way.name} (DeviceClass {way.device_class}, driver {drivers[way.name]})"
                        for way in lacking)
    return [finding(document, where, (
        f"matchAttribute {attribute}: the devices of {said} do not publish it; no device qualifies, so the scheduler "
        f"cannot allocate the claim and every pod claiming it stays Pending; {fix}"), RULE_DEVICES)]
