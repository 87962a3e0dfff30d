"""Naming policy (generator/manifests/naming.py): an edited run is a new MPIJob, and everything follows its name.

mpi-operator never applies a spec edit to an MPIJob that already started (docs/facts.md section 5). Under the
default `content-hash` policy the MPIJob is `<job>-<7 hex>`; the tests here say which edits must rename
it (anything the run is made of) and which must not (suspend, comments, other jobs, pool sizes), then
follow one edit end to end through `mpigen render`, real Helm and `mpigen diff`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PROFILES, invoke_mpigen, is_run_of, run_helm, run_mpigen

from mpigen.commands.pipeline import CompileResult, compile_profiles


def _compile(root: Path) -> CompileResult:
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def _objects(result: CompileResult) -> list[dict[str, Any]]:
    return [m.obj for chart in result.charts for m in chart.manifests]


def _run(result: CompileResult, job: str) -> dict[str, Any]:
    (mpijob,) = [o for o in _objects(result) if o["metadata"]["labels"]["app.kubernetes.io/instance"] == job and (
        o["kind"] in ("MPIJob", "TrainJob") or o["apiVersion"] == "batch.volcano.sh/v1alpha1")]  # any backend's job object
    return mpijob


def _run_name(result: CompileResult, job: str) -> str:
    return _run(result, job)["metadata"]["name"]


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} is not in the profile exactly once"
    return text.replace(old, new)


def _profile(name: str) -> str:
    return (PROFILES / "jobs" / f"{name}.yaml").read_text(encoding="utf-8")


# --- the name itself -------------------------------------------------------------------------------------


def test_every_example_job_is_named_job_dash_seven_hex(example):
    runs = {job.name: _run_name(example, job.name) for job in example.fleet.jobs}
    assert set(runs) == {"cpu-pi", "pi", "resnet50-dgx", "resnet50-trainjob", "tensorflow-benchmarks", "netapp-resnet50",
                         "vision-resnet50", "language-bert", "volcano-allreduce", "allreduce-vcjob", "kueue-pi",
                         "llm-pretrain", "mnnvl-allreduce", "kai-allreduce", "kai-research"}
    for job, run in runs.items():
        assert is_run_of(run, job), run
    assert len(set(runs.values())) == len(runs)


def test_stable_naming_keeps_the_plain_name(profiles_copy):
    result = _compile(profiles_copy({"jobs/pi.yaml": _profile("pi") + "naming: stable\n"}))
    assert _run_name(result, "pi") == "pi"
    configmaps = [o["metadata"]["name"] for o in _objects(result) if o["kind"] == "ConfigMap"
                  and o["metadata"].get("labels", {}).get("app.kubernetes.io/instance") == "pi"]
    assert configmaps == ["pi-hostfile"]


def test_the_name_is_the_same_in_another_process(example, tmp_path):
    # Python's hash() is salted per process; the digest must not depend on it (nor on dict order).
    out = run_mpigen("render", PROFILES, "--manifests", cwd=tmp_path)  # no charts folder: the names as compiled
    assert out.returncode == 0, out.stderr
    names = {d["metadata"]["name"] for d in yaml.safe_load_all(out.stdout)
             if d and (d["kind"] in ("MPIJob", "TrainJob") or d["apiVersion"] == "batch.volcano.sh/v1alpha1")}
    # The acceptance jobs' objects are named after the jobs (`naming: stable`).
    assert names == {_run_name(example, job.name) for job in example.fleet.jobs} | {
        job.name for job in example.fleet.acceptance}


# --- which edits rename the run, and which do not --------------------------------------------------------

RENAMING_EDITS = {
    "image": ("image: nvcr.io/nvidia/tensorflow:24.03-tf2-py3", "image: nvcr.io/nvidia/tensorflow:24.04-tf2-py3"),
    "size": ("totalGpus: 16", "totalGpus: 24"),
    "program": ("--num_iter=500", "--num_iter=501"),
    "env": ("NCCL_DEBUG: INFO", "NCCL_DEBUG: WARN"),
    "namespace": ("namespace: ml-training", "namespace: hpc"),
    "volume": ("readOnly: true", "readOnly: false"),
    "shm": ("shmSize: 64Gi", "shmSize: 32Gi"),
    "backoff": ("backoffLimit: 2", "backoffLimit: 3"),
}


@pytest.mark.parametrize("edit", sorted(RENAMING_EDITS))
def test_an_edit_to_the_run_renames_it(profiles_copy, example, edit):
    old, new = RENAMING_EDITS[edit]
    result = _compile(profiles_copy({"jobs/resnet50-dgx.yaml": _edit(_profile("resnet50-dgx"), old, new)}))
    before, after = _run_name(example, "resnet50-dgx"), _run_name(result, "resnet50-dgx")
    assert is_run_of(after, "resnet50-dgx") and after != before
    # Only the edited job: the others keep their names.
    for job in ("pi", "tensorflow-benchmarks", "cpu-pi"):
        assert _run_name(result, job) == _run_name(example, job)


def test_a_hardware_change_that_reaches_the_pods_renames_the_run(profiles_copy, example):
    # RoCE instead of InfiniBand: the NICs' link type changes NCCL_IB_GID_INDEX and the device plugin's VFs.
    hardware = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
    result = _compile(profiles_copy({"hardware/dgx-1.yaml": hardware.replace("linkType: InfiniBand",
                                                                             "linkType: Ethernet")}))
    assert _run_name(result, "resnet50-dgx") != _run_name(example, "resnet50-dgx")
    assert _run_name(result, "pi") == _run_name(example, "pi")  # a CPU job: nothing of dgx-1 reaches it


KEEPING_EDITS = {
    "comment": ("# Two full DGX-1 nodes", "# Still two full DGX-1 nodes"),
    "key order": ("cluster: dgx-lab\npool: dgx\n", "pool: dgx\ncluster: dgx-lab\n"),
    "same size said otherwise": ("totalGpus: 16", "workers: 2"),
    "description": ("kind: Job\n", "kind: Job\ndescription: ResNet-50 on two DGX-1\n"),
    "suspend": ("  cleanPodPolicy: Running\n", "  cleanPodPolicy: Running\n  suspend: true\n"),
}


@pytest.mark.parametrize("edit", sorted(KEEPING_EDITS))
def test_an_edit_that_is_not_the_run_keeps_the_name(profiles_copy, example, edit):
    old, new = KEEPING_EDITS[edit]
    result = _compile(profiles_copy({"jobs/resnet50-dgx.yaml": _edit(_profile("resnet50-dgx"), old, new)}))
    assert _run_name(result, "resnet50-dgx") == _run_name(example, "resnet50-dgx")


def test_suspend_and_resume_act_on_the_same_mpijob(profiles_copy, example):
    suspended = _edit(_profile("resnet50-dgx"), "  cleanPodPolicy: Running\n",
                      "  cleanPodPolicy: Running\n  suspend: true\n")
    result = _compile(profiles_copy({"jobs/resnet50-dgx.yaml": suspended}))
    mpijob, original = _run(result, "resnet50-dgx"), _run(example, "resnet50-dgx")
    assert mpijob["metadata"]["name"] == original["metadata"]["name"]
    assert (mpijob["spec"]["runPolicy"]["suspend"], original["spec"]["runPolicy"]["suspend"]) == (True, False)


def test_a_bigger_pool_does_not_rename_a_job_it_does_not_change(profiles_copy, example):
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    assert "    nodes: 4\n" in cluster
    result = _compile(profiles_copy({"clusters/dgx-lab.yaml": cluster.replace("    nodes: 4\n", "    nodes: 6\n")}))
    assert _run_name(result, "resnet50-dgx") == _run_name(example, "resnet50-dgx")


# --- one edit, end to end: render, Helm, every reference, diff --------------------------------------------


def _helm_objects(helm: Path, chart: Path, release: str, namespace: str) -> list[dict[str, Any]]:
    out = run_helm(helm, "template", release, chart, "--namespace", namespace).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def _one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


def test_an_edited_job_is_a_new_mpijob_with_every_reference_following(helm, profiles_copy, tmp_path):
    root = profiles_copy()
    repo = root.parent
    charts = repo / "charts"
    chart = charts / "dgx-lab" / "jobs" / "resnet50-dgx"
    assert invoke_mpigen("render", root, "-o", charts).returncode == 0
    before = _one(_helm_objects(helm, chart, "resnet50-dgx", "ml-training"), "MPIJob")["metadata"]["name"]

    job = root / "jobs" / "resnet50-dgx.yaml"
    job.write_text(_edit(job.read_text(encoding="utf-8"), "24.03-tf2-py3", "24.05-tf2-py3"), encoding="utf-8")
    diff = invoke_mpigen("diff", root, "-o", charts, "--exit-code")
    assert diff.returncode == 1
    rendered = invoke_mpigen("render", root, "-o", charts)
    assert rendered.returncode == 0, rendered.stderr

    objects = _helm_objects(helm, chart, "resnet50-dgx", "ml-training")
    mpijob, configmap = _one(objects, "MPIJob"), _one(objects, "ConfigMap")
    run = mpijob["metadata"]["name"]
    assert is_run_of(run, "resnet50-dgx") and run != before

    # The old MPIJob is gone from the release's manifest, which is what makes Helm (Flux) delete it on
    # upgrade and Argo CD prune it; and no file of the charts names it any more.
    for path in charts.rglob("*"):
        if path.is_file():
            assert before not in path.read_text(encoding="utf-8"), f"{path} still names the old run {before}"
    # `mpigen diff` before the render showed the same: the new run replacing the old, object by object.
    assert f"replaced: kubeflow.org/v2beta1 MPIJob ml-training/{before} -> {run}\n" in diff.stdout
    assert f"replaced: v1 ConfigMap ml-training/{before}-hostfile -> {run}-hostfile\n" in diff.stdout

    # Every reference follows the new name: the hostfile ConfigMap, the launcher's volume of it, the host names
    # (`<pod>.<service>.<namespace>.svc`, where mpi-operator names the service after the MPIJob).
    assert configmap["metadata"]["name"] == f"{run}-hostfile"
    launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert [v["configMap"]["name"] for v in launcher["volumes"] if "configMap" in v] == [f"{run}-hostfile"]
    assert configmap["data"]["hostfile"] == (f"{run}-worker-0.{run}.ml-training.svc slots=8\n"
                                             f"{run}-worker-1.{run}.ml-training.svc slots=8\n")
    # The networks annotation still names the rails' NADs, which the infra chart defines in this namespace, with
    # the device-plugin resource the worker asks for.
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    networks = json.loads(worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])
    infra = _helm_objects(helm, charts / "dgx-lab" / "infra", "dgx-lab-infra", "default")
    nads = {(n["metadata"]["namespace"], n["metadata"]["name"]): n for n in infra
            if n["kind"] == "NetworkAttachmentDefinition"}
    limits = worker["spec"]["containers"][0]["resources"]["limits"]
    assert [n["name"] for n in networks] == ["rail0", "rail1", "rail2", "rail3"]
    for network in networks:
        nad = nads[(network["namespace"], network["name"])]
        assert limits[nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"]] == 1
    # The chart, its release and its Argo CD Application keep their names: only the run is new.
    apps = (charts / "dgx-lab" / "bootstrap" / "apps" / "applications.yaml").read_text(encoding="utf-8")
    assert "path: charts/dgx-lab/jobs/resnet50-dgx\n" in apps and "releaseName: resnet50-dgx\n" in apps
    assert re.search(r"prune: true", apps)


def test_a_renamed_job_prunes_its_old_chart(profiles_copy):
    root = profiles_copy()
    charts = root.parent / "charts"
    assert invoke_mpigen("render", root, "-o", charts).returncode == 0
    old = root / "jobs" / "pi.yaml"
    (root / "jobs" / "pi-v2.yaml").write_text(_edit(old.read_text(encoding="utf-8"), "name: pi\n", "name: pi-v2\n"),
                                               encoding="utf-8")
    old.unlink()
    rendered = invoke_mpigen("render", root, "-o", charts)
    assert rendered.returncode == 0, rendered.stderr
    jobs = charts / "dgx-lab" / "jobs"
    assert sorted(p.name for p in jobs.iterdir()) == ["pi-v2", "resnet50-dgx", "resnet50-trainjob", "tensorflow-benchmarks"]
    apps = (charts / "dgx-lab" / "bootstrap" / "apps" / "applications.yaml").read_text(encoding="utf-8")
    assert "name: dgx-lab-pi-v2\n" in apps and "name: dgx-lab-pi\n" not in apps


def test_the_readme_tour_shows_the_example_jobs_real_name():
    """The name the committed chart gives the run: what `make render` keeps (a run keeps its committed name)."""
    readme = (PROFILES.parent / "README.md").read_text(encoding="utf-8")
    chart = yaml.safe_load((PROFILES.parent / "charts" / "dgx-lab" / "jobs" / "resnet50-dgx" / "Chart.yaml").read_text())
    run = chart["annotations"]["mpigen/mpijob"]
    assert f"The MPIJob is `{run}`" in readme
    assert f"{run}-worker-2.{run}.ml-training.svc slots=8" in readme
