"""generator/load/glance.py: the names the profiles declare, read cheaply and never reported."""

from __future__ import annotations

import pytest
from conftest import PROFILES

from mpigen.load.glance import ClusterGlance, FleetGlance, JobGlance, glance

pytestmark = pytest.mark.usefixtures("parse_every_time")  # tests of loading parse each file (conftest.ParseMemo)


def test_the_example_fleet_at_a_glance():
    fleet = glance([PROFILES])
    assert [c.name for c in fleet.clusters] == ["cpu-lab", "dgx-lab", "dgx-pod", "gb200-rack", "h100-dra",
                                                "kai-lab", "kueue-lab", "netapp-lab", "roce-lab", "volcano-lab"]
    assert ClusterGlance("dgx-lab", ("dgx", "cpu"), "charts") in fleet.clusters
    assert JobGlance("resnet50-dgx", "dgx-lab", "dgx") in fleet.jobs and len(fleet.jobs) == 15
    assert fleet.gitops_paths == {"charts"}  # the default path, where no cluster writes one


def test_what_cannot_be_read_is_skipped_and_yaml_1_2_is_read_as_profiles_are(tmp_path):
    (tmp_path / "bad.yaml").write_text("kind: Job\nname: [x\n", encoding="utf-8")
    (tmp_path / "two.yaml").write_text("kind: Job\nname: a\n---\nkind: Job\nname: b\n", encoding="utf-8")
    (tmp_path / "bomb.yaml").write_text("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)), encoding="utf-8")
    # libyaml (YAML 1.1) refuses the URL in a flow mapping; the profile loader takes it, and so does the glance
    (tmp_path / "c.yaml").write_text("kind: Cluster\nname: c\nnodePools: [{name: p}, 3]\n"
                                     "gitops: {tool: flux, repoURL: https://x.example/r.git, path: deploy}\n",
                                     encoding="utf-8")
    fleet = glance([tmp_path, tmp_path / "missing"])
    assert fleet.clusters == (ClusterGlance("c", ("p",), "deploy"),) and fleet.jobs == ()


def test_only_the_kinds_asked_for_are_parsed(tmp_path):
    (tmp_path / "flow.yaml").write_text("{kind: Cluster, name: flow, gitops: {tool: argocd}}\n", encoding="utf-8")
    (tmp_path / "job.yaml").write_text("kind: Job\nname: j\ncluster: flow\n", encoding="utf-8")
    clusters = glance([tmp_path], frozenset({"Cluster"}))
    assert clusters == FleetGlance((ClusterGlance("flow", (), "charts"),), ())  # no `kind:` line: parsed to know
    assert glance([tmp_path]).jobs == (JobGlance("j", "flow", ""),)
