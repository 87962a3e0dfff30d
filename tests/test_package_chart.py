"""Chart files (generator/package): values, values schema and the limits they carry."""

from __future__ import annotations

import json

import pytest

from generator.pipeline import compile_profiles


def _schema(chart):
    return json.loads(dict(chart.files)["values.schema.json"])


def test_values_schema_maximum_is_the_pool_capacity(example):
    charts = {c.ref.name: c for c in example.charts}
    # Checked by hand: dgx pool = 4 nodes; resnet50-dgx takes a whole node per worker (4), tensorflow-benchmarks
    # one GPU per worker (4 x 8 = 32); pi asks 1 CPU on 8 nodes of 2 x 32 cores x 2 threads (8 x 128 = 1024).
    assert _schema(charts["resnet50-dgx"])["properties"]["workers"]["maximum"] == 4
    assert _schema(charts["tensorflow-benchmarks"])["properties"]["workers"]["maximum"] == 32
    assert _schema(charts["pi"])["properties"]["workers"]["maximum"] == 1024


@pytest.mark.parametrize("length, naming", [(45, None), (53, "stable")])
def test_values_schema_maximum_also_keeps_pod_names_within_63_characters(profiles_copy, length, naming):
    # Default naming: a 45-character name, "-" and a 7-character hash and "-worker-" leave 63 - 45 - 8 - 8 = 2
    # digits: workers 0..99, so at most 100, although the CPU pool would hold 1024. Stable naming: a 53-character
    # name leaves 63 - 53 - 8 = 2 digits, the same 100.
    name = "p" * length
    pi = (profiles_copy() / "jobs" / "pi.yaml").read_text(encoding="utf-8").replace("name: pi", f"name: {name}")
    if naming:
        pi += f"naming: {naming}\n"
    root = profiles_copy({"jobs/pi.yaml": pi})
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    chart = next(c for c in result.charts if c.ref.name == name)
    assert _schema(chart)["properties"]["workers"]["maximum"] == 100
    assert "pod names allow 100" in dict(chart.files)["values.yaml"]


def test_values_schema_maximum_counts_the_hash_of_default_naming(profiles_copy):
    # 46 characters + 8 (hash) + 8 ("-worker-") leave 1 digit: at most 10 workers.
    name = "p" * 46
    pi = (profiles_copy() / "jobs" / "pi.yaml").read_text(encoding="utf-8").replace("name: pi", f"name: {name}")
    result = compile_profiles([profiles_copy({"jobs/pi.yaml": pi})])
    assert result.ok, [d.format() for d in result.diagnostics]
    chart = next(c for c in result.charts if c.ref.name == name)
    assert _schema(chart)["properties"]["workers"]["maximum"] == 10


def test_namespaces_survive_uninstalling_the_infra_chart(example):
    namespaces = [m.obj for c in example.charts for m in c.manifests if m.obj["kind"] == "Namespace"]
    assert namespaces, "the infra chart has Namespace objects"
    for namespace in namespaces:
        assert namespace["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
