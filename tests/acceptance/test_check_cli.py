"""`mpigen check` on the command line: exit codes, formats, options. The committed charts (with each Helm), --no-helm
and the usage errors through the real command in a process of its own; the many inputs and options in this process
(conftest.invoke_mpigen), where check builds its schemas once and Helm renders each committed chart once
(conftest.Renders)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from conftest import ACCEPTANCE_CHARTS, CHARTS, Renders, cached_check, invoke_mpigen, run_mpigen

BROKEN_MPIJOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
  namespace: hpc
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 2
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/mpi-pi:openmpi
    Worker:
      replicas: 1
      template:
        metadata:
          annotations:
            k8s.v1.cni.cncf.io/networks: rail9
        spec:
          containers:
          - name: worker
            image: mpioperator/mpi-pi:openmpi
"""
RAIL9_NAD = """\
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: rail9
  namespace: hpc
spec:
  config: '{"cniVersion": "0.3.1", "name": "rail9", "type": "macvlan"}'
"""


def findings(stdout: str) -> list[str]:
    """The report's lines without its Pod Security lines (one per workload, `pod security <level>: ...`)."""
    return [line for line in stdout.splitlines() if not line.startswith("pod security ")]


# Pod Security levels of the committed charts' workloads, by hand (see test_manifests_network.NAMESPACE_LEVELS).
COMMITTED_LEVELS = {
    ("cpu-lab/jobs/cpu-pi", "mpi"): ("restricted", ""),
    ("kueue-lab/jobs/kueue-pi", "research"): ("restricted", ""),
    ("dgx-lab/jobs/pi", "hpc"): ("restricted", ""),
    ("dgx-lab/jobs/resnet50-dgx", "ml-training"): ("privileged", "container worker adds capability IPC_LOCK"),
    # resnet50-trainjob's pods are in the TrainingRuntime the infra chart carries for it.
    ("dgx-lab/infra", "ml-training"): ("privileged", "container node adds capability IPC_LOCK"),
    ("dgx-lab/jobs/tensorflow-benchmarks", "ml-training"): (
        "baseline", "container launcher lacks allowPrivilegeEscalation: false, runAsNonRoot: true, seccompProfile "
        "RuntimeDefault, capabilities drop ALL; container worker lacks allowPrivilegeEscalation: false, runAsNonRoot: "
        "true, seccompProfile RuntimeDefault, capabilities drop ALL"),
    ("netapp-lab/jobs/netapp-resnet50", "ai-training"): (
        "privileged", "hostNetwork: true; container worker adds capability IPC_LOCK"),
    ("dgx-pod/jobs/vision-resnet50", "team-vision"): ("privileged", "container worker adds capability IPC_LOCK"),
    ("dgx-pod/jobs/language-bert", "team-language"): ("privileged", "container worker adds capability IPC_LOCK"),
    ("volcano-lab/jobs/volcano-allreduce", "training"): (
        "privileged", "hostNetwork: true; container worker adds capability IPC_LOCK"),
    ("volcano-lab/jobs/allreduce-vcjob", "training"): (
        "privileged", "hostNetwork: true; container worker adds capability IPC_LOCK"),
    ("kai-lab/jobs/kai-allreduce", "training"): (
        "privileged", "hostNetwork: true; container worker adds capability IPC_LOCK"),
    ("kai-lab/jobs/kai-research", "experiments"): (
        "privileged", "hostNetwork: true; container worker adds capability IPC_LOCK"),
    ("h100-dra/jobs/llm-pretrain", "llm"): ("privileged", "container worker adds capability IPC_LOCK"),
    ("gb200-rack/jobs/mnnvl-allreduce", "frontier"): ("privileged", "container worker adds capability IPC_LOCK"),
}
# The fabric acceptance jobs' pods are their pools' real workers: IPC_LOCK for RDMA, and hostNetwork where the cluster's
# provider is host-network. Each runs in its cluster's `acceptance.namespace`, else its first namespace.
ACCEPTANCE_NAMESPACES = {"dgx-lab": "ml-training", "dgx-pod": "team-vision", "gb200-rack": "frontier", "h100-dra": "llm",
                         "netapp-lab": "ai-training", "roce-lab": "roce-training", "volcano-lab": "training"}
HOST_NETWORK = ("netapp-lab", "volcano-lab")
COMMITTED_LEVELS |= {
    (chart, ACCEPTANCE_NAMESPACES[chart.split("/")[0]]): (
        "privileged", ("hostNetwork: true; " if chart.split("/")[0] in HOST_NETWORK else "")
        + "container worker adds capability IPC_LOCK")
    for chart in ACCEPTANCE_CHARTS}
# Documents of the committed charts, by hand: 33 before the gang-scheduled clusters; dgx-pod's infra 22 (2
# Namespaces, 4 SriovNetworkNodePolicies, 8 SriovIBNetworks, 2 WorkloadPriorityClasses, a Topology, a
# ResourceFlavor, 2 ClusterQueues, 2 LocalQueues), its two jobs 4, its bootstrap 4 (in 2 files); volcano-lab's
# infra 5 (a Namespace, the rdma-devices ConfigMap, a PriorityClass, 2 Queues), its two jobs 4 (an MPIJob and a
# Volcano Job, each with its hostfile ConfigMap); dgx-lab's resnet50-trainjob 4 (its chart's TrainJob and hostfile
# ConfigMap, a TrainingRuntime in the infra chart, an Argo CD Application); dgx-pod's SriovNetworkPoolConfig 1;
# roce-lab's infra 10 (a Namespace, 4 SriovNetworkNodePolicies, a SriovNetworkPoolConfig, 4 SriovNetworks);
# h100-dra 8 (its infra: a Namespace, the NIC DeviceClass, a ResourceFlavor, a ClusterQueue, a LocalQueue; its job: an
# MPIJob, its hostfile ConfigMap, its ResourceClaimTemplate); gb200-rack 9 (the same and a ComputeDomain); kai-lab 12
# (its infra: 2 Namespaces, the rdma-devices ConfigMap, a PriorityClass, KAI's Topology, 3 Queues (a parent and two);
# its two jobs: each an MPIJob and its hostfile ConfigMap).
# The 46 acceptance charts (conftest.ACCEPTANCE_CHARTS) 128 more: each an MPIJob and its hostfile ConfigMap (92), h100-dra's
# 10 and gb200-rack's 6 a ResourceClaimTemplate (16), gb200-rack's 6 a ComputeDomain (6); dgx-lab's and dgx-pod's
# bootstrap/apps/acceptance.yaml (2 more manifest files) an Argo CD Application per chart (8 + 6 = 14).
DOCUMENTS = "254 document(s) of 71 chart(s) and 8 manifest file(s)"
POD_SECURITY_LINE = re.compile(
    r"pod security (\w+): (\S+)/templates/(?:mpijob|volcano-job|training-runtimes)\.yaml: (?:MPIJob|Job|TrainingRuntime)/\S+"
    r" in namespace ([a-z-]+)"
    r"(?:: (.*))?")


@pytest.fixture(scope="module")
def committed_renders() -> Renders:
    """Helm's renders of the committed charts, for the in-process checks of them after the first (by each Helm)."""
    return Renders()


@pytest.fixture(scope="module")
def committed_check(helm: Path) -> subprocess.CompletedProcess[str]:
    """`mpigen check` of the committed charts with `helm`, run once for the tests that read its report: each run
    renders and lints every chart with Helm."""
    return run_mpigen("check", "--helm", helm, CHARTS)


def test_check_reports_the_pod_security_level_of_every_workload(helm, committed_check, committed_renders):
    levels = {}
    for line in committed_check.stdout.splitlines():
        if line.startswith("pod security "):
            level, chart, namespace, why = POD_SECURITY_LINE.fullmatch(line).groups()
            levels[(Path(chart).relative_to(CHARTS).as_posix(), namespace)] = (level, why or "")
    assert levels == COMMITTED_LEVELS
    with cached_check(committed_renders):
        data = json.loads(invoke_mpigen("check", "--helm", helm, "--output", "json", CHARTS).stdout)
    assert sorted((Path(w["source"]).parent.parent.relative_to(CHARTS).as_posix(), w["namespace"], w["level"])
                  for w in data["podSecurity"]) == sorted((c, n, lv) for (c, n), (lv, _) in COMMITTED_LEVELS.items())


def test_the_committed_charts_pass_strictly_without_crds(helm, committed_check, committed_renders):
    """Every kind mpigen emits has a schema shipped with it, the GitOps kinds of the bootstrap output too (Argo CD
    Applications and Flux GitRepository, Kustomization and HelmReleases): no warning, nothing unknown under
    --strict."""
    with cached_check(committed_renders):
        strict = invoke_mpigen("check", "--helm", helm, "--strict", CHARTS)
    for result in (committed_check, strict):
        assert result.returncode == 0, result.stdout + result.stderr
        assert findings(result.stdout) == [f"0 error(s), 0 warning(s) in {DOCUMENTS}"]
        assert "rendering and linting with helm v" in result.stderr


def test_the_committed_charts_pass_strictly_with_the_upstream_gitops_crds(helm, upstream, committed_renders):
    gitops = upstream / "gitops"
    crds = [gitops / "argocd" / "application-crd.yaml", *(gitops / "flux" / f"{kinds}.yaml" for kinds in (
        "source.toolkit.fluxcd.io_gitrepositories", "kustomize.toolkit.fluxcd.io_kustomizations",
        "helm.toolkit.fluxcd.io_helmreleases"))]  # the others there (ApplicationSet: 1.4 MB) add 15 s
    with cached_check(committed_renders):
        result = invoke_mpigen("check", "--helm", helm, "--strict", *(arg for crd in crds for arg in ("--crds", crd)),
                               CHARTS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert findings(result.stdout) == [f"0 error(s), 0 warning(s) in {DOCUMENTS}"]


def test_without_helm_mpigen_renders_its_own_charts():
    result = run_mpigen("check", "--no-helm", CHARTS)
    assert result.returncode == 0, result.stdout
    assert DOCUMENTS in result.stdout
    assert "--no-helm: charts are not linted" in result.stderr


def test_upstream_example_mpijobs_pass_clean(upstream):
    result = invoke_mpigen("check", "--no-helm", "--strict", upstream / "mpi-operator" / "examples")
    assert result.returncode == 0, result.stdout
    assert findings(result.stdout) == ["0 error(s), 0 warning(s) in 5 document(s) of 0 chart(s) and 5 manifest file(s)"]


def test_a_broken_mpijob_is_caught_with_the_operators_words(tmp_path):
    (tmp_path / "job.yaml").write_text(BROKEN_MPIJOB, encoding="utf-8")
    result = run_mpigen("check", "--no-helm", tmp_path)
    assert result.returncode == 1
    source = (tmp_path / "job.yaml").as_posix()
    lines = result.stdout.splitlines()
    assert (f"{source}: MPIJob/pi: .spec.mpiReplicaSpecs.Launcher.replicas: spec.mpiReplicaSpecs[Launcher].replicas: "
            "Invalid value: 2: must be 1") in lines
    assert any(line.startswith(f"{source}: MPIJob/pi: .spec.mpiReplicaSpecs.Worker.template.metadata.annotations")
               and "no NetworkAttachmentDefinition hpc/rail9" in line for line in lines), lines
    assert lines[-1].startswith("2 error(s)")
    assert "Traceback" not in result.stderr


DRA_JOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: train, namespace: ml}
spec:
  slotsPerWorker: 4
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{name: launcher, image: "nccl-tests:2.21"}]
    Worker:
      replicas: 2
      template:
        spec:
          resourceClaims: [{name: gpus, resourceClaimTemplateName: train-gpus}]
          containers:
          - name: worker
            image: nccl-tests:2.21
            resources:
              limits:
                nvidia.com/gpu: 4
              claims: [{name: gpus}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: train-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 4}}
"""


def test_a_hand_written_dra_job_asking_twice_for_its_gpus_is_refused_beside_the_upstream_examples(tmp_path, upstream):
    """NVIDIA's and DRANET's own DRA examples pass strictly (the ComputeDomain, DeviceClasses and claim templates have
    schemas); a job whose workers claim their GPUs and ask for nvidia.com/gpu too is refused at that line, and
    passes once the extended resource is gone."""
    for file in [*(upstream / "dra" / "dranet").glob("examples__*.yaml"),
                 upstream / "dra" / "nvidia-dra-driver-gpu" / "demo__specs__imex__nvbandwidth-test-job.yaml"]:
        shutil.copy(file, tmp_path / file.name)
    job = tmp_path / "job.yaml"
    job.write_text(DRA_JOB, encoding="utf-8")
    refused = invoke_mpigen("check", "--no-helm", "--strict", "--output", "json", tmp_path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    found = [(f["source"], f["rule"], f["line"], f["message"].split(":")[0])
             for f in json.loads(refused.stdout)["findings"]]
    line = DRA_JOB.splitlines().index("                nvidia.com/gpu: 4") + 1
    assert found == [(job.as_posix(), "devices", line, "the pod claims nvidia.com/gpu devices through DRA (claim gpus, "
                      "request gpus")], found
    job.write_text(DRA_JOB.replace("                nvidia.com/gpu: 4\n", "                cpu: 4\n"), encoding="utf-8")
    fixed = invoke_mpigen("check", "--no-helm", "--strict", tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert findings(fixed.stdout) == ["0 error(s), 0 warning(s) in 9 document(s) of 0 chart(s) and 6 manifest file(s)"]


REFUSED_NAMES = """\
apiVersion: v1
kind: Pod
metadata: {name: A_B.., namespace: hpc}
spec:
  containers:
  - {name: "C!", image: "busybox:1.36"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ../x, namespace: hpc}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: Kube System}
---
apiVersion: v1
kind: Pod
metadata: {generateName: Train., namespace: hpc}
spec:
  volumes: [{name: Data, emptyDir: {}}]
  containers:
  - {name: c, image: "busybox:1.36", ports: [{containerPort: 22, name: SSH_PORT_OF_RANK}]}
"""


def test_names_the_api_server_refuses_are_findings(tmp_path):
    # The second red team's case: main passed all four; `kubectl apply` refuses each. And the review's: main passed
    # a generateName, a volume name and a container port name that the API server refuses.
    (tmp_path / "objects.yaml").write_text(REFUSED_NAMES, encoding="utf-8")
    result = invoke_mpigen("check", "--no-helm", "--output", "json", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    refused = [(f["object"], f["path"], f["message"].split(": ")[0], f["message"].split('"')[1])
               for f in json.loads(result.stdout)["findings"] if f["rule"] == "names"]
    assert refused == [("Pod/A_B..", ".metadata.name", "metadata.name", "A_B.."),
                       ("Pod/A_B..", ".spec.containers[0].name", "spec.containers[0].name", "C!"),
                       ("ConfigMap/../x", ".metadata.name", "metadata.name", "../x"),
                       ("ConfigMap/settings", ".metadata.namespace", "metadata.namespace", "Kube System"),
                       ("Pod/?", ".metadata.generateName", "metadata.generateName", "Train."),
                       ("Pod/?", ".spec.volumes[0].name", "spec.volumes[0].name", "Data"),
                       *[("Pod/?", ".spec.containers[0].ports[0].name", "spec.containers[0].ports[0].name",
                          "SSH_PORT_OF_RANK")] * 3]


def test_the_four_names_are_found_under_strict_and_no_other_rule_speaks_of_them(tmp_path):
    # `--strict` makes warnings errors; the four names stay exactly the names rule's findings, and the new built-in
    # rules (quantities, pod-spec) find nothing else in these valid pods.
    (tmp_path / "objects.yaml").write_text(REFUSED_NAMES, encoding="utf-8")
    result = invoke_mpigen("check", "--no-helm", "--strict", "--output", "json", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    found = json.loads(result.stdout)["findings"]
    assert {f["rule"] for f in found} == {"names"}
    assert [(f["object"], f["path"]) for f in found][:4] == [
        ("Pod/A_B..", ".metadata.name"), ("Pod/A_B..", ".spec.containers[0].name"), ("ConfigMap/../x", ".metadata.name"),
        ("ConfigMap/settings", ".metadata.namespace")]


def test_a_hand_written_job_moving_its_pods_to_another_network_is_refused(tmp_path):
    """The second red team's annotation in a hand-written MPIJob, a Volcano Job task attaching kube-system's bridge,
    and a PriorityClass taking a built-in's name: each an error, as the cluster would take them."""
    job = BROKEN_MPIJOB.replace("replicas: 2", "replicas: 1").replace(
        "            k8s.v1.cni.cncf.io/networks: rail9\n",
        "            k8s.v1.cni.cncf.io/networks: rail9\n            v1.multus-cni.io/default-network: host-bridge\n")
    (tmp_path / "job.yaml").write_text(job + "---\n" + RAIL9_NAD, encoding="utf-8")
    (tmp_path / "vcjob.yaml").write_text(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v, namespace: hpc}\nspec:\n  tasks:\n"
        "  - name: worker\n    replicas: 1\n    template:\n      metadata:\n        annotations:\n"
        "          k8s.v1.cni.cncf.io/networks: kube-system/host-bridge\n"
        "      spec: {containers: [{name: w, image: busybox}]}\n", encoding="utf-8")
    (tmp_path / "priority.yaml").write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                                            "metadata: {name: system-node-critical}\nvalue: 1000\n", encoding="utf-8")
    result = invoke_mpigen("check", "--no-helm", tmp_path)
    assert result.returncode == 1, result.stdout
    lines = findings(result.stdout)
    job_file, vcjob_file, priority_file = (f"{(tmp_path / name).as_posix()}" for name in
                                           ("job.yaml", "vcjob.yaml", "priority.yaml"))
    assert (f"{job_file}: MPIJob/pi: .spec.mpiReplicaSpecs.Worker.template.metadata.annotations"
            '["v1.multus-cni.io/default-network"]: v1.multus-cni.io/default-network names kube-system/host-bridge: '
            "Multus replaces the pod's cluster network (eth0) with that attachment") in "\n".join(lines)
    assert any(line.startswith(f"{vcjob_file}: Job/v: .spec.tasks[0].template.metadata.annotations"
                               '["k8s.v1.cni.cncf.io/networks"]: k8s.v1.cni.cncf.io/networks attaches '
                               "kube-system/host-bridge, a network of namespace kube-system") for line in lines), lines
    assert any(line.startswith(f"{priority_file}: PriorityClass/system-node-critical: .metadata.name: PriorityClass "
                               "system-node-critical: Kubernetes keeps priority class names starting with `system-`")
               for line in lines), lines
    assert lines[-1].startswith("3 error(s)"), lines
    assert "Traceback" not in result.stderr


CONTROLLER_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: reader, namespace: argocd}
spec:
  priorityClassName: system-cluster-critical
  containers:
  - name: c
    image: busybox
    env:
    - name: ADMIN
      valueFrom: {secretKeyRef: {name: argocd-secret, key: admin.password}}
"""


def test_a_hand_written_job_in_a_controllers_namespace_at_system_priority_is_refused(tmp_path):
    """The second review's case: the same Pod as an MPIJob's worker is two errors (the namespace, the priority class);
    as a plain Pod it may be Argo CD's own, so reading argocd-secret there is a warning; a device plugin's DaemonSet in
    kube-system at system-node-critical is the platform's and passes."""
    (tmp_path / "pod.yaml").write_text(CONTROLLER_POD, encoding="utf-8")
    job = BROKEN_MPIJOB.replace("replicas: 2", "replicas: 1").replace("namespace: hpc", "namespace: argocd").replace(
        "            k8s.v1.cni.cncf.io/networks: rail9\n        spec:\n",
        "            k8s.v1.cni.cncf.io/networks: rail9\n        spec:\n"
        "          priorityClassName: system-cluster-critical\n")
    (tmp_path / "job.yaml").write_text(job + "---\n" + RAIL9_NAD.replace("hpc", "argocd"), encoding="utf-8")
    (tmp_path / "plugin.yaml").write_text(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: plugin, namespace: kube-system}\nspec:\n"
        "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      priorityClassName: system-node-critical\n      containers: [{name: c, image: busybox}]\n",
        encoding="utf-8")
    result = invoke_mpigen("check", "--no-helm", "--output", "json", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    said = [(f["source"].rpartition("/")[2], f["object"], f["path"], f["severity"], f["message"].split(":")[0])
            for f in json.loads(result.stdout)["findings"] if f["rule"] in ("names", "scheduling")]
    assert said == [
        ("job.yaml", "MPIJob/pi", ".metadata.namespace", "error", "namespace argocd belongs to Argo CD"),
        ("pod.yaml", "Pod/reader", ".metadata.namespace", "warning",
         "namespace argocd belongs to Argo CD, and this Pod reads Secret(s) argocd-secret there"),
        ("job.yaml", "MPIJob/pi", ".spec.mpiReplicaSpecs.Worker.template.spec.priorityClassName", "error",
         "priorityClassName system-cluster-critical")]


def test_an_existing_nad_given_with_crds_satisfies_the_network_rule(tmp_path):
    (tmp_path / "job.yaml").write_text(BROKEN_MPIJOB.replace("replicas: 2", "replicas: 1"), encoding="utf-8")
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    (cluster / "nad.yaml").write_text(RAIL9_NAD, encoding="utf-8")
    result = invoke_mpigen("check", "--no-helm", tmp_path / "job.yaml", "--crds", cluster)
    assert result.returncode == 0, result.stdout
    assert findings(result.stdout)[0].startswith("0 error(s)")


def test_a_kind_without_schema_is_a_warning_or_under_strict_an_error(tmp_path):
    (tmp_path / "w.yaml").write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n", encoding="utf-8")
    relaxed = invoke_mpigen("check", "--no-helm", tmp_path)
    strict = invoke_mpigen("check", "--no-helm", "--strict", tmp_path)
    assert relaxed.returncode == 0 and "warning: no schema known for example.com/v1 Widget" in relaxed.stdout
    assert strict.returncode == 1 and "no schema known for example.com/v1 Widget" in strict.stdout


def test_json_and_junit_outputs(tmp_path):
    (tmp_path / "job.yaml").write_text(BROKEN_MPIJOB, encoding="utf-8")
    as_json = invoke_mpigen("check", "--no-helm", "--output", "json", tmp_path)
    data = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and data["summary"]["errors"] == 2
    assert {f["rule"] for f in data["findings"]} == {"mpi-operator", "network"}
    as_junit = invoke_mpigen("check", "--no-helm", "--output", "junit", tmp_path)
    suite = ET.fromstring(as_junit.stdout).find("testsuite")
    assert as_junit.returncode == 1 and (suite.get("tests"), suite.get("failures")) == ("1", "1")
    # one failure per finding, each of its rule (main grouped both under the first one's rule)
    assert sorted(failure.get("type") for failure in suite.iter("failure")) == ["mpi-operator", "network"]


def test_a_hand_edited_chart_is_caught(helm, tmp_path):
    chart = shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "resnet50-dgx", tmp_path / "resnet50-dgx")
    template = chart / "templates" / "mpijob.yaml"
    template.write_text(template.read_text(encoding="utf-8").replace("restartPolicy: Never", "restartPolicy: Always"),
                        encoding="utf-8")
    result = invoke_mpigen("check", "--helm", helm, chart)
    assert result.returncode == 1
    run = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))["annotations"]["mpigen/mpijob"]
    assert (f"{chart.as_posix()}/templates/mpijob.yaml: MPIJob/{run}: .spec.mpiReplicaSpecs.Worker.restartPolicy: "
            'spec.mpiReplicaSpecs[Worker].restartPolicy: Unsupported value: "Always": supported values: "Never", '
            '"OnFailure"') in result.stdout.splitlines()


@pytest.mark.parametrize("args", [["--kube-version", "1.20"], ["--kube-version", "one"], ["--helm", "/no/such/helm"],
                                  ["--output", "xml"]])
def test_usage_errors_exit_2(args):
    result = run_mpigen("check", *args, CHARTS)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_missing_path_is_a_usage_error():
    result = run_mpigen("check", "/no/such/charts")
    assert result.returncode == 2


def test_a_program_that_is_not_helm_is_a_usage_error():
    result = run_mpigen("check", "--helm", "/bin/true", CHARTS)
    assert result.returncode == 2 and "does not answer `version` like Helm" in result.stderr


def test_nothing_to_check_is_not_a_pass(tmp_path):
    result = run_mpigen("check", "--no-helm", tmp_path)
    assert result.returncode == 1 and "no charts or manifest files to check" in result.stdout


def test_one_job_chart_with_the_infra_chart_as_context(helm):
    alone = invoke_mpigen("check", "--helm", helm, CHARTS / "dgx-lab" / "jobs" / "resnet50-dgx")
    assert alone.returncode == 1 and alone.stdout.count("no NetworkAttachmentDefinition ml-training/rail") == 4
    together = invoke_mpigen("check", "--helm", helm, CHARTS / "dgx-lab" / "jobs" / "resnet50-dgx",
                          "--context", CHARTS / "dgx-lab" / "infra")
    assert together.returncode == 0, together.stdout
    assert "2 document(s) of 1 chart(s)" in together.stdout


def test_helm_template_errors_keep_helms_message(helm, tmp_path):
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "templates" / "cm.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ required "set x" .Values.x }}\n', encoding="utf-8")
    result = invoke_mpigen("check", "--helm", helm, chart)
    assert result.returncode == 1
    assert "helm template: Error: execution error at (c/templates/cm.yaml:4:11): set x" in result.stdout


def test_a_chart_that_ships_its_crd_is_checked_against_it(helm, tmp_path):
    chart = tmp_path / "w"
    (chart / "templates").mkdir(parents=True)
    (chart / "crds").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: w\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "crds" / "widget.yaml").write_text("""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
""", encoding="utf-8")
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: %s}\n"
    (chart / "templates" / "w.yaml").write_text(widget % "3", encoding="utf-8")
    assert run_mpigen("check", "--strict", "--helm", helm, chart).returncode == 0
    (chart / "templates" / "w.yaml").write_text(widget % "big", encoding="utf-8")
    result = run_mpigen("check", "--strict", "--helm", helm, chart)
    assert result.returncode == 1 and "Widget/w: .spec.size:" in result.stdout


def test_a_linked_chart_folder_inside_the_checked_folder_is_followed_once(tmp_path):
    shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", tmp_path / "charts" / "real" / "pi")
    (tmp_path / "charts" / "alias").symlink_to(tmp_path / "charts" / "real", target_is_directory=True)
    result = invoke_mpigen("check", "--no-helm", tmp_path / "charts")
    assert result.returncode == 0 and "2 document(s) of 1 chart(s)" in result.stdout


def test_a_link_out_of_the_checked_folder_is_a_finding_not_followed(tmp_path):
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "pi").symlink_to(CHARTS / "dgx-lab" / "jobs" / "pi", target_is_directory=True)
    (tmp_path / "charts" / "passwd.yaml").symlink_to("/etc/passwd")
    result = invoke_mpigen("check", "--no-helm", tmp_path / "charts")
    assert result.returncode == 1
    shown = (tmp_path / "charts").as_posix()
    assert f"{shown}/passwd.yaml: is a link to '/etc/passwd', outside {shown}: not checked." in result.stdout
    assert f"{shown}/pi: is a link to '{CHARTS / 'dgx-lab' / 'jobs' / 'pi'}', outside {shown}" in result.stdout
    assert "root:" not in result.stdout and "0 document(s) of 0 chart(s)" in result.stdout


def test_a_broken_crd_file_is_reported_once(tmp_path):
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "bad.yaml").write_text("a: [\n", encoding="utf-8")
    result = invoke_mpigen("check", "--no-helm", CHARTS, "--crds", crds)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if "bad.yaml" in line]
    assert len(lines) == 1 and ": not valid YAML:" in lines[0], result.stdout


def test_a_patch_version_is_accepted():
    # dgx-lab runs 1.31 (the DRA clusters' charts need 1.34, and are refused at 1.31: test_check_schemas.py).
    assert invoke_mpigen("check", "--no-helm", "--kube-version", "1.31.4", CHARTS / "dgx-lab").returncode == 0


def test_an_unreadable_crd_is_a_finding_even_when_nothing_needs_a_schema(tmp_path):
    """The --crds folders are read whatever the targets hold: before, a run whose targets rendered no object
    (here a file of comments only) never read them, and a broken CRD file passed with exit 0."""
    (tmp_path / "empty.yaml").write_text("# nothing to apply yet\n", encoding="utf-8")
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "widget.yaml").write_text("apiVersion: apiextensions.k8s.io/v1\nkind: [CustomResourceDefinition\n",
                                      encoding="utf-8")
    result = invoke_mpigen("check", "--no-helm", tmp_path / "empty.yaml", "--crds", crds)
    assert result.returncode == 1, result.stdout
    assert f"{(crds / 'widget.yaml').as_posix()}: not valid YAML" in result.stdout, result.stdout
