"""generator/check/rules/pod_spec.py: images, ports, env var names (by Kubernetes version), volume mounts and restart
policies per kind, in the API server's words (pkg/apis/core/validation/validation.go: validateContainerCommon,
validateContainerPorts, ValidateEnv, ValidateVolumeMounts, validateRestartPolicy; batch and apps validation for the
restart policy of their kinds). Each check refuses a violating object and takes a valid one."""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.check.rules import check_pod_specs
from mpigen.readback.findings import CheckContext, RenderedObject

ENV_NAME = ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and "
            "must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for "
            "validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")
RELAXED = "a valid environment variable name must consist only of printable ASCII characters other than '='"
RENAME = ("; Kubernetes 1.32 and newer take any printable ASCII name but '=': rename it, or target a newer version")


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "i", **fields}


def pod(*containers: dict[str, Any], **spec: Any) -> RenderedObject:
    return RenderedObject("m.yaml", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                     "spec": {"containers": list(containers or [container()]), **spec}})


def workload(api_version: str, kind: str, pod_spec: dict[str, Any], **spec: Any) -> RenderedObject:
    return RenderedObject("m.yaml", {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"},
                                     "spec": {"template": {"spec": pod_spec}, **spec}})


def shown(document: RenderedObject, context: CheckContext | None = None) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in check_pod_specs([document], context)]


def test_every_container_needs_an_image() -> None:
    assert shown(pod(container(image=""), {"name": "d"})) == [
        (".spec.containers[0].image", "spec.containers[0].image: Required value"),
        (".spec.containers[1].image", "spec.containers[1].image: Required value")]
    assert shown(pod()) == []


def test_ports_are_in_range_with_a_known_protocol() -> None:
    ports = [{"containerPort": 70000}, {"containerPort": 0}, {"containerPort": 80, "hostPort": 65536},
             {"containerPort": 80, "protocol": "tcp"}]
    assert shown(pod(container(ports=ports))) == [
        (".spec.containers[0].ports[0].containerPort",
         "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
        (".spec.containers[0].ports[1].containerPort", "spec.containers[0].ports[1].containerPort: Required value"),
        (".spec.containers[0].ports[2].hostPort",
         "spec.containers[0].ports[2].hostPort: Invalid value: 65536: must be between 1 and 65535, inclusive"),
        (".spec.containers[0].ports[3].protocol",
         'spec.containers[0].ports[3].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"')]
    assert shown(pod(container(ports=[{"containerPort": 65535, "hostPort": 0}, {"containerPort": 1, "hostPort": 1,
                                                                                "protocol": "SCTP"}]))) == []


@pytest.mark.parametrize(("version", "expected"), [
    ("1.31", [f'spec.containers[0].env[0].name: Invalid value: "1st": {ENV_NAME}{RENAME}',
              f'spec.containers[0].env[1].name: Invalid value: "A B": {ENV_NAME}{RENAME}',
              f'spec.containers[0].env[2].name: Invalid value: "..x": must not start with \'..\'{RENAME}',
              f'spec.containers[0].env[3].name: Invalid value: "A=B": {ENV_NAME}{RENAME}']),
    ("1.33", [f'spec.containers[0].env[3].name: Invalid value: "A=B": {RELAXED}']),
    ("v1.32.4", [f'spec.containers[0].env[3].name: Invalid value: "A=B": {RELAXED}']),
    ("", [f'spec.containers[0].env[3].name: Invalid value: "A=B": {RELAXED}']),
])
def test_env_var_names_are_judged_by_the_documents_kubernetes_version(version: str, expected: list[str]) -> None:
    # RelaxedEnvironmentVariableValidation is on by default from 1.32: before, names are C-identifier-like.
    env = [{"name": name, "value": "v"} for name in ("1st", "A B", "..x", "A=B", "MY_ENV.name-1")]
    document = pod(container(env=env))
    assert [m for _, m in shown(document, CheckContext(kube_version=version))] == expected


def test_a_charts_own_version_decides_for_its_documents() -> None:
    document = RenderedObject("t.yaml", pod(container(env=[{"name": "1st", "value": "v"}])).obj, chart="charts/a")
    assert len(shown(document, CheckContext(kube_versions={"charts/a": "1.30"}, kube_version="1.33"))) == 1
    assert shown(document, CheckContext(kube_versions={"charts/a": "1.33"}, kube_version="1.30")) == []


def test_an_envfrom_prefix_is_judged_as_a_name() -> None:
    env_from = [{"prefix": "9_", "configMapRef": {"name": "x"}}]
    assert [m for _, m in shown(pod(container(envFrom=env_from)), CheckContext(kube_version="1.31"))] == [
        f'spec.containers[0].envFrom[0].prefix: Invalid value: "9_": {ENV_NAME}']


def test_mounts_name_declared_volumes_at_paths_of_their_own() -> None:
    mounts = [{"name": "data", "mountPath": "/d"}, {"name": "nope", "mountPath": "/d"}, {"name": "data", "mountPath": ""}]
    assert shown(pod(container(volumeMounts=mounts), volumes=[{"name": "data", "emptyDir": {}}])) == [
        (".spec.containers[0].volumeMounts[1].name", 'spec.containers[0].volumeMounts[1].name: Not found: "nope"; '
         "declare a volume nope in the pod's `volumes`, or mount one it declares"),
        (".spec.containers[0].volumeMounts[1].mountPath",
         'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique'),
        (".spec.containers[0].volumeMounts[2].mountPath", "spec.containers[0].volumeMounts[2].mountPath: Required value")]
    # Each container has its own paths.
    assert shown(pod(container(volumeMounts=[{"name": "data", "mountPath": "/d"}]),
                     container(name="d", volumeMounts=[{"name": "data", "mountPath": "/d"}]),
                     volumes=[{"name": "data", "emptyDir": {}}])) == []


JOB_RESTART = ('spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"; a Job\'s pods '
               "must not restart `Always` (the default where none is set): set `restartPolicy: Never` or `OnFailure`")


@pytest.mark.parametrize(("policy", "expected"), [
    (None, [JOB_RESTART]), ("Always", [JOB_RESTART]),
    ("Sometimes", ['spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", '
                   '"Never"']),
    ("Never", []), ("OnFailure", []),
])
def test_a_jobs_pods_restart_on_failure_or_never(policy: str | None, expected: list[str]) -> None:
    pod_spec = {"containers": [container()], **({"restartPolicy": policy} if policy else {})}
    assert [m for _, m in shown(workload("batch/v1", "Job", pod_spec))] == expected


def test_a_job_with_a_pod_failure_policy_restarts_never() -> None:
    job = workload("batch/v1", "Job", {"containers": [container()], "restartPolicy": "OnFailure"},
                   podFailurePolicy={"rules": []})
    assert [m for _, m in shown(job)] == [
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy '
        "is specified"]


def test_a_cronjobs_jobs_are_judged_as_jobs() -> None:
    cronjob = RenderedObject("m.yaml", {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                                        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
                                            "spec": {"containers": [container()]}}}}}})
    assert [p for p, _ in shown(cronjob)] == [".spec.jobTemplate.spec.template.spec.restartPolicy"]


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"])
def test_replicated_workloads_restart_always(kind: str) -> None:
    assert [m for _, m in shown(workload("apps/v1", kind, {"containers": [container()], "restartPolicy": "Never"}))] \
        == [f'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"; a {kind} '
            "keeps its pods running: run work that ends as a Job"]
    assert shown(workload("apps/v1", kind, {"containers": [container()]})) == []


def test_a_pods_restart_policy_is_one_of_three() -> None:
    assert [m for _, m in shown(pod(restartPolicy="Sometimes"))] == [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']
    assert shown(pod(restartPolicy="Never")) == []


def test_a_training_runtimes_replicated_jobs_are_jobs() -> None:
    # JobSet makes a batch/v1 Job of each replicated job: one whose pods would restart Always is refused.
    pod_template = {"spec": {"containers": [container()]}}
    runtime = RenderedObject("m.yaml", {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "r"},
        "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {
            "template": pod_template}}}]}}}})
    assert [p for p, _ in shown(runtime)] == [
        ".spec.template.spec.replicatedJobs[0].template.spec.template.spec.restartPolicy"]


def test_a_custom_resources_pods_are_refused_later() -> None:
    template = {"spec": {"containers": [container(image="")]}}
    mpijob = RenderedObject("m.yaml", {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "j"},
                                       "spec": {"mpiReplicaSpecs": {"Launcher": {"template": template}}}})
    # The operator sets its pods' restartPolicy from the replica's own: the template's is not judged here.
    assert [m for _, m in shown(mpijob)] == [
        "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].image: Required value; the API server takes the "
        "MPIJob, and refuses every pod made of it"]
