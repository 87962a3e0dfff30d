"""generator/manifests/trainjob.py: the TrainJob of a `backend: trainjob` job and its TrainingRuntime, against
Kubeflow Trainer's own facts. Sources: tests/upstream/trainer/ (the TrainJob and TrainingRuntime CRDs; the MPI
plugin, reference__pkg_runtime_framework_plugins_mpi_mpi.go: it touches only containers named `node`, writes its
hostfile lines as `<endpoint> slots=<numProcPerNode>`, and sets OpenMPI's ORTE variables on the launcher); JobSet's
endpoints `<trainjob>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>`, the subdomain being the TrainJob's name;
Trainer's webhook, which refuses a TrainJob whose TrainingRuntime does not exist yet.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES, UPSTREAM, CustomResourceSchemas
from ruamel.yaml import YAML

from mpigen.commands.pipeline import CompileResult, check_profiles, compile_profiles
from mpigen.manifests import build_infra, build_job, infra_chart_ref, job_chart_ref, job_object
from mpigen.model import Backend, Job

TRAINER = UPSTREAM / "trainer"
TRAINJOB = (PROFILES / "jobs/resnet50-trainjob.yaml").read_text(encoding="utf-8")
PATH = "jobs/resnet50-trainjob.yaml"


def _job(profiles_copy, text: str = TRAINJOB) -> Job:
    result = compile_profiles([profiles_copy({PATH: text})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return next(job for job in result.fleet.jobs if job.name == "resnet50-trainjob")


def _built(job: Job) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(TrainJob, its TrainingRuntime from the infra chart, the hostfile ConfigMap)."""
    manifests = build_job(job, job_chart_ref(job))
    trainjob = job_object(manifests).obj
    configmap = next(m.obj for m in manifests if m.obj["kind"] == "ConfigMap")
    runtimes = [m.obj for m in build_infra(job.cluster, infra_chart_ref(job.cluster), (job,))
                if m.obj["kind"] == "TrainingRuntime"]
    (runtime,) = runtimes
    return trainjob, runtime, configmap


@pytest.fixture(scope="module")
def example(example: CompileResult) -> tuple[Job, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The example TrainJob, from the example fleet compiled once a session (conftest's `example`)."""
    job = next(job for job in example.fleet.jobs if job.name == "resnet50-trainjob")
    return (job, *_built(job))


def _rjobs(runtime: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rjob["name"]: rjob for rjob in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def _pod(rjob: dict[str, Any]) -> dict[str, Any]:
    return rjob["template"]["spec"]["template"]


def test_the_example_job_is_a_trainjob_on_its_own_runtime(example):
    job, trainjob, runtime, _ = example
    assert job.backend is Backend.TRAINJOB
    assert (trainjob["apiVersion"], trainjob["kind"]) == ("trainer.kubeflow.org/v1alpha1", "TrainJob")
    name = trainjob["metadata"]["name"]
    # runtimeRef.kind defaults to ClusterTrainingRuntime: a namespaced runtime must be named as such.
    assert trainjob["spec"]["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime",
                                              "name": name}
    assert (runtime["metadata"]["name"], runtime["metadata"]["namespace"]) == (name, trainjob["metadata"]["namespace"])
    assert trainjob["spec"]["trainer"] == {"numNodes": 1, "numProcPerNode": 8} and trainjob["spec"]["suspend"] is False
    mpi = runtime["spec"]["mlPolicy"]["mpi"]
    assert mpi == {"numProcPerNode": 8, "mpiImplementation": "OpenMPI", "sshAuthMountPath": "/root/.ssh",
                   "runLauncherAsNode": False}
    jobset = runtime["spec"]["template"]["spec"]
    # JobSet: dependsOn may name only a replicated job listed before; the run succeeds when the launcher does.
    assert [rjob["name"] for rjob in jobset["replicatedJobs"]] == ["node", "launcher"]
    assert _rjobs(runtime)["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert jobset["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    assert _rjobs(runtime)["launcher"]["template"]["spec"]["backoffLimit"] == 2  # runPolicy.backoffLimit
    # The nodes are the training step: their pod count is numNodes (Trainer's runtime info takes the count of the
    # replicated job labelled ancestor trainer from mlPolicy.numNodes).
    assert _rjobs(runtime)["node"]["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}


def test_both_objects_match_trainers_crds(example):
    _, trainjob, runtime, _ = example
    crds = CustomResourceSchemas([TRAINER / "trainer.kubeflow.org_trainjobs.yaml",
                                  TRAINER / "trainer.kubeflow.org_trainingruntimes.yaml"])
    assert crds.problems(trainjob) == [] and crds.problems(runtime) == []


def test_every_container_is_named_node_for_trainers_mpi_plugin(example):
    plugin = (TRAINER / "reference__pkg_runtime_framework_plugins_mpi_mpi.go").read_text(encoding="utf-8")
    assert "if container.Name != constants.Node {\n\t\t\t\tcontinue" in plugin  # keys and hostfile: `node` only
    _, _, runtime, _ = example
    assert {rjob: [c["name"] for c in _pod(r)["spec"]["containers"]] for rjob, r in _rjobs(runtime).items()} == {
        "node": ["node"], "launcher": ["node"]}


def test_the_hostfile_is_the_one_trainer_writes(example):
    plugin = (TRAINER / "reference__pkg_runtime_framework_plugins_mpi_mpi.go").read_text(encoding="utf-8")
    assert 'fmt.Fprintf(&hostFile, "%s slots=%d\\n", e, slots)' in plugin
    _, trainjob, runtime, configmap = example
    name, slots = trainjob["metadata"]["name"], runtime["spec"]["mlPolicy"]["mpi"]["numProcPerNode"]
    # JobSet's endpoints: <trainjob>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>, subdomain the TrainJob's name.
    endpoints = [f"{name}-node-0-{i}.{name}" for i in range(trainjob["spec"]["trainer"]["numNodes"])]
    assert configmap["data"]["hostfile"] == "".join(f"{e} slots={slots}\n" for e in endpoints)
    assert configmap["metadata"]["name"] == f"{name}-hostfile"  # Trainer's own is <trainjob>-mpi-hostfile
    assert configmap["data"]["rankfile"].splitlines()[-1].startswith(f"rank 7={endpoints[-1]} slot=")


def test_the_runtime_is_in_the_infra_chart_and_the_trainjob_in_the_job_chart(example):
    # Helm creates kinds it does not know in alphabetical order (TrainJob before TrainingRuntime), and Trainer's
    # webhook refuses a TrainJob whose runtime does not exist yet: the infra chart, synced first, carries it.
    job, _, _, _ = example
    kinds = [m.obj["kind"] for m in build_job(job, job_chart_ref(job))]
    assert sorted(kinds) == ["ConfigMap", "TrainJob"]


def test_the_pods_are_the_mpijobs_but_for_what_the_backend_requires(profiles_copy):
    # The same profile as an MPIJob: image, command, env, resources, networks, volumes and security match. What
    # differs is what the backend requires: the container name (`node`, for Trainer's MPI plugin), an empty
    # NVIDIA_VISIBLE_DEVICES on the launcher (mpi-operator empties it on an MPIJob's; Trainer does not), and no -np
    # (the launcher is in the infra chart, which no job chart value reaches; mpirun then runs one rank per slot of
    # the hostfile). OpenMPI's ORTE variables are set by Trainer's MPI plugin as by mpi-operator.
    tj_job = _job(profiles_copy)
    mpi_job = _job(profiles_copy, TRAINJOB.replace("backend: trainjob\n", "backend: mpijob\n"))
    _, runtime, _ = _built(tj_job)
    mpijob = job_object(build_job(mpi_job, job_chart_ref(mpi_job))).obj
    tj_name, mpi_name = runtime["metadata"]["name"], mpijob["metadata"]["name"]
    assert tj_name != mpi_name, "the run's digest covers the job object"

    def text(value: Any, name: str) -> str:
        out = io.StringIO()
        YAML(typ="safe", pure=True).dump(value, out)
        return out.getvalue().replace(name, "<job>")

    pairs = ((_pod(_rjobs(runtime)["launcher"]), mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"], "launcher"),
             (_pod(_rjobs(runtime)["node"]), mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"], "worker"))
    for tj, mpi, role in pairs:
        tj_container, mpi_container = tj["spec"]["containers"][0], mpi["spec"]["containers"][0]
        assert (tj_container["name"], mpi_container["name"]) == ("node", role)
        extra = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": ""}] if role == "launcher" else []
        assert tj_container["env"] == mpi_container["env"] + extra
        for key in ("image", "resources", "securityContext", "volumeMounts"):
            assert tj_container.get(key) == mpi_container.get(key), (role, key)
        if role == "launcher":
            command = mpi_container["command"]
            np = command.index("-np")
            assert command[np + 1] == "8" and tj_container["command"] == command[:np] + command[np + 2:]
        else:
            # docs/facts.md section 1: mpi-operator runs `/usr/sbin/sshd -De` in a worker with no command; Trainer runs
            # the image's entrypoint (its own MPI runtime says sshd, and probes it), so mpigen says both.
            assert "command" not in mpi_container and tj_container["command"] == ["/usr/sbin/sshd", "-De"]
            # Both probe sshd's port (mpi-operator's Intel MPI and MPICH examples, Trainer's MPI runtime).
            assert tj_container["readinessProbe"] == mpi_container["readinessProbe"] == {
                "tcpSocket": {"port": 22}, "initialDelaySeconds": 2}
        assert text(tj.get("metadata"), tj_name) == text(mpi.get("metadata"), mpi_name), role  # the networks
        same = {k: v for k, v in tj["spec"].items() if k not in ("containers", "restartPolicy")}
        mpi_same = {k: v for k, v in mpi["spec"].items() if k != "containers"}
        assert text(same, tj_name) == text(mpi_same, mpi_name), role  # volumes, node selector, affinity
        restart = mpijob["spec"]["mpiReplicaSpecs"]["Launcher" if role == "launcher" else "Worker"]["restartPolicy"]
        assert tj["spec"]["restartPolicy"] == restart


def test_one_slot_per_worker_stays_one_slot(profiles_copy):
    # mpi.go EnforceMLPolicy: with the runtime's numProcPerNode at 1 and none on the TrainJob, Trainer takes the
    # node container's GPU count as its slots; the TrainJob's own numProcPerNode wins over both.
    plugin = (TRAINER / "reference__pkg_runtime_framework_plugins_mpi_mpi.go").read_text(encoding="utf-8")
    assert "} else if *info.RuntimePolicy.MLPolicySource.MPI.NumProcPerNode == 1 {" in plugin
    trainjob, runtime, configmap = _built(_job(profiles_copy, TRAINJOB + "slotsPerWorker: 1\n"))
    assert trainjob["spec"]["trainer"]["numProcPerNode"] == runtime["spec"]["mlPolicy"]["mpi"]["numProcPerNode"] == 1
    assert configmap["data"]["hostfile"].endswith(" slots=1\n")


def test_at_startup_the_launcher_does_not_wait(profiles_copy):
    text = TRAINJOB.replace("launcherCreationPolicy: WaitForWorkersReady\n", "launcherCreationPolicy: AtStartup\n")
    _, runtime, _ = _built(_job(profiles_copy, text))
    assert "dependsOn" not in _rjobs(runtime)["launcher"]


def test_run_policy_under_trainers_names(profiles_copy):
    text = TRAINJOB.replace("  backoffLimit: 2\n", "  backoffLimit: 2\n  activeDeadlineSeconds: 3600\n"
                            "  ttlSecondsAfterFinished: 600\n  suspend: true\n") + \
        "sshAuthMountPath: /home/mpiuser/.ssh\n"
    trainjob, runtime, _ = _built(_job(profiles_copy, text))
    assert (trainjob["spec"]["activeDeadlineSeconds"], trainjob["spec"]["suspend"]) == (3600, True)
    # The TTL is the JobSet's: Trainer deletes it and keeps the finished TrainJob, whose JobSet it never builds
    # again (jobset.go's Status: a JobSet gone after its TTL), so dgx-lab's Argo CD re-runs nothing and the
    # profile needs no `allowRerunAfterTtl`.
    assert runtime["spec"]["template"]["spec"]["ttlSecondsAfterFinished"] == 600
    assert runtime["spec"]["mlPolicy"]["mpi"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"


def test_a_profile_trainer_cannot_honour_is_refused(profiles_copy, tmp_path: Path):
    def errors(text: str) -> list[str]:
        root = profiles_copy({PATH: text})
        return [d.format().split(str(root) + "/", 1)[1] for d in check_profiles([root]).diagnostics]

    appended = len(TRAINJOB.splitlines()) + 1
    (intel,) = errors(TRAINJOB + "mpiImplementation: Intel\n")
    assert intel.startswith(f"{PATH}:{appended}:20: error: mpiImplementation Intel cannot be used under backend trainjob: "
                            "Trainer's MPI plugin writes the hostfile for OpenMPI only")
    (stable,) = errors(TRAINJOB + "naming: stable\n")
    assert stable.startswith(f"{PATH}:{appended}:9: error: naming stable cannot be used under backend trainjob: a "
                             "TrainJob's runtimeRef and trainer fields are immutable")
    (clean,) = errors(TRAINJOB.replace("cleanPodPolicy: Running", "cleanPodPolicy: All"))
    clean_line = TRAINJOB.splitlines().index("  cleanPodPolicy: Running") + 1
    assert clean.startswith(f"{PATH}:{clean_line}:19: error: runPolicy.cleanPodPolicy \"All\" cannot be expressed under "
                            "backend trainjob: a TrainJob ends as its launcher completes")
    long_name = TRAINJOB.replace("name: resnet50-trainjob", "name: " + "r" * 43)
    (name,) = errors(long_name)
    # r*43 + "-" + 7 hex + "-launcher-0-0" is 63 + 1 characters: JobSet's hostname of the launcher pod.
    name_line = TRAINJOB.splitlines().index("name: resnet50-trainjob") + 1
    assert name.startswith(f"{PATH}:{name_line}:7: error: Kubeflow Trainer would reject this job: its launcher's "
                           "hostname <trainjob>-launcher-0-0 would be 64 characters, more than 63") and \
        "shorten the job name to at most 42 characters" in name
    on_volcano = TRAINJOB.replace("cluster: dgx-lab", "cluster: volcano-lab").replace(
        "namespace: ml-training", "namespace: training")
    problems = [e for e in errors(on_volcano) if "backend trainjob cannot run" in e]
    assert len(problems) == 1 and "scheduling.scheduler volcano" in problems[0]


def test_check_finds_an_object_that_takes_a_name_trainer_creates(example):
    from mpigen.check.rules.names import check_reserved_names
    from mpigen.readback.findings import RenderedObject

    _, trainjob, _, configmap = example
    name, namespace = trainjob["metadata"]["name"], trainjob["metadata"]["namespace"]

    def obj(kind: str, object_name: str) -> RenderedObject:
        return RenderedObject("x.yaml", {"apiVersion": "v1", "kind": kind,
                                         "metadata": {"name": object_name, "namespace": namespace}})

    job = RenderedObject("job.yaml", trainjob)
    assert check_reserved_names([job, RenderedObject("cm.yaml", configmap)]) == []
    found = check_reserved_names([job, obj("ConfigMap", f"{name}-mpi-hostfile"), obj("Secret", f"{name}-mpi-ssh-auth"),
                                  obj("Service", name), obj("ConfigMap", f"{name}-hostfile")])
    assert [f.message.split(":")[0] for f in found] == [
        f"name {name}-mpi-hostfile is Kubeflow Trainer's for its TrainJob {name}",
        f"name {name}-mpi-ssh-auth is Kubeflow Trainer's for its TrainJob {name}",
        f"name {name} is Kubeflow Trainer's for its TrainJob {name}"]


def test_under_kueue_the_trainjob_is_admitted_through_its_queue(profiles_copy):
    # Kueue's TrainJob integration reads the queue label on the TrainJob, creates it suspended and unsuspends it on
    # admission, injecting its flavors' node selectors as runtime patches (test_manifests_gitops: Argo CD leaves
    # both alone).
    vision = (PROFILES / "jobs/vision-resnet50.yaml").read_text(encoding="utf-8") + "backend: trainjob\n"
    result = compile_profiles([profiles_copy({"jobs/vision-resnet50.yaml": vision})])
    assert result.ok, [d.format() for d in result.diagnostics]
    job = next(job for job in result.fleet.jobs if job.name == "vision-resnet50")
    trainjob, runtime, _ = _built(job)
    assert trainjob["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == job.scheduling.queue
    assert trainjob["spec"]["suspend"] is True
    # The topology Kueue is asked to keep the workers in is on the workers' pods, in the runtime.
    node = _pod(_rjobs(runtime)["node"])
    assert "kueue.x-k8s.io/podset-required-topology" in node["metadata"]["annotations"]


def test_check_judges_the_runtimes_workers_by_the_pool_of_the_trainjobs_chart(example):
    # The runtime is in the infra chart, which targets no pool; the job chart's Chart.yaml names the pool of its
    # TrainJob, and so of the runtime of the same namespace and name.
    from mpigen.check.rules.capacity import check_capacity
    from mpigen.readback.findings import CheckContext, NodeShape, RenderedObject

    _, trainjob, runtime, _ = example
    shape = NodeShape("dgx-lab", "dgx", {"nvidia.com/gpu": 8, **{f"nvidia.com/rdma_rail{i}": 8 for i in range(4)}})
    job = RenderedObject("charts/dgx-lab/jobs/resnet50-trainjob/templates/trainjob.yaml", trainjob,
                         chart="charts/dgx-lab/jobs/resnet50-trainjob")

    def findings(obj: dict[str, Any]) -> list[str]:
        document = RenderedObject("charts/dgx-lab/infra/templates/training-runtimes.yaml", obj,
                                  chart="charts/dgx-lab/infra")
        context = CheckContext(node_shapes={"charts/dgx-lab/jobs/resnet50-trainjob": shape})
        return [f.message for f in check_capacity([job, document], context)]

    assert findings(runtime) == []
    greedy = copy.deepcopy(runtime)
    _pod(_rjobs(greedy)["node"])["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 16
    assert findings(greedy) == ["the worker container requests 16 nvidia.com/gpu, but a node of pool dgx (cluster "
                                "dgx-lab) has 8; the workers never schedule"]


def test_check_reads_a_kueue_trainjob_with_its_runtimes_pods(profiles_copy):
    from mpigen.check.rules.scheduling import check_scheduling
    from mpigen.readback.findings import CheckContext, RenderedObject

    vision = (PROFILES / "jobs/vision-resnet50.yaml").read_text(encoding="utf-8") + "backend: trainjob\n"
    result = compile_profiles([profiles_copy({"jobs/vision-resnet50.yaml": vision})])
    documents = [RenderedObject(f"{chart.directory}/templates/{m.template}", m.obj, chart.directory)
                 for chart in result.charts if chart.directory.startswith("dgx-pod/") for m in chart.manifests]
    assert check_scheduling(documents, CheckContext()) == []
    (trainjob,) = [d for d in documents if d.kind == "TrainJob"]
    (runtime,) = [d for d in documents if d.kind == "TrainingRuntime"]
    others = [d for d in documents if d not in (trainjob, runtime)]

    def messages(job: dict[str, Any], pods: dict[str, Any] | None) -> list[str]:
        found = check_scheduling([RenderedObject(trainjob.source, job, trainjob.chart), *others,
                                  *([RenderedObject(runtime.source, pods, runtime.chart)] if pods else [])],
                                 CheckContext())
        return [f"{f.object} {f.path}: {f.message.split(';')[0]}" for f in found]

    name = trainjob.obj["metadata"]["name"]
    unsuspended = copy.deepcopy(trainjob.obj)
    unsuspended["spec"]["suspend"] = False
    unsuspended["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "nosuch"
    assert messages(unsuspended, runtime.obj) == [
        f"TrainJob/{name} .spec.suspend: a job Kueue admits should be created suspended (suspend: true): Kueue "
        "unsuspends it on admission, and a GitOps tool that puts git's false back starts it without admission",
        f"TrainJob/{name} .metadata.labels[\"kueue.x-k8s.io/queue-name\"]: no LocalQueue team-vision/nosuch (named by "
        "kueue.x-k8s.io/queue-name) in this render or the extra manifests (--context)"]
    # The pods are the runtime's: a resource the ClusterQueue does not cover is found there.
    greedy = copy.deepcopy(runtime.obj)
    _pod(_rjobs(greedy)["node"])["spec"]["containers"][0]["resources"]["limits"]["example.com/fpga"] = 1
    (uncovered,) = messages(trainjob.obj, greedy)
    assert uncovered.startswith(f"TrainingRuntime/{name} .spec.template.spec.replicatedJobs[0].template.spec."
                                "template.spec.containers[0].resources.limits[\"example.com/fpga\"]: the node requests "
                                "example.com/fpga, which ClusterQueue")
    # Without its runtime, Trainer's webhook refuses the TrainJob.
    assert messages(trainjob.obj, None) == [
        f"TrainJob/{name} .spec.runtimeRef.name: no TrainingRuntime team-vision/{name} in this render or the extra "
        "manifests (--context)"]
