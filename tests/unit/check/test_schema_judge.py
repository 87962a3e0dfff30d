"""generator/check/schema_judge.py: a field no schema declares is rule `pruned` (issue 36, point 3).

The API server drops such a field (it prunes a custom resource's, and decodes a built-in kind's into a type that has
no place for it) unless the client asks for strict field validation: the setting silently never takes effect. In
mpigen's own output that is always a defect (an error); in a chart written by hand it is a warning the author needs,
an error under `check --strict`. Fields under `x-kubernetes-preserve-unknown-fields` are kept, so never findings.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpigen.check.schemas import SchemaSet, bundled_kube_versions
from mpigen.readback.findings import RenderedObject
from mpigen.support.diagnostics import Severity

POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
                       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
HELMRELEASE: dict[str, Any] = {
    "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "r", "namespace": "flux"},
    "spec": {"interval": "5m", "chart": {"spec": {"chart": "./charts/x", "sourceRef": {"kind": "GitRepository",
                                                                                          "name": "fleet"}}}}}


@pytest.fixture(scope="module")
def lenient() -> SchemaSet:
    return SchemaSet(bundled_kube_versions()[-1])


@pytest.fixture(scope="module")
def strict() -> SchemaSet:
    return SchemaSet(bundled_kube_versions()[-1], strict=True)


def _with(document: dict[str, Any], *path: str | int, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    node = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


def test_a_valid_object_has_no_pruned_field(lenient: SchemaSet) -> None:
    assert lenient.check(RenderedObject("pod.yaml", POD)) == []
    assert lenient.check(RenderedObject("release.yaml", HELMRELEASE)) == []


@pytest.mark.parametrize(("own", "schema_set", "severity"), [
    (False, "lenient", Severity.WARNING), (True, "lenient", Severity.ERROR), (False, "strict", Severity.ERROR)],
    ids=["hand-written", "mpigen-compiled", "hand-written-strict"])
def test_an_undeclared_field_of_a_built_in_kind_is_pruned(request: pytest.FixtureRequest, own: bool, schema_set: str,
                                                          severity: Severity) -> None:
    pod = _with(POD, "spec", "containers", 0, "bogusField", value=1)
    (found,) = request.getfixturevalue(schema_set).check(RenderedObject("pod.yaml", pod), own=own)
    assert (found.path, found.rule, found.severity) == (".spec.containers[0].bogusField", "pruned", severity)
    assert found.message == ("unknown field: the API server drops it, and the setting never takes effect; remove it, "
                             "or correct its name or place")


def test_an_undeclared_field_of_a_custom_resource_is_pruned_with_the_likely_name(lenient: SchemaSet) -> None:
    release = _with(HELMRELEASE, "spec", "intervall", value="5m")
    (found,) = lenient.check(RenderedObject("release.yaml", release))
    assert (found.path, found.rule, found.severity) == (".spec.intervall", "pruned", Severity.WARNING)
    assert found.message.endswith('; remove it, or correct its name or place (did you mean "interval"?)')


def test_a_field_far_from_every_declared_one_suggests_nothing(lenient: SchemaSet) -> None:
    (found,) = lenient.check(RenderedObject("pod.yaml", _with(POD, "spec", "zzz", value=1)))
    assert found.rule == "pruned" and "did you mean" not in found.message


def test_preserved_fields_are_kept_not_pruned(lenient: SchemaSet) -> None:
    """HelmRelease `spec.values` is `x-kubernetes-preserve-unknown-fields`: anything there reaches the chart."""
    release = _with(HELMRELEASE, "spec", "values", value={"anything": {"at": ["all"]}})
    assert lenient.check(RenderedObject("release.yaml", release)) == []


def test_other_schema_problems_stay_rule_schema_and_errors(lenient: SchemaSet) -> None:
    pod = _with(_with(POD, "spec", "containers", 0, "image", value=3), "spec", "bogus", value=1)
    found = lenient.check(RenderedObject("pod.yaml", pod))
    assert [(f.path, f.rule, f.severity) for f in found] == [
        (".spec.bogus", "pruned", Severity.WARNING), (".spec.containers[0].image", "schema", Severity.ERROR)]
