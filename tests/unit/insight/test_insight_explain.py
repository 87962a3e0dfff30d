"""`mpigen explain` (generator/insight/explain.py): its values are the charts' own, and each origin points at the
profile line that sets the value, or names the default or rule it follows."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES, TRAIN_JOB
from ruamel.yaml import YAML

from mpigen.commands.pipeline import CompileResult, check_profiles
from mpigen.insight.explain import Explanation, explain_job, rank_bindings
from mpigen.insight.report import explain_json, explain_text
from mpigen.package.stream import manifest_stream


def _explain(root: Path, name: str) -> Explanation:
    result = check_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    return explain_job(next(j for j in result.fleet.jobs if j.name == name), result.documents)


@pytest.fixture(scope="module")
def resnet() -> Explanation:
    return _explain(PROFILES, "resnet50-dgx")


@pytest.fixture(scope="module")
def objects(example: CompileResult) -> list[dict[str, Any]]:
    return [o for o in YAML(typ="safe").load_all(manifest_stream(example.charts)) if o]


def _facts(explanation: Explanation, section: str) -> dict[str, str]:
    return {fact.name: fact.value for fact in explanation.facts if fact.section == section}


def _of(objects: list[dict[str, Any]], kind: str, prefix: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"].startswith(prefix))


def test_names_env_and_command_are_the_charts_own(resnet, objects):
    mpijob = _of(objects, "MPIJob", "resnet50-dgx-")
    assert _facts(resnet, "naming")["MPIJob name"] == mpijob["metadata"]["name"]
    specs = mpijob["spec"]["mpiReplicaSpecs"]
    worker = specs["Worker"]["template"]["spec"]["containers"][0]
    assert _facts(resnet, "environment") == {var["name"]: var["value"] for var in worker["env"]}
    launcher = specs["Launcher"]["template"]["spec"]["containers"][0]
    assert shlex.split(_facts(resnet, "mpi")["launcher command"]) == [
        *launcher.get("command", []), *launcher.get("args", [])]
    limits = worker["resources"]["limits"]
    resources = _facts(resnet, "worker resources")
    assert {name: resources[name] for name in limits} == {name: str(value) for name, value in limits.items()}


def test_each_rank_has_the_rankfile_line_the_chart_carries(resnet, objects):
    configmap = _of(objects, "ConfigMap", "resnet50-dgx-")
    assert [rank.rankfile_line for rank in resnet.ranks] == configmap["data"]["rankfile"].splitlines()


def test_a_rank_drives_the_gpu_of_its_local_rank_through_the_nic_beside_it(resnet):
    # profiles/hardware/dgx-1.yaml: ib2 (mlx5_2) names GPUs 4 and 5 and sits on NUMA node 1; dgx-lab's rail2 runs
    # over ib2. Rank 13 is worker 1's local rank 5.
    rank = resnet.ranks[13]
    assert (rank.worker, rank.local_rank, rank.gpu, rank.nic, rank.hca, rank.rail) == (1, 5, 5, "ib2", "mlx5_2",
                                                                                         "rail2")
    assert rank.rankfile_line.endswith(" slot=1:0-19"), "socket 1: ib2's NUMA node; 20 cores a socket"
    assert len(resnet.ranks) == 16


def test_profile_origins_point_at_the_line_that_sets_the_value(resnet):
    checked = 0
    for fact in resnet.facts:
        if fact.origin_kind != "profile":
            continue
        match = re.match(r"^(\S+):([0-9]+): (.*)$", fact.origin)
        path, line, what = match.group(1), int(match.group(2)), match.group(3)
        text = Path(path).read_text(encoding="utf-8").splitlines()[line - 1]
        named = re.match(r"^(?:rail|NIC) ([^ ,;]+)", what)
        key = named.group(1) if named else what.split(",")[0].split(":")[0].split(" ")[0].split(".")[-1]
        assert key in text, (fact, text)
        checked += 1
    assert checked >= 12


def test_every_fact_says_where_it_comes_from(resnet):
    kinds = {fact.origin_kind for fact in resnet.facts}
    assert kinds == {"profile", "default", "rule"}
    assert all(fact.origin for fact in resnet.facts)
    hca = next(f for f in resnet.facts if f.name == "NCCL_IB_HCA")
    assert hca.origin_kind == "rule" and "only their VFs are visible" in hca.origin


def test_a_worker_with_part_of_a_node_has_no_known_gpu_or_nic(profiles_copy):
    explanation = _explain(profiles_copy({"jobs/train.yaml": TRAIN_JOB + "gpusPerWorker: 2\nworkers: 2\n"}), "train")
    assert all(rank.gpu is None and rank.nic is None and rank.rankfile_line is None for rank in explanation.ranks)
    assert "the GPU device plugin chooses which" in explanation.binding_rule
    placement = next(f for f in explanation.facts if f.name == "placement")
    assert placement.value == "--map-by slot --bind-to none" and "of a node's 8 GPUs" in placement.origin


def test_a_profile_env_value_that_overrides_a_derived_one_names_its_line(profiles_copy):
    explanation = _explain(profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 8\nenv:\n  NCCL_IB_HCA: mlx5_0\n"}),
                           "train")
    hca = next(f for f in explanation.facts if f.name == "NCCL_IB_HCA")
    assert hca.value == "mlx5_0" and hca.origin_kind == "profile"
    assert re.search(r"train\.yaml:10: env\.NCCL_IB_HCA \(overrides the derived 'mlx5'\)$", hca.origin), hca.origin


def test_an_origins_kind_does_not_depend_on_the_path(tmp_path, resnet):
    # Profiles under a folder whose name has a space: the same facts, each with the same kind of origin.
    root = tmp_path / "my fleet: v2" / "profiles"
    shutil.copytree(PROFILES, root)
    moved = _explain(root, "resnet50-dgx")
    assert [(f.name, f.origin_kind) for f in moved.facts] == [(f.name, f.origin_kind) for f in resnet.facts]
    workers = next(f for f in moved.facts if f.name == "workers")
    assert workers.origin.startswith(f"{root / 'jobs/resnet50-dgx.yaml'}:11: totalGpus 16")


def test_a_gpu_two_nics_name_goes_through_the_first(profiles_copy):
    text = (PROFILES / "hardware/dgx-1.yaml").read_text(encoding="utf-8")
    explanation = _explain(profiles_copy({"hardware/dgx-1.yaml": text.replace("gpus: [2, 3]", "gpus: [0, 1]")}),
                           "resnet50-dgx")
    assert [(r.gpu, r.nic) for r in explanation.ranks[:4]] == [(0, "ib0"), (1, "ib0"), (2, None), (3, None)]


def test_node_placement_says_which_taints_each_toleration_answers(profiles_copy):
    """Each pod placed on a tainted pool tolerates its taints (a pod is not scheduled on a node with a NoSchedule taint
    it does not tolerate); explain names the cluster profile's line of each pool's `taints`, and the launcher's pool."""
    lab = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    cpu = "  - name: cpu\n    hardware: cpu-node\n    nodes: 8\n"
    lab = lab.replace(cpu, cpu + "    taints: [{key: example.com/batch, effect: NoSchedule}]\n")
    lab = lab.replace("    nodes: 4\n", "    nodes: 4\n    taints: [{key: nvidia.com/gpu, value: present, effect: "
                      "NoSchedule}]\n", 1) + "launcherPool: cpu\n"
    root = profiles_copy({"clusters/dgx-lab.yaml": lab})
    explanation = _explain(root, "resnet50-dgx")
    facts = {fact.name: fact for fact in explanation.facts if fact.section == "nodes"}
    assert facts["worker tolerations"].value == "nvidia.com/gpu=present:NoSchedule (Equal)"
    assert facts["worker tolerations"].origin.startswith(f"{root}/clusters/dgx-lab.yaml:16: taints of pool dgx")
    assert facts["launcher node selector"].value == "node.kubernetes.io/instance-type=cpu-2s64c"
    assert facts["launcher node selector"].origin.startswith(f"{root}/clusters/dgx-lab.yaml:{len(lab.splitlines())}: "
                                                             "launcherPool cpu")
    assert facts["launcher tolerations"].value == "example.com/batch:NoSchedule (Exists)"
    assert facts["launcher tolerations"].origin.startswith(f"{root}/clusters/dgx-lab.yaml:20: taints of pool cpu")


def test_a_rails_network_is_named_as_its_provider_names_it(objects):
    # sriov-network-operator renders each SriovNetwork's NetworkAttachmentDefinition under the SriovNetwork's own
    # name in `spec.networkNamespace`; mpigen names them `<rail>-<namespace>`, and explain must name that one, as
    # the workers' Multus annotation does, not the sriov-device-plugin's `<rail>`.
    explained = _explain(PROFILES, "vision-resnet50")
    value = _facts(explained, "networks")["rail rail0"]
    assert value.startswith("NetworkAttachmentDefinition team-vision/rail0-team-vision as interface rail0"), value
    network = _of(objects, "SriovIBNetwork", "rail0-team-vision")
    assert network["spec"]["networkNamespace"] == "team-vision"


def test_a_job_of_more_ranks_than_shown_lists_its_first_and_last_and_says_what_it_left_out(profiles_copy):
    # 3 CPU workers with a node's 64 cores each: 192 ranks, past the 128 explain lists. Ranks are made for those
    # shown only, so a job of 6,400,000 costs what this one does.
    explanation = _explain(profiles_copy({"jobs/train.yaml": TRAIN_JOB.replace("pool: dgx", "pool: cpu")
                                          + "workers: 3\n"}), "train")
    assert [rank.rank for rank in explanation.ranks] == [*range(64), *range(128, 192)]
    assert [(rank.worker, rank.local_rank) for rank in explanation.ranks[63:65]] == [(0, 63), (2, 0)]
    assert (explanation.rank_count, explanation.ranks_omitted) == (192, 64)
    text = explain_text(explanation)
    assert "  63: worker 0, local rank 63, GPU -, NIC -, rail -\n  ... 64 more ranks (64 to 127), not listed: rank r " \
        "is local rank r mod 64 of worker r div 64 (ranks fill the workers in hostfile order), and local rank i of " \
        "every worker has the GPU, NIC, rail and socket of worker 0's local rank i\n  128: worker 2, local rank 0" in text
    data = json.loads(explain_json(explanation))
    assert (data["rank_count"], data["ranks_omitted"], len(data["ranks"])) == (192, 64, 128)
    assert data["format"] == 2, "a list cut where format 1 listed it whole"


def test_a_job_within_the_bound_lists_every_rank(resnet):
    assert (resnet.rank_count, resnet.ranks_omitted, len(resnet.ranks)) == (16, 0, 16)
    assert "more ranks" not in explain_text(resnet)


def test_a_rank_is_the_same_asked_alone_or_with_all_the_others(example):
    job = next(j for j in example.fleet.jobs if j.name == "resnet50-dgx")
    every = rank_bindings(job, "run", range(16))
    assert rank_bindings(job, "run", [13, 2]) == (every[13], every[2])


def test_a_kueue_job_is_told_the_least_wait_for_pods_ready_timeout_it_needs():
    """language-bert: 6 nodes pull the 20 GB image at 100 MB/s each (200 s), the sshd probe (12 s), then the launcher
    (created once the workers are ready: mpi-operator's WaitForWorkersReady) on a node of its own (200 s)."""
    facts = _facts(_explain(PROFILES, "language-bert"), "scheduling")
    assert facts["least waitForPodsReady timeout"] == "412 s"
    assert "least waitForPodsReady timeout" not in _facts(_explain(PROFILES, "volcano-allreduce"), "scheduling")
