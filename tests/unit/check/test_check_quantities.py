"""generator/check/rules/quantities.py: quantities decode and are not negative, container resource names are standard
or domain-prefixed, and no request exceeds its limit, in the API server's words (pkg/apis/core/validation/
validation.go: ValidateContainerResourceRequirements, validateContainerResourceName; apimachinery quantity.go's
ErrFormatWrong). Each check is shown refusing a violating object and taking a valid one."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from mpigen.check.rules import check_quantities
from mpigen.readback.findings import RenderedObject
from mpigen.vocabulary.server_values import QUANTITY_FORMAT_ERROR, parse_quantity


def pod(resources: dict[str, Any], **spec: Any) -> RenderedObject:
    container = {"name": "c", "image": "i", "resources": resources}
    return RenderedObject("m.yaml", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                     "spec": {"containers": [container], **spec}})


def mpijob(resources: dict[str, Any]) -> RenderedObject:
    template = {"spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]}}
    return RenderedObject("m.yaml", {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "j"},
                                     "spec": {"mpiReplicaSpecs": {"Worker": {"template": template}}}})


def messages(document: RenderedObject) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in check_quantities([document])]


@pytest.mark.parametrize(("text", "number"), [
    ("500m", Decimal("0.5")), ("1Gi", Decimal(2**30)), ("1e3", Decimal(1000)), ("1E3", Decimal(1000)),
    ("2E", Decimal(2 * 10**18)), ("1Ei", Decimal(2**60)), ("5e-1", Decimal("0.5")),
    (".5", Decimal("0.5")), ("+1.", Decimal(1)), (" 2 ", Decimal(2)), (3, Decimal(3)),
    (1.5, Decimal("1.5")), ("-1", Decimal(-1)),
])
def test_quantities_parse_as_apimachinery_reads_them(text: Any, number: Decimal) -> None:
    assert parse_quantity(text) == number


@pytest.mark.parametrize("text", ["two", "1GB", "1 Gi", "", "1e", "1.5.5", "Gi", True, None, {"a": 1}, float("nan")])
def test_what_apimachinery_cannot_decode_is_no_quantity(text: Any) -> None:
    assert parse_quantity(text) is None


def test_a_quantity_the_server_cannot_decode_fails_the_object_with_its_decode_error() -> None:
    assert messages(pod({"limits": {"memory": "two"}})) == [(
        ".spec.containers[0].resources.limits.memory",
        f'Pod in version "v1" cannot be handled as a Pod: {QUANTITY_FORMAT_ERROR} '
        '(spec.containers[0].resources.limits.memory: "two"); write a quantity such as 2, 500m or 16Gi')]
    assert messages(pod({"limits": {"memory": "2Gi"}, "requests": {"memory": 1.5}})) == []


@pytest.mark.parametrize(("kind", "spec", "path"), [
    ("ResourceQuota", {"hard": {"requests.cpu": "lots"}}, ".spec.hard[\"requests.cpu\"]"),
    ("LimitRange", {"limits": [{"type": "Container", "max": {"cpu": "x"}}]}, ".spec.limits[0].max.cpu"),
    ("PersistentVolumeClaim", {"resources": {"requests": {"storage": "10 GB"}}}, ".spec.resources.requests.storage"),
])
def test_quota_limit_range_and_claim_quantities_are_judged(kind: str, spec: dict[str, Any], path: str) -> None:
    document = RenderedObject("m.yaml", {"apiVersion": "v1", "kind": kind, "metadata": {"name": "q"}, "spec": spec})
    assert [p for p, _ in messages(document)] == [path]


def test_pod_overhead_and_empty_dir_size_limit_are_quantities() -> None:
    document = pod({}, overhead={"cpu": "a bit"}, volumes=[{"name": "v", "emptyDir": {"sizeLimit": "big"}}])
    assert [p for p, _ in messages(document)] == [".spec.overhead.cpu", ".spec.volumes[0].emptyDir.sizeLimit"]


def test_a_custom_resources_quantities_are_left_to_its_schema_but_its_requests_are_judged() -> None:
    # The MPIJob's schema has the quantity pattern (the schema check reports `two`); a request over its limit passes
    # every schema, and the pods the operator makes are refused.
    assert messages(mpijob({"limits": {"cpu": "two"}})) == []
    assert messages(mpijob({"limits": {"cpu": "1"}, "requests": {"cpu": "1500m"}})) == [(
        ".spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.requests",
        'spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.requests: Invalid value: "1500m": must be '
        "less than or equal to cpu limit of 1; ask for at most 1, or raise the limit; the API server takes the MPIJob, "
        "and refuses every pod made of it")]


def test_a_negative_quantity_is_refused() -> None:
    assert messages(pod({"requests": {"memory": "-1Gi"}})) == [(
        ".spec.containers[0].resources.requests.memory",
        'spec.containers[0].resources.requests.memory: Invalid value: "-1Gi": must be greater than or equal to 0')]


def test_a_request_over_its_limit_is_refused_in_the_servers_words() -> None:
    assert messages(pod({"limits": {"cpu": 1}, "requests": {"cpu": "2"}})) == [(
        ".spec.containers[0].resources.requests",
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1; '
        "ask for at most 1, or raise the limit")]
    assert messages(pod({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "2000m", "memory": "1024Mi"}})) \
        == []


def test_extended_resources_are_left_to_the_resources_rule() -> None:
    assert messages(pod({"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 2}})) == []


def test_hugepages_requests_equal_their_limit() -> None:
    assert [m for _, m in messages(pod({"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"hugepages-2Mi": "1Mi"}}))] \
        == ['spec.containers[0].resources.requests: Invalid value: "1Mi": must be equal to hugepages-2Mi limit of 2Mi']
    assert messages(pod({"requests": {"hugepages-2Mi": "2Mi"}})) == [(
        ".spec.containers[0].resources.requests",
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources")]
    assert messages(pod({"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"hugepages-2Mi": "2Mi"}})) == []


def test_a_container_resource_name_is_standard_or_domain_prefixed() -> None:
    assert [m for _, m in messages(pod({"requests": {"gpu": 1}}))] == [
        'spec.containers[0].resources.requests.gpu: Invalid value: "gpu": must be a standard resource type or fully '
        "qualified",
        'spec.containers[0].resources.requests.gpu: Invalid value: "gpu": must be a standard resource for containers']
    # `pods` is a standard resource, but not a container's.
    assert [m for _, m in messages(pod({"limits": {"pods": 1}}))] == [
        'spec.containers[0].resources.limits.pods: Invalid value: "pods": must be a standard resource for containers']
    assert messages(pod({"limits": {"cpu": 1, "memory": "1Gi", "ephemeral-storage": "1Gi", "hugepages-1Gi": "1Gi",
                                    "example.com/dongle": 1}, "requests": {"memory": "1Gi"}})) == []
