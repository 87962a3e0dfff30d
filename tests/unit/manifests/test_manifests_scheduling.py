"""generator/manifests/scheduling.py: what each gang scheduler's charts carry, on the example fleet.

Expected numbers are worked out by hand from the profiles: a DGX-1 node (profiles/hardware/dgx-1.yaml) has
2 sockets x 20 cores x 2 threads = 80 CPUs, 512 GiB, 8 GPUs; under sriov-network-operator each rail's PF gets
one VF per GPU (8); rdma-shared-dev-plugin shares a rail's HCA among up to 1000 containers (its own example's
rdmaHcaMax; host-network takes its devices from the same plugin). dgx-pod (kueue): queues vision and language of
4 of 8 nodes each, language may borrow 2. volcano-lab (volcano, host-network): queue training of 4 of 6 nodes,
experiments of 2. cpu-lab (coscheduling).

The #608 arithmetic is shown through real Helm 3 and 4: the gang's minimum follows the `workers` value.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CHARTS, PROFILES, CustomResourceSchemas, nvl72_edits, run_helm
from ruamel.yaml import YAML
from test_manifests_node_placement import _pod_specs

from mpigen.check.schemas import SchemaSet
from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests import build_infra, infra_chart_ref
from mpigen.manifests.scheduling import PODSET_GROUP
from mpigen.model import claimed
from mpigen.package import output_files
from mpigen.readback.findings import RenderedObject

KUEUE = "kueue.x-k8s.io/v1beta2"
RAILS = [f"rail{i}" for i in range(4)]


def objects(result: CompileResult, chart: str) -> list[dict[str, Any]]:
    (found,) = [c for c in result.charts if c.directory == chart]
    return [m.obj for m in found.manifests]


def of_kind(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"].get("namespace", "") + "/" + o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def mpijob(result: CompileResult, chart: str) -> dict[str, Any]:
    (found,) = of_kind(objects(result, chart), "MPIJob").values()
    return found


def write(result: CompileResult, root: Path) -> Path:
    for path, data in output_files(result.charts).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def yaml_file(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def load_all(text: str) -> list[dict[str, Any]]:
    return [doc for doc in YAML(typ="safe", pure=True).load_all(text) if doc is not None]


# --- kueue --------------------------------------------------------------------------------------------------------


def test_kueue_infra_carries_flavor_topology_queues_and_priorities(example: CompileResult) -> None:
    infra = objects(example, "dgx-pod/infra")
    flavors = of_kind(infra, "ResourceFlavor")
    assert list(flavors) == ["/dgx"]
    assert flavors["/dgx"]["spec"] == {"nodeLabels": {"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"},
                                       "topologyName": "dgx-pod"}
    (topology,) = of_kind(infra, "Topology").values()
    assert topology["metadata"]["name"] == "dgx-pod"
    assert topology["spec"]["levels"] == [{"nodeLabel": "fabric.example.com/block"},
                                          {"nodeLabel": "fabric.example.com/leaf-switch"},
                                          {"nodeLabel": "kubernetes.io/hostname"}]
    classes = of_kind(infra, "WorkloadPriorityClass")
    assert {name: c["value"] for name, c in classes.items()} == {"/production": 1000, "/research": 100}
    local = of_kind(infra, "LocalQueue")
    assert {name: q["spec"]["clusterQueue"] for name, q in local.items()} == {
        "team-vision/vision": "vision", "team-language/language": "language"}
    assert all(o["apiVersion"] == KUEUE for o in [*flavors.values(), topology, *classes.values(), *local.values()])


def test_cluster_queues_cover_every_resource_a_job_can_request_with_the_pools_capacity(example: CompileResult) -> None:
    queues = of_kind(objects(example, "dgx-pod/infra"), "ClusterQueue")
    vision, language = queues["/vision"]["spec"], queues["/language"]["spec"]
    rails = [f"openshift.io/rdma_{rail}" for rail in RAILS]
    for spec in (vision, language):
        (group,) = spec["resourceGroups"]
        assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu", *rails]
        assert spec["cohortName"] == "dgx-pod"
        assert spec["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    (flavor,) = vision["resourceGroups"][0]["flavors"]
    assert flavor["name"] == "dgx"
    four_nodes = {"cpu": 320, "memory": "2048Gi", "nvidia.com/gpu": 32, **{rail: 32 for rail in rails}}
    assert {r["name"]: r["nominalQuota"] for r in flavor["resources"]} == four_nodes
    assert not any("borrowingLimit" in r for r in flavor["resources"])  # vision borrows all the cohort has
    (flavor,) = language["resourceGroups"][0]["flavors"]
    two_nodes = {"cpu": 160, "memory": "1024Gi", "nvidia.com/gpu": 16, **{rail: 16 for rail in rails}}
    assert {r["name"]: r["borrowingLimit"] for r in flavor["resources"]} == two_nodes
    assert vision["namespaceSelector"] == {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-vision"]}]}


def test_a_dra_cluster_queue_covers_the_mapped_names_with_the_pools_capacity(example: CompileResult) -> None:
    """h100-dra (Kueue, dranet, `dra: {}`): its workers request no GPU and no rail resource, so its ClusterQueue covers
    the names Kueue's deviceClassMappings count claims under, exactly those the infra NOTES map (model/claimed.py),
    with the capacity of the queue's 4 DGX H100 nodes: 2 x 56 x 2 CPUs, 2048 GiB, 8 GPUs and 8 NICs (one a rail)
    each."""
    (queue,) = of_kind(objects(example, "h100-dra/infra"), "ClusterQueue").values()
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu", "dra.net/rdma-nic"]
    (flavor,) = group["flavors"]
    assert {r["name"]: r["nominalQuota"] for r in flavor["resources"]} == {
        "cpu": 896, "memory": "8192Gi", "nvidia.com/gpu": 32, "dra.net/rdma-nic": 32}
    (cluster,) = [c for c in example.fleet.clusters if c.name == "h100-dra"]
    mapped = claimed.cluster_mappings(cluster.dra, (pool.claimed for pool in cluster.pools))
    assert [m.name for m in mapped] == group["coveredResources"][2:]


def test_volcano_queues_of_a_dra_cluster_hold_only_what_pods_request(profiles_copy: Callable[..., Path]) -> None:
    """volcano-lab under DRA: Volcano's queues count pods' requests, which a claim is not (volcano-sh/volcano #4400),
    so queue training's capability (4 DGX-1 nodes) keeps the CPUs, memory and the rails its host-network pods still
    request, and no GPUs."""
    lab = (PROFILES / "clusters" / "volcano-lab.yaml").read_text(encoding="utf-8")
    lab = lab.replace('kubernetesVersion: "1.31"', 'kubernetesVersion: "1.34"').replace("nodePools:", "dra: {}\nnodePools:")
    result = compile_profiles([profiles_copy({"clusters/volcano-lab.yaml": lab})])
    assert result.ok, [d.format() for d in result.diagnostics]
    queue = of_kind(objects(result, "volcano-lab/infra"), "Queue")["/training"]
    assert queue["spec"]["capability"] == {"cpu": 320, "memory": "2048Gi",
                                           **{f"rdma/rdma_{rail}": 4000 for rail in RAILS}}


def test_a_kueue_job_carries_its_queue_and_priority_is_created_suspended_and_asks_for_its_topology(
        example: CompileResult) -> None:
    vision, bert = mpijob(example, "dgx-pod/jobs/vision-resnet50"), mpijob(example, "dgx-pod/jobs/language-bert")
    assert {k: v for k, v in vision["metadata"]["labels"].items() if k.startswith("kueue")} == {
        "kueue.x-k8s.io/queue-name": "vision", "kueue.x-k8s.io/priority-class": "production"}
    for job in (vision, bert):
        assert job["spec"]["runPolicy"]["suspend"] is True
        assert "schedulingPolicy" not in job["spec"]["runPolicy"]  # Kueue admits it whole; no PodGroup
    # Launcher and workers are one PodSet group asking for the same level (Kueue v0.15 on, #7061; tas_validation.go:
    # a group is two pod sets, one of one pod, with the same topology request), so the launcher lands in the workers'
    # domain instead of anywhere in the flavor.
    for job, key, label in ((vision, "required", "fabric.example.com/leaf-switch"),
                            (bert, "preferred", "fabric.example.com/block")):
        group = {f"kueue.x-k8s.io/podset-{key}-topology": label, "kueue.x-k8s.io/podset-group-name": PODSET_GROUP}
        for replica in ("Launcher", "Worker"):
            annotations = job["spec"]["mpiReplicaSpecs"][replica]["template"]["metadata"]["annotations"]
            assert {k: v for k, v in annotations.items() if k.startswith("kueue")} == group, replica
    assert bert["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "language"


def test_a_job_larger_than_one_nvlink_domain_is_cut_into_slices_of_one_domain(
        profiles_copy: Callable[..., Path]) -> None:
    """36 GB200 trays under one block of an NVL72 pod: two slices of 18 trays, each within one NVLink domain (GFD's
    `nvidia.com/gpu.clique`). Kueue (v0.13.0 and later, #5596) wants the slice level below the podset's and the size
    with it, and no `podset-group-name` beside them (pkg/controller/jobframework/tas_validation.go); the chart takes
    only worker counts Kueue can cut into such slices."""
    result = compile_profiles([profiles_copy(nvl72_edits())])
    assert result.ok, [d.format() for d in result.diagnostics]
    replicas = mpijob(result, "dgx-pod/jobs/vision-resnet50")["spec"]["mpiReplicaSpecs"]
    kueue = {k: v for k, v in replicas["Worker"]["template"]["metadata"]["annotations"].items() if "kueue" in k}
    assert kueue == {
        "kueue.x-k8s.io/podset-required-topology": "fabric.example.com/block",
        "kueue.x-k8s.io/podset-slice-required-topology": "nvidia.com/gpu.clique",
        "kueue.x-k8s.io/podset-slice-size": "18"}
    assert not [k for k in replicas["Launcher"]["template"].get("metadata", {}).get("annotations", {}) if "kueue" in k]
    (chart,) = [c for c in result.charts if c.directory == "dgx-pod/jobs/vision-resnet50"]
    workers = json.loads(dict(chart.files)["values.schema.json"])["properties"]["workers"]
    assert (workers["multipleOf"], workers["maximum"]) == (18, 36)  # one required block of the pool's 72 trays
    vision = mpijob(compile_profiles([profiles_copy(nvl72_edits(trays=18))]), "dgx-pod/jobs/vision-resnet50")
    annotations = vision["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if "kueue" in k} == {  # one NVLink domain holds it: no slices
        "kueue.x-k8s.io/podset-required-topology": "fabric.example.com/block",
        "kueue.x-k8s.io/podset-group-name": PODSET_GROUP}  # and, without slices, the launcher beside the workers


def test_a_kueue_job_cannot_be_started_without_admission_from_the_chart(example: CompileResult, tmp_path: Path,
                                                                      helm: Path) -> None:
    root = write(example, tmp_path / "charts")
    chart = root / "dgx-pod" / "jobs" / "vision-resnet50"
    schema = json.loads((chart / "values.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["suspend"]["const"] is True
    refused = run_helm(helm, "template", "x", chart, "--set", "suspend=false", check=False)
    assert refused.returncode != 0 and "suspend" in refused.stderr
    (job,) = [d for d in load_all(run_helm(helm, "template", "x", chart).stdout) if d["kind"] == "MPIJob"]
    assert job["spec"]["runPolicy"]["suspend"] is True
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "vision"


# --- volcano and coscheduling -------------------------------------------------------------------------------------


def test_volcano_infra_carries_its_queues_and_priority_classes(example: CompileResult) -> None:
    infra = objects(example, "volcano-lab/infra")
    queues = of_kind(infra, "Queue")
    rails = {f"rdma/rdma_{rail}" for rail in RAILS}
    training, experiments = queues["/training"], queues["/experiments"]
    assert training["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert training["spec"] == {"capability": {"cpu": 320, "memory": "2048Gi", "nvidia.com/gpu": 32,
                                               **{rail: 4000 for rail in rails}}, "reclaimable": True, "weight": 2}
    assert experiments["spec"]["capability"]["nvidia.com/gpu"] == 16 and "weight" not in experiments["spec"]
    (priority,) = of_kind(infra, "PriorityClass").values()
    assert priority["apiVersion"] == "scheduling.k8s.io/v1"
    assert (priority["metadata"]["name"], priority["value"], priority["globalDefault"]) == ("training-high", 1000, False)


def test_gang_jobs_carry_the_scheduling_policy_mpi_operator_makes_the_podgroup_from(example: CompileResult) -> None:
    volcano = mpijob(example, "volcano-lab/jobs/volcano-allreduce")["spec"]
    assert volcano["launcherCreationPolicy"] == "WaitForWorkersReady"
    # mpi-operator passes queue and priorityClass to a Volcano PodGroup, and no schedule timeout.
    assert volcano["runPolicy"]["schedulingPolicy"] == {"minAvailable": 4, "queue": "training",
                                                        "priorityClass": "training-high"}
    cosched = mpijob(example, "cpu-lab/jobs/cpu-pi")["spec"]
    assert cosched["runPolicy"]["schedulingPolicy"] == {"minAvailable": 2, "scheduleTimeoutSeconds": 300}
    for chart in ("dgx-pod/jobs/vision-resnet50", "dgx-pod/jobs/language-bert"):  # Kueue admits the job whole
        assert "schedulingPolicy" not in mpijob(example, chart)["spec"]["runPolicy"]


def test_608_without_a_declared_scheduler_the_gang_is_still_the_workers(example: CompileResult) -> None:
    """A cluster that declares no scheduler may still run mpi-operator with `--gang-scheduling`, whose PodGroup then
    counts the launcher where minAvailable is left out (podgroup.go `calculateMinAvailable`: workers + 1), which
    WaitForWorkersReady creates last: #608. Without the flag the operator has no PodGroup controller
    (mpi_job_controller.go: `PodGroupCtrl` is set only for a `GangSchedulingName`) and reads schedulingPolicy nowhere
    else, and types.go says minAvailable is passed on only "if the gang-scheduling isn't empty" (mpi-operator v0.8.x,
    facts 1): the minimum is harmless there."""
    for chart, workers in (("dgx-lab/jobs/pi", 2), ("dgx-lab/jobs/resnet50-dgx", 2),
                           ("netapp-lab/jobs/netapp-resnet50", 2)):
        spec = mpijob(example, chart)["spec"]
        assert spec["launcherCreationPolicy"] == "WaitForWorkersReady"
        assert spec["mpiReplicaSpecs"]["Worker"]["replicas"] == workers
        assert spec["runPolicy"]["schedulingPolicy"] == {"minAvailable": workers}, chart


def test_608_without_a_declared_scheduler_a_running_job_keeps_its_name_and_spec(example: CompileResult) -> None:
    """The run identity is taken over the profiles, never the compiled spec (generator/resolve/identity.py), and a
    run that continues keeps the spec it started with: the committed charts' runs are renamed by nothing here."""
    kept = compile_profiles([PROFILES], committed_in=CHARTS)
    assert kept.ok, [d.format() for d in kept.diagnostics]
    for chart in ("dgx-lab/jobs/pi", "netapp-lab/jobs/netapp-resnet50"):
        committed = yaml_file(CHARTS / chart / "Chart.yaml")["annotations"]["mpigen/mpijob"]
        assert mpijob(kept, chart)["metadata"]["name"] == committed
        assert "schedulingPolicy" not in mpijob(kept, chart)["spec"]["runPolicy"], "held back until its next run"


# --- mpi-operator #608 --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def at_startup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example fleet with volcano-allreduce's launcher created at once (AtStartup), written out."""
    root = tmp_path_factory.mktemp("fleet")
    profiles = root / "profiles"
    shutil.copytree(PROFILES, profiles)
    job = profiles / "jobs" / "volcano-allreduce.yaml"
    job.write_text(job.read_text(encoding="utf-8").replace("scheduling:", "launcherCreationPolicy: AtStartup\n"
                                                           "scheduling:"), encoding="utf-8")
    result = compile_profiles([profiles])
    assert result.ok, [d.format() for d in result.diagnostics]
    return write(result, root / "charts")


@pytest.mark.parametrize("workers", [1, 2, 4])  # 4: the most queue `training` admits
def test_608_the_gang_is_the_workers_under_wait_for_workers_ready_and_one_more_at_startup(
        example: CompileResult, at_startup: Path, tmp_path: Path, helm: Path, workers: int) -> None:
    """1, 2 and many workers, each through real Helm: the launcher is created only once the workers run under
    WaitForWorkersReady, so the gang must not count it; at start-up it exists from the beginning and must."""
    waiting = write(example, tmp_path / "charts") / "volcano-lab" / "jobs" / "volcano-allreduce"
    for chart, launcher in ((waiting, 0), (at_startup / "volcano-lab" / "jobs" / "volcano-allreduce", 1)):
        rendered = run_helm(helm, "template", "x", chart, "--set", f"workers={workers}").stdout
        (job,) = [d for d in load_all(rendered) if d["kind"] == "MPIJob"]
        assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == workers
        assert job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] == workers + launcher
        assert job["spec"]["launcherCreationPolicy"] == ("WaitForWorkersReady" if launcher == 0 else "AtStartup")


# --- upstream CRDs and built-in schemas ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scheduling_crds(upstream: Path) -> CustomResourceSchemas:
    kueue = upstream / "scheduling" / "kueue"
    return CustomResourceSchemas([
        *(kueue / f"kueue.x-k8s.io_{kind}.yaml" for kind in
          ("clusterqueues", "localqueues", "resourceflavors", "topologies", "workloadpriorityclasses")),
        upstream / "scheduling" / "scheduling.volcano.sh_queues.yaml",
        upstream / "mpi-operator" / "kubeflow.org_mpijobs.yaml"])


SCHEDULING_KINDS = {"ResourceFlavor", "ClusterQueue", "LocalQueue", "Topology", "WorkloadPriorityClass", "Queue",
                    "MPIJob"}


def test_every_scheduling_object_and_gang_job_passes_its_upstream_crd(example: CompileResult,
                                                                      scheduling_crds: CustomResourceSchemas) -> None:
    seen: set[str] = set()
    for chart in example.charts:
        if not chart.directory.startswith(("dgx-pod/", "volcano-lab/", "cpu-lab/", "h100-dra/")):
            continue
        for manifest in chart.manifests:
            if manifest.obj["kind"] in SCHEDULING_KINDS:
                assert scheduling_crds.problems(manifest.obj) == [], (chart.directory, manifest.obj["kind"])
                seen.add(manifest.obj["kind"])
    assert seen == SCHEDULING_KINDS


def test_the_upstream_crd_check_is_not_vacuous(example: CompileResult, scheduling_crds: CustomResourceSchemas) -> None:
    queue = dict(of_kind(objects(example, "dgx-pod/infra"), "ClusterQueue")["/vision"])
    queue["spec"] = {**queue["spec"], "cohort": "dgx-pod"}  # v1beta1's name of the field
    assert [p.split(":")[0] for p in scheduling_crds.problems(queue)] == [".spec.cohort"]
    topology = dict(of_kind(objects(example, "dgx-pod/infra"), "Topology")["/dgx-pod"])
    topology["spec"] = {"levels": []}
    assert scheduling_crds.problems(topology)


def test_priority_classes_pass_kubernetes_own_schema(example: CompileResult) -> None:
    schema_set = SchemaSet("1.31", strict=True)
    (priority,) = of_kind(objects(example, "volcano-lab/infra"), "PriorityClass").values()
    assert schema_set.check(RenderedObject("priority-classes.yaml", priority)) == []
    broken = {**priority, "value": "high"}
    assert [f.path for f in schema_set.check(RenderedObject("priority-classes.yaml", broken))] == [".value"]


def test_a_cluster_without_a_scheduler_gets_no_scheduling_objects(example: CompileResult) -> None:
    for chart in ("dgx-lab/infra", "netapp-lab/infra"):
        kinds = {o["kind"] for o in objects(example, chart)}
        assert not kinds & SCHEDULING_KINDS - {"MPIJob"} and "PriorityClass" not in kinds


def test_coscheduling_priority_is_the_pods_own(profiles_copy: Callable[..., Path]) -> None:
    """The scheduler-plugins PodGroup has no priority and mpi-operator does not pass schedulingPolicy.priorityClass
    to it: under coscheduling the launcher's and the workers' pods name the PriorityClass themselves."""
    timeout = "  scheduleTimeoutSeconds: 300\n"
    cluster = (PROFILES / "clusters" / "cpu-lab.yaml").read_text(encoding="utf-8").replace(
        timeout, timeout + "  priorityClasses: [{name: urgent, value: 500}]\n")
    job = (PROFILES / "jobs" / "cpu-pi.yaml").read_text(encoding="utf-8") + "scheduling:\n  priorityClass: urgent\n"
    result = compile_profiles([profiles_copy({"clusters/cpu-lab.yaml": cluster, "jobs/cpu-pi.yaml": job})])
    assert result.ok, [d.format() for d in result.diagnostics]
    spec = mpijob(result, "cpu-lab/jobs/cpu-pi")["spec"]
    assert spec["runPolicy"]["schedulingPolicy"] == {"minAvailable": 2, "scheduleTimeoutSeconds": 300}
    for role in ("Launcher", "Worker"):
        assert spec["mpiReplicaSpecs"][role]["template"]["spec"]["priorityClassName"] == "urgent"
    (priority,) = of_kind(objects(result, "cpu-lab/infra"), "PriorityClass").values()
    assert (priority["metadata"]["name"], priority["value"]) == ("urgent", 500)
    for chart in ("dgx-pod/jobs/vision-resnet50", "volcano-lab/jobs/volcano-allreduce"):  # not under the others
        template = mpijob(result, chart)["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        assert "priorityClassName" not in template


def test_without_a_gang_scheduler_a_priority_class_is_the_pods_own(profiles_copy):
    """kube-scheduler orders pending pods by their `priorityClassName`'s value and preempts lower ones for them; the
    PriorityClass must exist (the Priority admission plugin refuses a pod naming another), so the infra chart
    carries it, never as the cluster's default. An MPIJob's and a TrainJob's pods carry it (a Volcano Job needs the
    volcano scheduler, whose own priority is its PodGroup's)."""
    lab = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    lab += "scheduling:\n  scheduler: none\n  priorityClasses: [{name: batch-high, value: 1000}]\n"
    edits = {"clusters/dgx-lab.yaml": lab}
    for path in ("jobs/resnet50-dgx.yaml", "jobs/resnet50-trainjob.yaml"):
        edits[path] = (PROFILES / path).read_text(encoding="utf-8") + "scheduling: {priorityClass: batch-high}\n"
    result = compile_profiles([profiles_copy(edits)])
    assert result.ok, [d.format() for d in result.diagnostics]
    jobs = {job.name: job for job in result.fleet.jobs}
    for name in ("resnet50-dgx", "resnet50-trainjob"):
        for role, spec in _pod_specs(jobs[name]).items():
            assert spec["priorityClassName"] == "batch-high", (name, role)
    assert "priorityClassName" not in _pod_specs(jobs["pi"])["worker"]  # a job that names none
    cluster = jobs["resnet50-dgx"].cluster
    classes = [m.obj for m in build_infra(cluster, infra_chart_ref(cluster), tuple(result.fleet.jobs_of(cluster)))
               if m.obj["kind"] == "PriorityClass"]
    assert [(c["apiVersion"], c["metadata"]["name"], c["value"], c["globalDefault"]) for c in classes] == [
        ("scheduling.k8s.io/v1", "batch-high", 1000, False)]
