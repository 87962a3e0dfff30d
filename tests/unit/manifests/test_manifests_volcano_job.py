"""generator/manifests/volcano_job.py: the Volcano Job of a `backend: volcano-job` job, against Volcano's own
facts. Sources: tests/upstream/scheduling/batch.volcano.sh_jobs.yaml (the CRD) and Volcano's MPI examples;
Volcano's job controller (a task's pods are `<job>-<task>-<i>`, PodNameFmt "%s-%s-%d"); its svc plugin (each pod's
hostname is its name and its subdomain the job's, behind a headless Service named after the job); its ssh plugin
(`--ssh-key-file-path`, default /root/.ssh); its admission webhook (minAvailable no more than the tasks' replicas).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES, UPSTREAM, CustomResourceSchemas
from ruamel.yaml import YAML

from mpigen.check.rules.scheduling import check_scheduling
from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests import build_job, job_chart_ref, job_object
from mpigen.model import Backend, Job
from mpigen.readback.findings import CheckContext, RenderedObject

VCJOB = (PROFILES / "jobs/allreduce-vcjob.yaml").read_text(encoding="utf-8")


def _job(profiles_copy, text: str = VCJOB) -> Job:
    result = compile_profiles([profiles_copy({"jobs/allreduce-vcjob.yaml": text})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return next(job for job in result.fleet.jobs if job.name == "allreduce-vcjob")


def _built(job: Job) -> tuple[dict[str, Any], dict[str, Any]]:
    manifests = build_job(job, job_chart_ref(job))
    configmap = next(m.obj for m in manifests if m.obj["kind"] == "ConfigMap")
    return job_object(manifests).obj, configmap


@pytest.fixture(scope="module")
def example(example: CompileResult) -> tuple[Job, dict[str, Any], dict[str, Any]]:
    """The example Volcano Job, from the example fleet compiled once a session (conftest's `example`)."""
    job = next(job for job in example.fleet.jobs if job.name == "allreduce-vcjob")
    return (job, *_built(job))


def test_the_example_job_is_a_volcano_job_of_two_tasks(example):
    job, vcjob, _ = example
    assert job.backend is Backend.VOLCANO_JOB
    assert (vcjob["apiVersion"], vcjob["kind"]) == ("batch.volcano.sh/v1alpha1", "Job")
    spec = vcjob["spec"]
    assert spec["schedulerName"] == "volcano" and spec["queue"] == "experiments"
    # volcano-lab runs on the nodes' network: the svc plugin's NetworkPolicy (the job's pods, by label) would
    # refuse the workers' daemons connecting back from their node's address, so it is turned off.
    assert spec["plugins"] == {"ssh": [], "svc": ["--disable-network-policy"]}
    # Workers first: Volcano sizes the PodGroup's minimum from the first minAvailable pods in task order.
    worker, launcher = spec["tasks"]
    assert (launcher["name"], launcher["replicas"], worker["name"], worker["replicas"]) == \
        ("mpimaster", 1, "mpiworker", 2)
    # The launcher task ends the job when mpirun ends (Volcano's MPI example), or fails it once its restarts reach
    # the task's maxRetry (TaskFailed); under WaitForWorkersReady it starts only once the workers run, so the gang
    # is the two workers (Volcano's mpi plugin guide: minAvailable equal to the worker replicas).
    assert launcher["policies"] == [{"event": "TaskCompleted", "action": "CompleteJob"},
                                    {"event": "TaskFailed", "action": "TerminateJob"}]
    assert launcher["dependsOn"] == {"name": ["mpiworker"]}
    assert spec["minAvailable"] == 2


def test_it_matches_the_upstream_crd(example):
    crds = CustomResourceSchemas([UPSTREAM / "scheduling" / "batch.volcano.sh_jobs.yaml"])
    _, vcjob, _ = example
    assert crds.problems(vcjob) == []
    broken = {**vcjob, "spec": {**vcjob["spec"], "tasks": [{**vcjob["spec"]["tasks"][0], "replicas": "one"}]}}
    assert crds.problems(broken), "the CRD check can fail"


def test_the_hostfile_names_volcanos_pods_through_the_svc_plugins_service(example):
    # Pod `<job>-mpiworker-<i>`, hostname = its name, subdomain = the job, headless Service `<job>`: so
    # `<job>-mpiworker-<i>.<job>.<ns>.svc`. Slots: 8 GPUs of a DGX-1, a rank each.
    _, vcjob, configmap = example
    name = vcjob["metadata"]["name"]
    assert re.fullmatch(r"allreduce-vcjob-[0-9a-f]{7}", name)
    assert configmap["data"]["hostfile"] == "".join(
        f"{name}-mpiworker-{i}.{name}.training.svc slots=8\n" for i in range(2))
    assert configmap["metadata"]["name"] == f"{name}-hostfile"


def test_the_pods_are_the_mpijobs_but_for_what_no_operator_sets_here(profiles_copy):
    # The same profile as an MPIJob: image, command, resources, volumes and security match; the env differs by
    # what mpi-operator appends to an MPIJob's launcher itself (docs/facts.md section 1): ORTE's fqdn, slots and ssh
    # settings, and an empty NVIDIA_VISIBLE_DEVICES on the launcher only (never exported to the ranks).
    vcjob_job = _job(profiles_copy)
    mpijob_job = _job(profiles_copy, VCJOB.replace("backend: volcano-job\n", "backend: mpijob\n"))
    vcjob, _ = _built(vcjob_job)
    mpijob, _ = _built(mpijob_job)
    vc_name, mpi_name = vcjob["metadata"]["name"], mpijob["metadata"]["name"]
    assert vc_name != mpi_name, "the run's digest covers the job object"

    def pod(template: dict[str, Any], name: str) -> str:
        """A pod spec as text, the job object's name taken out (the hostfile ConfigMap, the anti-affinity label)."""
        out = io.StringIO()
        YAML(typ="safe", pure=True).dump(template["spec"], out)
        return out.getvalue().replace(name, "<job>")

    orte = {"OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots",
            "OMPI_MCA_plm_rsh_args"}
    worker, launcher = (t["template"] for t in vcjob["spec"]["tasks"])
    mpi_launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]
    mpi_worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    for vc, mpi, role in ((launcher, mpi_launcher, "launcher"), (worker, mpi_worker, "worker")):
        vc_container, mpi_container = vc["spec"]["containers"][0], mpi["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in vc_container["env"]}
        mpi_env = {e["name"]: e["value"] for e in mpi_container["env"]}
        extra = {"NVIDIA_VISIBLE_DEVICES"} if role == "launcher" else set()
        assert set(env) - set(mpi_env) == orte | extra and set(mpi_env) <= set(env)
        assert {k: env[k] for k in mpi_env} == mpi_env
        if role == "launcher":
            assert env["NVIDIA_VISIBLE_DEVICES"] == ""
            exported = vc_container["command"]
            assert "NVIDIA_VISIBLE_DEVICES" not in exported and all(name in exported for name in orte)
            assert [p for p in exported if not p.startswith("OMPI_MCA_orte") and p != "OMPI_MCA_plm_rsh_args"
                    and p != "-x"] == [p for p in mpi_container["command"] if p != "-x"]
        for key in ("image", "resources", "securityContext", "volumeMounts"):
            assert vc_container.get(key) == mpi_container.get(key), (role, key)
        same = {k: v for k, v in vc["spec"].items() if k not in ("containers", "restartPolicy")}
        mpi_same = {k: v for k, v in mpi["spec"].items() if k != "containers"}
        assert pod({"spec": same}, vc_name) == pod({"spec": mpi_same}, mpi_name), role


def test_at_startup_puts_the_launcher_in_the_gang(profiles_copy):
    job = _job(profiles_copy, VCJOB + "launcherCreationPolicy: AtStartup\n")
    spec = _built(job)[0]["spec"]
    assert "dependsOn" not in spec["tasks"][1] and spec["minAvailable"] == 3


def test_settings_mpi_operator_has_under_other_names(profiles_copy):
    job = _job(profiles_copy, VCJOB + "sshAuthMountPath: /home/mpiuser/.ssh\nrunPolicy:\n  backoffLimit: 2\n"
               "  ttlSecondsAfterFinished: 600\n")
    spec = _built(job)[0]["spec"]
    assert spec["plugins"]["ssh"] == ["--ssh-key-file-path=/home/mpiuser/.ssh"]
    # backoffLimit: the launcher task's own maxRetry, which Volcano's TaskFailed counts (the job-level maxRetry
    # counts RestartJob actions only).
    assert (spec["tasks"][1]["maxRetry"], spec["ttlSecondsAfterFinished"]) == (2, 600) and "maxRetry" not in spec
    never = _built(_job(profiles_copy, VCJOB + "runPolicy:\n  backoffLimit: 0\n"))[0]["spec"]["tasks"][1]
    assert never["template"]["spec"]["restartPolicy"] == "Never" and "maxRetry" not in never
    assert never["policies"][1] == {"event": "PodFailed", "action": "TerminateJob"}


def test_check_finds_a_volcano_gang_that_can_never_form(example):
    _, vcjob, _ = example

    def findings(spec_edit: dict[str, Any]) -> list[str]:
        document = RenderedObject("t.yaml", {**vcjob, "spec": {**vcjob["spec"], **spec_edit}})
        return [f.message for f in check_scheduling([document], CheckContext(extra=[document.__class__(
            "q.yaml", {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                       "metadata": {"name": "experiments"}})]))]

    assert findings({}) == []
    assert findings({"minAvailable": 4}) == [
        "minAvailable 4 is more than the job's 3 pods: Volcano refuses the job ('minAvailable' should not be greater "
        "than total replicas in tasks)"]
    (deadlock,) = findings({"minAvailable": 3})
    assert "task(s) mpimaster start only once the tasks they depend on run" in deadlock and \
        "set minAvailable to 2" in deadlock


def test_a_profile_volcano_cannot_honour_is_refused(profiles_copy, tmp_path: Path):
    from mpigen.commands.pipeline import check_profiles

    def errors(text: str, edits: dict[str, str] | None = None) -> list[str]:
        root = profiles_copy({"jobs/allreduce-vcjob.yaml": text, **(edits or {})})
        return [d.format().split(str(root) + "/", 1)[1] for d in check_profiles([root]).diagnostics]

    assert errors(VCJOB + "runPolicy:\n  suspend: true\n") == [
        "jobs/allreduce-vcjob.yaml:18:12: error: runPolicy.suspend true cannot be expressed under backend "
        "volcano-job: a Volcano Job has no suspend field (Volcano suspends a job through a Command object, which no "
        "GitOps tool should create); remove it, or choose `backend: mpijob`"]
    assert [e.split(": error: ")[0] for e in errors(VCJOB + "runPolicy:\n  activeDeadlineSeconds: 60\n"
                                                    "  cleanPodPolicy: All\n")] == \
        ["jobs/allreduce-vcjob.yaml:18:26", "jobs/allreduce-vcjob.yaml:19:19"]
    (stable,) = errors(VCJOB + "naming: stable\n")
    assert stable.startswith("jobs/allreduce-vcjob.yaml:17:9: error: naming stable cannot be used under backend "
                             "volcano-job: Volcano's admission webhook refuses every change to a created Job")
    (user,) = [e for e in errors(VCJOB + "runAsUser: 1000\nsshAuthMountPath: /home/mpiuser/.ssh\n") if ": error: " in e]
    assert user.startswith("jobs/allreduce-vcjob.yaml:17:12: error: runAsUser 1000 cannot be used under backend "
                           "volcano-job: Volcano's ssh plugin mounts the job's keys owned by root with mode 0600")
    on_dgx_lab = VCJOB.replace("cluster: volcano-lab", "cluster: dgx-lab").replace(
        "scheduling:\n  queue: experiments\n", "")
    (problem,) = errors(on_dgx_lab)
    assert problem.startswith("jobs/allreduce-vcjob.yaml:11:10: error: backend volcano-job needs Volcano, but "
                              "cluster 'dgx-lab' has scheduling.scheduler none")


def test_check_finds_an_object_that_takes_a_name_volcano_creates(example):
    # Volcano's svc plugin makes ConfigMap <job>-svc, a headless Service and a NetworkPolicy <job>; its ssh plugin
    # Secret <job>-ssh. mpigen's own hostfile ConfigMap <job>-hostfile is none of them.
    from mpigen.check.rules.names import check_reserved_names

    _, vcjob, configmap = example
    name, namespace = vcjob["metadata"]["name"], vcjob["metadata"]["namespace"]

    def obj(kind: str, object_name: str) -> RenderedObject:
        return RenderedObject("x.yaml", {"apiVersion": "v1", "kind": kind,
                                         "metadata": {"name": object_name, "namespace": namespace}})

    job = RenderedObject("job.yaml", vcjob)
    assert check_reserved_names([job, RenderedObject("cm.yaml", configmap)]) == []
    found = check_reserved_names([job, obj("ConfigMap", f"{name}-svc"), obj("Secret", f"{name}-ssh"),
                                  obj("Service", name), obj("ConfigMap", f"{name}-ssh")])
    assert [f.message.split(":")[0] for f in found] == [
        f"name {name}-svc is Volcano's for its Job {name}", f"name {name}-ssh is Volcano's for its Job {name}",
        f"name {name} is Volcano's for its Job {name}"]


def test_check_finds_a_host_network_volcano_job_that_keeps_the_network_policy(example):
    # The example runs on volcano-lab's host network: mpigen turns the svc plugin's NetworkPolicy off. Without the
    # flag, check says why mpirun's daemons would not connect.
    from mpigen.check.rules.network import check_networks

    _, vcjob, _ = example
    assert check_networks([RenderedObject("job.yaml", vcjob)], CheckContext()) == []
    kept = {**vcjob, "spec": {**vcjob["spec"], "plugins": {"ssh": [], "svc": []}}}
    (found,) = check_networks([RenderedObject("job.yaml", kept)], CheckContext())
    assert found.path == ".spec.plugins.svc" and found.message.startswith(
        "task(s) mpiworker run on the nodes' network, but the svc plugin's NetworkPolicy admits only the job's pods")
