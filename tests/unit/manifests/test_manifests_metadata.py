"""The job profile's `imagePullPolicy`, `labels` and `annotations` (generator/manifests/mpijob.py, shared by the
Volcano Job and the TrainJob's runtime), on the job object and the pods of all three backends.

Kubernetes' facts (k8s.io/api core/v1 Container): `imagePullPolicy` left out defaults to Always for a `:latest` or
untagged image and to IfNotPresent otherwise; a pod template's labels and annotations are the pods' (mpi-operator,
Volcano and JobSet copy them onto every pod they create, adding their own keys).
"""

from __future__ import annotations

from typing import Any

from conftest import PROFILES
from test_manifests_node_placement import _pod_specs

from mpigen.commands.pipeline import compile_profiles
from mpigen.manifests import build_infra, build_job, infra_chart_ref, job_chart_ref, job_object
from mpigen.model import Job

JOBS = {"resnet50-dgx": "jobs/resnet50-dgx.yaml", "allreduce-vcjob": "jobs/allreduce-vcjob.yaml",
        "resnet50-trainjob": "jobs/resnet50-trainjob.yaml"}
ADDED = ("imagePullPolicy: Always\n"
         "labels: {example.com/team: vision, cost-centre: ml-42}\n"
         "annotations: {example.com/owner: 'ada@example.com', example.com/run: '{{ .Release.Name }}'}\n")
LABELS = {"example.com/team": "vision", "cost-centre": "ml-42"}
ANNOTATIONS = {"example.com/owner": "ada@example.com", "example.com/run": "{{ .Release.Name }}"}


def _jobs(profiles_copy) -> dict[str, Job]:
    edits = {path: (PROFILES / path).read_text(encoding="utf-8") + ADDED for path in JOBS.values()}
    result = compile_profiles([profiles_copy(edits)])
    assert result.ok, [d.format() for d in result.diagnostics]
    return {job.name: job for job in result.fleet.jobs if job.name in JOBS}


def _templates(job: Job) -> dict[str, dict[str, Any]]:
    """The launcher's and the worker's pod templates (metadata and spec)."""
    obj = job_object(build_job(job, job_chart_ref(job))).obj
    if obj["kind"] == "MPIJob":
        return {role.lower(): spec["template"] for role, spec in obj["spec"]["mpiReplicaSpecs"].items()}
    if obj["kind"] == "Job":
        tasks = {task["name"]: task["template"] for task in obj["spec"]["tasks"]}
        return {"launcher": tasks["mpimaster"], "worker": tasks["mpiworker"]}
    (runtime,) = [m.obj for m in build_infra(job.cluster, infra_chart_ref(job.cluster), (job,))
                  if m.obj["kind"] == "TrainingRuntime"]
    rjobs = {r["name"]: r["template"]["spec"]["template"] for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]}
    return {"launcher": rjobs["launcher"], "worker": rjobs["node"]}


def test_the_pull_policy_reaches_every_container_of_every_backend(profiles_copy):
    for name, job in _jobs(profiles_copy).items():
        for role, spec in _pod_specs(job).items():
            assert [c["imagePullPolicy"] for c in spec["containers"]] == ["Always"], (name, role)


def test_no_pull_policy_leaves_kubernetes_default(example):
    for name in JOBS:
        job = next(j for j in example.fleet.jobs if j.name == name)
        for spec in _pod_specs(job).values():
            assert all("imagePullPolicy" not in c for c in spec["containers"]), name


def test_labels_and_annotations_reach_the_job_object_and_its_pods(profiles_copy):
    for name, job in _jobs(profiles_copy).items():
        obj = job_object(build_job(job, job_chart_ref(job))).obj
        meta = obj["metadata"]
        assert LABELS.items() <= meta["labels"].items(), name
        assert meta["labels"]["app.kubernetes.io/instance"] == name, name  # mpigen's own stay
        assert ANNOTATIONS.items() <= meta["annotations"].items(), name
        assert meta["annotations"]["argocd.argoproj.io/sync-options"] == "SkipDryRunOnMissingResource=true", name
        for role, template in _templates(job).items():
            assert LABELS.items() <= template["metadata"]["labels"].items(), (name, role)
            assert ANNOTATIONS.items() <= template["metadata"]["annotations"].items(), (name, role)


def test_kueues_labels_stay_beside_the_profiles(example):
    """Kueue admits an MPIJob through the LocalQueue its `kueue.x-k8s.io/queue-name` label names; the example
    vision-resnet50 carries a team label and pins its pull policy."""
    job = next(j for j in example.fleet.jobs if j.name == "vision-resnet50")
    labels = job_object(build_job(job, job_chart_ref(job))).obj["metadata"]["labels"]
    assert labels["example.com/team"] == "vision" and labels["kueue.x-k8s.io/queue-name"] == "vision"
    assert all(c["imagePullPolicy"] == "IfNotPresent" for spec in _pod_specs(job).values() for c in spec["containers"])
    assert labels["kueue.x-k8s.io/priority-class"] == "production"
