"""generator/manifests/node_placement.py: node selectors and the tolerations of node pools' taints, on the pods of
all three backends.

Kubernetes' facts (k8s.io/api core/v1 Taint and Toleration, the scheduler's TaintToleration plugin): a pod is not
scheduled on a node with a `NoSchedule` taint it does not tolerate, and is evicted from one with a `NoExecute` taint
it does not tolerate; a toleration matches a taint of the same key and effect with `operator: Equal` and the same
value, or with `operator: Exists` whatever the value. Kueue's fact (its ResourceFlavor `nodeLabels`): on admission
Kueue adds the flavor's node labels to the pod's node selector, so a launcher admitted on a tainted pool's flavor
runs there.
"""

from __future__ import annotations

from typing import Any

from conftest import PROFILES

from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests import build_infra, build_job, infra_chart_ref, job_chart_ref, job_object
from mpigen.manifests.run_name import mpijob_name
from mpigen.model import Job

DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
VOLCANO_LAB = (PROFILES / "clusters" / "volcano-lab.yaml").read_text(encoding="utf-8")
DGX_POOL = "  - name: dgx\n    hardware: dgx-1\n"
CPU_POOL = "  - name: cpu\n    hardware: cpu-node\n    nodes: 8\n"
GPU_TAINTS = ("    taints:\n"
              "      - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
              "      - {key: dedicated, effect: NoExecute}\n")
GPU_TOLERATIONS = [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
                   {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]
CPU_TOLERATIONS = [{"key": "example.com/batch", "operator": "Equal", "value": "launchers", "effect": "NoSchedule"}]


def _tainted(cluster: str) -> str:
    assert DGX_POOL in cluster
    return cluster.replace(DGX_POOL, DGX_POOL + GPU_TAINTS)


def _compile(profiles_copy, edits: dict[str, str]) -> CompileResult:
    result = compile_profiles([profiles_copy(edits)])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def _job(result: CompileResult, name: str) -> Job:
    return next(job for job in result.fleet.jobs if job.name == name)


def _pod_specs(job: Job) -> dict[str, dict[str, Any]]:
    """{'launcher': ..., 'worker': ...}: the pod specs of the job's object (a TrainJob's are in its runtime)."""
    obj = job_object(build_job(job, job_chart_ref(job))).obj
    if obj["kind"] == "MPIJob":
        replicas = obj["spec"]["mpiReplicaSpecs"]
        return {"launcher": replicas["Launcher"]["template"]["spec"], "worker": replicas["Worker"]["template"]["spec"]}
    if obj["kind"] == "Job":  # Volcano
        tasks = {task["name"]: task["template"]["spec"] for task in obj["spec"]["tasks"]}
        return {"launcher": tasks["mpimaster"], "worker": tasks["mpiworker"]}
    (runtime,) = [m.obj for m in build_infra(job.cluster, infra_chart_ref(job.cluster), (job,))
                  if m.obj["kind"] == "TrainingRuntime"]
    rjobs = {r["name"]: r["template"]["spec"]["template"]["spec"]
             for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]}
    return {"launcher": rjobs["launcher"], "worker": rjobs["node"]}


def test_every_backends_pods_tolerate_the_taints_of_their_pool(profiles_copy):
    """Without the tolerations no worker is ever scheduled on a NoSchedule-tainted GPU pool; the launcher (no node
    selector: wherever the scheduler puts it) tolerates them too, so a cluster whose only nodes are that pool runs it."""
    result = _compile(profiles_copy, {"clusters/dgx-lab.yaml": _tainted(DGX_LAB),
                                      "clusters/volcano-lab.yaml": _tainted(VOLCANO_LAB)})
    for name in ("resnet50-dgx", "allreduce-vcjob", "resnet50-trainjob"):
        pods = _pod_specs(_job(result, name))
        assert pods["worker"]["tolerations"] == GPU_TOLERATIONS, name
        assert pods["worker"]["nodeSelector"] == {"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}, name
        assert pods["launcher"]["tolerations"] == GPU_TOLERATIONS, name
        assert "nodeSelector" not in pods["launcher"], name


def test_untainted_pools_give_no_tolerations(example):
    """Nothing is added where no pool says it is tainted: the example fleet's lab pods are as they were."""
    for name in ("resnet50-dgx", "allreduce-vcjob", "resnet50-trainjob"):
        pods = _pod_specs(_job(example, name))
        assert "tolerations" not in pods["worker"] and "tolerations" not in pods["launcher"], name
        assert "nodeSelector" not in pods["launcher"], name


def test_a_launcher_pool_takes_the_launchers_off_the_gpu_pool(profiles_copy):
    """With `launcherPool: cpu` every launcher gets the CPU pool's node labels as its selector and tolerates that
    pool's taints only: it never lands on (nor tolerates) the GPU nodes; the workers keep the GPU pool's."""
    cluster = _tainted(DGX_LAB).replace(CPU_POOL, CPU_POOL + "    taints: [{key: example.com/batch, value: "
                                        "launchers, effect: NoSchedule}]\n") + "launcherPool: cpu\n"
    result = _compile(profiles_copy, {"clusters/dgx-lab.yaml": cluster})
    for name in ("resnet50-dgx", "resnet50-trainjob"):
        pods = _pod_specs(_job(result, name))
        assert pods["launcher"]["nodeSelector"] == {"node.kubernetes.io/instance-type": "cpu-2s64c"}, name
        assert pods["launcher"]["tolerations"] == CPU_TOLERATIONS, name
        assert pods["worker"]["tolerations"] == GPU_TOLERATIONS, name


def test_under_kueue_the_launcher_tolerates_the_pools_its_queue_may_admit_it_on(example):
    """dgx-pod's dgx pool carries the GPU operator's taint and its queues cover only that pool: Kueue admits the
    launcher on its flavor and adds its node labels to the launcher's selector, so without the toleration the
    admitted launcher would stay Pending."""
    gpu = [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]
    for name in ("vision-resnet50", "language-bert"):
        pods = _pod_specs(_job(example, name))
        assert pods["launcher"]["tolerations"] == gpu and "nodeSelector" not in pods["launcher"], name
        assert pods["worker"]["tolerations"] == gpu, name


def test_the_tolerations_are_part_of_the_run(profiles_copy, example):
    """An edited pod spec is a new run (the content-hash name): mpi-operator never applies it to a created MPIJob."""
    result = _compile(profiles_copy, {"clusters/dgx-lab.yaml": _tainted(DGX_LAB)})
    assert mpijob_name(_job(result, "resnet50-dgx")) != mpijob_name(_job(example, "resnet50-dgx"))
