"""Quantities and resource names as the API server takes them, beyond the schemas: kubernetes-validate's schemas take
any string as a Quantity, so `cpu: two` passes them, and `kubectl apply` is refused.

- Every Quantity field of Kubernetes' own kinds parses (containers' requests and limits, pod overhead and pod-level
  resources, emptyDir sizeLimit, ephemeral volume claims, PersistentVolumeClaims and StatefulSets' claim templates,
  ResourceQuota hard, LimitRange limits). Custom resources' pod templates have the quantity pattern in their schemas
  (mpigen's own and converted CRDs), so the schema check reports those.
- No quantity is negative; a container's resource names are standard (`cpu`, `memory`, `ephemeral-storage`,
  `hugepages-<size>`) or domain-prefixed; a request is at most its limit, and a hugepages request equals its limit.
  Extended resources (`nvidia.com/gpu`) are the `resources` rule's.

Sources: kubernetes pkg/apis/core/validation/validation.go @ 000f26050b9be6fb3d79fae95e06b47fc96128cd
(ValidateContainerResourceRequirements: each name by validateContainerResourceName, each value by
ValidateResourceQuantityValue, `must be less than or equal to %s limit of %s` and `must be equal to %s limit of %s` on
the `requests` field, `Limit must be set for non overcommitable resources`; validateResourceName: `must be a standard
resource type or fully qualified`, then `must be a standard resource for containers`), pkg/apis/core/helper/helpers.go
(IsStandardContainerResourceName, IsHugePageResourceName, IsOvercommitAllowed), and apimachinery
pkg/api/resource/quantity.go (ParseQuantity, ErrFormatWrong).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from functools import lru_cache
from typing import Any

from mpigen.check.rules.goerrors import NONNEGATIVE, field_invalid, field_required, go_quote
from mpigen.check.rules.pods import is_builtin, is_extended_resource, pod_templates, refused_later
from mpigen.check.rules.reading import Path, as_dict, path_of
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.vocabulary.kubernetes import label_key_problems
from mpigen.vocabulary.server_values import QUANTITY_FORMAT_ERROR, parse_quantity, quantity_text

RULE_QUANTITIES = "quantities"

STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
    "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"})
"""helper.IsStandardResourceName's names (besides the `hugepages-` and `requests.hugepages-` prefixes)."""
HUGEPAGES = "hugepages-"

_LIMIT_RANGE_FIELDS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def _resource_list(holder: dict[str, Any], key: str, at: Path) -> Iterator[tuple[Path, str, Any]]:
    """(path, resource name, value) of one ResourceList (`requests`, `limits`, `hard`...) of a mapping."""
    values = as_dict(holder.get(key)) or {}
    for name, value in values.items():
        if isinstance(name, str):
            yield (*at, key, name), name, value


def _requirements(holder: dict[str, Any], at: Path) -> Iterator[tuple[Path, str, Any]]:
    resources = as_dict(holder.get("resources")) or {}
    for key in ("limits", "requests"):
        yield from _resource_list(resources, key, (*at, "resources"))


def quantity_fields(document: RenderedObject) -> Iterator[tuple[Path, str, Any]]:
    """Every Quantity field of the document the API server decodes: (path, resource name or '', value)."""
    obj = document.obj
    spec = as_dict(obj.get("spec")) or {}
    for template in pod_templates(document):
        at = (*template.path, "spec")
        for path, container in template.every_container:
            yield from _requirements(container, path)
        yield from _resource_list(template.spec, "overhead", at)
        yield from _requirements(template.spec, at)
        volumes = template.spec.get("volumes")
        for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
            volume = as_dict(volume) or {}
            empty_dir = as_dict(volume.get("emptyDir")) or {}
            if "sizeLimit" in empty_dir:
                yield (*at, "volumes", i, "emptyDir", "sizeLimit"), "", empty_dir["sizeLimit"]
            claim = as_dict((as_dict(volume.get("ephemeral")) or {}).get("volumeClaimTemplate")) or {}
            claim_spec = as_dict(claim.get("spec")) or {}
            yield from _requirements(claim_spec, (*at, "volumes", i, "ephemeral", "volumeClaimTemplate", "spec"))
    if document.kind == "PersistentVolumeClaim":
        yield from _requirements(spec, ("spec",))
    elif document.kind == "StatefulSet":
        claims = spec.get("volumeClaimTemplates")
        for i, claim in enumerate(claims if isinstance(claims, list) else []):
            claim_spec = as_dict((as_dict(claim) or {}).get("spec")) or {}
            yield from _requirements(claim_spec, ("spec", "volumeClaimTemplates", i, "spec"))
    elif document.kind == "ResourceQuota":
        yield from _resource_list(spec, "hard", ("spec",))
    elif document.kind == "LimitRange":
        limits = spec.get("limits")
        for i, item in enumerate(limits if isinstance(limits, list) else []):
            for key in _LIMIT_RANGE_FIELDS:
                yield from _resource_list(as_dict(item) or {}, key, ("spec", "limits", i))


def _undecodable(document: RenderedObject, where: str, value: Any) -> str:
    """The decode error `kubectl apply` prints for the whole object, and which field and value caused it."""
    version = document.api_version.rpartition("/")[2]
    shown = go_quote(text) if (text := quantity_text(value)) is not None else type(value).__name__
    return (f"{document.kind} in version {go_quote(version)} cannot be handled as a {document.kind}: "
            f"{QUANTITY_FORMAT_ERROR} ({where}: {shown}); write a quantity such as 2, 500m or 16Gi")


def container_resource_name_problems(name: str) -> list[str]:
    """validateContainerResourceName: a qualified name; unprefixed, one of the standard ones for containers."""
    problems = label_key_problems(name)
    if problems or "/" in name:
        return problems
    if name not in _STANDARD_RESOURCES and not name.startswith((HUGEPAGES, "requests." + HUGEPAGES)):
        problems.append("must be a standard resource type or fully qualified")
    if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith(HUGEPAGES):
        problems.append("must be a standard resource for containers")
    return problems


@lru_cache(maxsize=4096)
def _name_problems(name: str) -> tuple[str, ...]:
    """`container_resource_name_problems`, once per name for the process (a fleet repeats a few names)."""
    return tuple(container_resource_name_problems(name))


def _parsed(value: Any) -> Decimal | None:
    """`parse_quantity`, once per value of a kind that can be cached (a fleet repeats a few quantities)."""
    return _parsed_cached(type(value).__name__, value) if isinstance(value, (str, int, float)) else parse_quantity(value)


@lru_cache(maxsize=4096)
def _parsed_cached(_: str, value: str | int | float) -> Decimal | None:
    """Keyed by the value's type's name too: 1, 1.0 and True are equal keys, not equal quantities."""
    return parse_quantity(value)


def _values(document: RenderedObject) -> list[Finding]:
    """Each quantity decodes (Kubernetes' own kinds) and is not negative."""
    findings: list[Finding] = []
    builtin, after = is_builtin(document), refused_later(document)
    for parts, _, value in quantity_fields(document):
        amount = _parsed(value)
        if amount is None and builtin:
            where = path_of(parts)
            findings.append(finding(document, where, _undecodable(document, where[1:], value), RULE_QUANTITIES))
        elif amount is not None and amount < 0:
            where = path_of(parts)
            findings.append(finding(document, where, field_invalid(where[1:], go_quote(quantity_text(value) or ""),
                                                                   NONNEGATIVE) + after, RULE_QUANTITIES))
    return findings


def _containers(document: RenderedObject) -> list[Finding]:
    """Each container's resource names, and its requests against its limits (extended resources aside)."""
    findings: list[Finding] = []
    after = refused_later(document)
    for template in pod_templates(document):
        for path, container in template.every_container:
            resources = as_dict(container.get("resources")) or {}
            limits = as_dict(resources.get("limits")) or {}
            for section in ("limits", "requests"):
                for name in as_dict(resources.get(section)) or {}:
                    problems = _name_problems(name) if isinstance(name, str) else ()
                    if not problems:
                        continue
                    where = path_of((*path, "resources", section, name))[1:]
                    findings += [finding(document, "." + where, field_invalid(where, go_quote(name), problem) + after,
                                         RULE_QUANTITIES) for problem in problems]
            for name, value in (as_dict(resources.get("requests")) or {}).items():
                if not isinstance(name, str) or is_extended_resource(name):
                    continue
                requests_path = path_of((*path, "resources", "requests"))
                message = _request_problem(requests_path[1:], name, value, limits)
                if message:
                    findings.append(finding(document, requests_path, message + after, RULE_QUANTITIES))
    return findings


def _request_problem(field: str, name: str, request: Any, limits: dict[str, Any]) -> str | None:
    """What the API server says of a request beside the container's limits (None: nothing)."""
    asked = _parsed(request)
    hugepages = name.startswith(HUGEPAGES)
    if name not in limits:
        return field_required(field.removesuffix("requests") + "limits",
                              "Limit must be set for non overcommitable resources") if hugepages else None
    limit = _parsed(limits[name])
    if asked is None or limit is None:
        return None
    shown, limit_shown = go_quote(quantity_text(request) or ""), quantity_text(limits[name])
    if hugepages and asked != limit:
        return field_invalid(field, shown, f"must be equal to {name} limit of {limit_shown}")
    if asked > limit:
        return field_invalid(field, shown, f"must be less than or equal to {name} limit of {limit_shown}") + (
            f"; ask for at most {limit_shown}, or raise the limit")
    return None


def check_quantities(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """Quantities decode and are not negative, container resource names are standard or domain-prefixed, and no
    request exceeds its limit, as the API server judges them (custom resources' pod templates: as it judges the pods
    their controllers make). Needs nothing beyond the documents."""
    findings: list[Finding] = []
    for document in documents:
        findings += _values(document) + _containers(document)
    return findings
