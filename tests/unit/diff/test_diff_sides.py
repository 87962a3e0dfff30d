"""generator/diff/sides.py: each side as units keyed by cluster and path, the GitOps bootstrap files among them."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import CHARTS, PROFILES

from mpigen.commands.pipeline import compile_profiles
from mpigen.diff.compare import compare
from mpigen.diff.sides import compiled_side, rendered_side
from mpigen.objects import chartfiles
from mpigen.objects.manifest import Manifest
from mpigen.package import Chart


@pytest.fixture(scope="module")
def committed():
    """The example fleet's committed charts and what its profiles compile to, each read as a side."""
    result = compile_profiles([PROFILES], committed_in=CHARTS)
    assert result.ok
    return rendered_side(CHARTS, None), compiled_side(result.charts)


def test_the_committed_example_fleet_reads_the_same_from_disk_and_from_the_profiles(committed):
    (old, old_problems), (new, new_problems) = committed
    assert old_problems == [] and new_problems == []
    assert compare(old, new) == []
    assert old.keys() == new.keys()
    # Every chart and every bootstrap file, each under its own cluster.
    assert ("dgx-lab", "dgx-lab/infra") in new and ("cpu-lab", "cpu-lab/jobs/cpu-pi") in new
    bootstrap = sorted(path for (_, path), unit in new.items() if unit.bootstrap)
    assert bootstrap == sorted(p.relative_to(CHARTS).as_posix() for p in CHARTS.glob("*/bootstrap/*/*"))
    assert all(cluster == path.split("/")[0] for cluster, path in new)


def test_bootstrap_manifests_are_objects_and_lua_is_text(committed):
    (old, _), (new, _) = committed
    for side in (old, new):
        root = side["cpu-lab", "cpu-lab/bootstrap/root/root-sync.yaml"]
        assert [o["kind"] for o in root.objects] == ["GitRepository", "Kustomization"]
        lua = side["dgx-lab", "dgx-lab/bootstrap/argocd/mpijob-health.lua"]
        assert lua.objects is None and lua.text.startswith("-- ")
    assert new["dgx-lab", "dgx-lab/jobs/pi"].annotations[chartfiles.NAMING] == "content-hash"
    assert old["dgx-lab", "dgx-lab/jobs/pi"].annotations == new["dgx-lab", "dgx-lab/jobs/pi"].annotations


def test_a_chart_s_cluster_is_its_annotation_else_its_first_folder(tmp_path):
    charts = tmp_path / "charts"
    shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", charts / "east" / "jobs" / "pi")
    shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", charts / "west" / "jobs" / "pi")
    chart_yaml = charts / "west" / "jobs" / "pi" / chartfiles.CHART_YAML
    chart_yaml.write_text(chart_yaml.read_text(encoding="utf-8").replace("mpigen/source", "was/source")
                          .replace("  mpigen/cluster: dgx-lab\n", ""), encoding="utf-8")
    side, problems = rendered_side(charts, None)
    assert sorted(side) == [("dgx-lab", "east/jobs/pi"), ("west", "west/jobs/pi")]
    assert problems == [f"{charts}/west/jobs/pi: not compiled by mpigen and no helm to render it; left out"]


def test_a_bootstrap_file_that_does_not_parse_or_cannot_be_read_is_named(tmp_path):
    charts = tmp_path / "charts"
    root = charts / "east" / "bootstrap" / "root"
    root.mkdir(parents=True)
    (root / "root-sync.yaml").write_text("kind: [\n", encoding="utf-8")
    (root / "fifo.yaml").unlink(missing_ok=True)
    os.mkfifo(root / "fifo.yaml")
    (root / "out.yaml").symlink_to(tmp_path)
    side, problems = rendered_side(charts, None)
    unit = side["east", "east/bootstrap/root/root-sync.yaml"]
    assert unit.objects is None and unit.text == "kind: [\n"
    assert ("east", "east/bootstrap/root/fifo.yaml") not in side
    assert any("east/bootstrap/root/root-sync.yaml: compared as text: it does not parse" in p for p in problems)
    assert any(p.startswith("east/bootstrap/root/fifo.yaml: is not a regular file") for p in problems)
    assert any("out.yaml: is a link to" in p for p in problems), problems


def test_the_compiled_side_carries_each_chart_s_annotations_and_held_back_job_object():
    chart_yaml = ("apiVersion: v2\nname: bert\nannotations:\n  mpigen/source: j.yaml\n  mpigen/cluster: east\n"
                  "  mpigen/naming: stable\n")
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "bert", "namespace": "ml"}}
    held = {**job, "spec": {"slotsPerWorker": 2}}
    chart = Chart("east/jobs/bert", None, ((chartfiles.CHART_YAML, chart_yaml),), (Manifest("mpijob.yaml", job),),
                  held_back=Manifest("mpijob.yaml", held))
    side, problems = compiled_side([chart])
    unit = side["east", "east/jobs/bert"]
    assert problems == [] and unit.objects == (job,) and unit.held_back == held
    assert unit.annotations == {"mpigen/source": "j.yaml", "mpigen/cluster": "east", "mpigen/naming": "stable"}
