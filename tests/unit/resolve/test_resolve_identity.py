"""A run's identity (generator/resolve/identity.py): which profile edits rename a run, and which never do."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from conftest import CHARTS, PROFILES

from mpigen.commands.pipeline import check_profiles
from mpigen.manifests.run_name import mpijob_name
from mpigen.resolve import identity

SCHEMAS = PROFILES.parent / "schemas"


def _schema(kind: str) -> dict:
    return json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))


# --- every field is on one side --------------------------------------------------------------------------


def test_every_describing_job_field_is_a_field_of_the_job_schema():
    fields = set(_schema("job")["properties"])
    assert set(identity.DESCRIBING_JOB_FIELDS) <= fields
    assert set(identity.DESCRIBING_RUN_POLICY) <= set(_schema("job")["properties"]["runPolicy"]["properties"])
    assert set(identity.SIZE_FIELDS) <= fields


def test_every_cluster_field_is_counted_or_said_to_shape_no_run():
    """A field added to the cluster schema must be placed on one side, with its reason: a test, not a habit."""
    cluster = _schema("cluster")["properties"]
    assert set(cluster) == set(identity.CLUSTER_PARTS) | set(identity.CLUSTER_ELSEWHERE)
    assert not set(identity.CLUSTER_PARTS) & set(identity.CLUSTER_ELSEWHERE)
    assert set(cluster["nodePools"]["items"]["properties"]) == {*identity.POOL_PARTS, "nodes", "acceptance"}
    assert set(cluster["rails"]["items"]["properties"]) == {*identity.RAIL_PARTS, "ipam", "vlan", "vlanQoS"}
    assert set(cluster["network"]["properties"]) == {*identity.NETWORK_PARTS, "devicePluginNamespace", "cniVersion",
                                                     "operatorNamespace", "numVfs", "infinibandGuids"}
    assert set(cluster["scheduling"]["properties"]) == {*identity.SCHEDULING_PARTS, "queues", "priorityClasses",
                                                        "topology", "waitForPodsReady", "kueueVersion"}


def test_the_fixed_defaults_are_what_a_profile_that_leaves_them_out_gets():
    """Scheme 1's defaults are today's: the schemas' (or, where the schema states none, generator/model/defaults.py's)."""
    from mpigen.model import defaults
    job, cluster = _schema("job")["properties"], _schema("cluster")["properties"]
    unstated = {("job", "rerun"): 0, ("job", "launcherCreationPolicy"): defaults.LAUNCHER_CREATION_POLICY,
                ("job", "runPolicy", "cleanPodPolicy"): defaults.CLEAN_POD_POLICY}
    for path, value in identity.FIXED_DEFAULTS.items():
        node = job if path[0] == "job" else cluster[path[0]]["properties"]
        for key in path[1:-1]:
            node = node[key]["properties"]
        assert node[path[-1]].get("default", unstated.get(path)) == value, path


def test_the_fixed_defaults_are_frozen_values_whatever_names_them():
    """FIXED_DEFAULTS name upstream values by their vocabulary's constants: the values stay scheme 1's, to the letter
    and the type, or every run written with one of them would be renamed."""
    assert dict(identity.FIXED_DEFAULTS) == {
        ("job", "mpiImplementation"): "OpenMPI", ("job", "openMPIVersion"): 4, ("job", "openMPIUcx"): True,
        ("job", "rerun"): 0, ("job", "launcherCreationPolicy"): "WaitForWorkersReady",
        ("job", "runPolicy", "cleanPodPolicy"): "Running", ("job", "scheduling", "topology", "mode"): "required",
        ("network", "sshPort"): 2222, ("scheduling", "scheduler"): "none"}
    assert all(type(value) in (str, int, bool) for value in identity.FIXED_DEFAULTS.values())


def test_the_committed_charts_record_the_identities_this_release_computes():
    """The example fleet's charts say what each run is: a change of the scheme would rename every run of every
    fleet, so it must be a new SCHEME, never an edit of this one."""
    result = check_profiles([PROFILES])
    for job in result.fleet.jobs:
        chart = yaml.safe_load((CHARTS / job.cluster.name / "jobs" / job.name / "Chart.yaml").read_text())
        assert chart["annotations"]["mpigen/run-identity"] == job.identity, job.name


# --- edits, both ways ---------------------------------------------------------------------------------------


def _names(root: Path) -> dict[str, str]:
    result = check_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    return {job.name: mpijob_name(job) for job in result.fleet.jobs}


@pytest.fixture(scope="module")
def example_names() -> dict[str, str]:
    return _names(PROFILES)


def _edited(profiles_copy, path: str, old: str, new: str) -> Path:
    text = (PROFILES / path).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    return profiles_copy({path: text.replace(old, new)})


JOB = "jobs/resnet50-dgx.yaml"
CLUSTER = "clusters/dgx-lab.yaml"
KEEPING = {
    "labels": (JOB, "shmSize: 64Gi\n", "shmSize: 64Gi\nlabels:\n  team: vision\n"),
    "annotations": (JOB, "shmSize: 64Gi\n", "shmSize: 64Gi\nannotations:\n  example.com/ticket: ML-42\n"),
    "objectLabels": (JOB, "shmSize: 64Gi\n", "shmSize: 64Gi\nobjectLabels:\n  cost-centre: cc-4711\n"),
    "objectAnnotations": (JOB, "shmSize: 64Gi\n", "shmSize: 64Gi\nobjectAnnotations:\n  example.com/owner: alice\n"),
    "estimatedHours": (JOB, "estimatedHours: 3", "estimatedHours: 12"),
    "an explicit default": (JOB, "shmSize: 64Gi\n", "shmSize: 64Gi\nmpiImplementation: OpenMPI\nopenMPIUcx: true\n"
                            "backend: mpijob\n"),
    "rerun 0": (JOB, "shmSize: 64Gi\n", "shmSize: 64Gi\nrerun: 0\n"),
    "env key order": (JOB, "env:\n  NCCL_DEBUG: INFO\n", "env:\n  TF_CPP_MIN_LOG_LEVEL: '1'\n  NCCL_DEBUG: INFO\n"),
    "pool size": (CLUSTER, "    nodes: 4\n", "    nodes: 6\n"),
    "a rail's addresses": (CLUSTER, "192.168.100.0/24", "192.168.110.0/24"),
    "a namespace more": (CLUSTER, "  - hpc\n", "  - hpc\n  - research\n"),
    "kubernetesVersion": (CLUSTER, 'kubernetesVersion: "1.31"', 'kubernetesVersion: "1.32"'),
    "the cluster's key order": (CLUSTER, "network:\n  provider: sriov-device-plugin\n", ""),
    "delivery by an ApplicationSet, with values files": (
        CLUSTER, "  tool: argocd\n", "  tool: argocd\n  applications: applicationset\n  valuesPath: environments/lab\n"),
    "Flux on flux bootstrap's GitRepository": (
        "clusters/cpu-lab.yaml", "  tool: flux\n  repoURL: https://git.example.com/platform/gpu-fleet.git\n",
        "  tool: flux\n  sourceRef:\n    name: flux-system\n"),
}
"""Edits that change nothing the run does. (`env key order` adds a variable first, then the baseline below is
compiled with it last: see the test.)"""
RENAMING = {
    "rerun": (JOB, "shmSize: 64Gi\n", "shmSize: 64Gi\nrerun: 1\n"),
    "image": (JOB, "24.03-tf2-py3", "24.04-tf2-py3"),
    "pool node labels": (CLUSTER, "    nodes: 4\n", "    nodes: 4\n    nodeLabels:\n      example.com/rack: a\n"),
    "rail resource name": (CLUSTER, "    nic: ib0\n", "    nic: ib0\n    resourceName: ib_rail0\n"),
    "ssh port": (CLUSTER, "  provider: sriov-device-plugin\n", "  provider: sriov-device-plugin\n  sshPort: 2022\n"),
    "cpu manager": (CLUSTER, "cpuManagerPolicy: none", "cpuManagerPolicy: static"),
    "hardware": ("hardware/dgx-1.yaml", "numaNode: 1\n", "numaNode: 0\n"),
}
REACHES_EVERY_JOB_OF_THE_CLUSTER = {"ssh port", "cpu manager"}
"""The others reach only the GPU pool's jobs: the CPU job `pi` of the same cluster keeps its name."""


@pytest.mark.parametrize("edit", sorted(KEEPING))
def test_an_edit_that_changes_nothing_the_run_does_keeps_its_name(profiles_copy, example_names, edit):
    path, old, new = KEEPING[edit]
    if edit == "env key order":  # the same two variables, written in the other order
        baseline = _names(_edited(profiles_copy, path, old, "env:\n  NCCL_DEBUG: INFO\n  TF_CPP_MIN_LOG_LEVEL: '1'\n"))
        assert baseline["resnet50-dgx"] != example_names["resnet50-dgx"]  # a variable more is another run
        assert _names(_edited(profiles_copy, path, old, new))["resnet50-dgx"] == baseline["resnet50-dgx"]
        return
    if edit == "the cluster's key order":  # `network` moved below the rails
        text = (PROFILES / path).read_text(encoding="utf-8").replace(old, "")
        text = text.replace("cpuManagerPolicy:", "network:\n  provider: sriov-device-plugin\ncpuManagerPolicy:")
        assert _names(profiles_copy({path: text})) == example_names
        return
    assert _names(_edited(profiles_copy, path, old, new)) == example_names


@pytest.mark.parametrize("edit", sorted(RENAMING))
def test_an_edit_of_what_the_run_does_renames_it(profiles_copy, example_names, edit):
    path, old, new = RENAMING[edit]
    if edit == "hardware":
        text = (PROFILES / path).read_text(encoding="utf-8").replace(old, new)
        names = _names(profiles_copy({path: text}))
    else:
        names = _names(_edited(profiles_copy, path, old, new))
    assert names["resnet50-dgx"] != example_names["resnet50-dgx"]
    assert (names["pi"] != example_names["pi"]) == (edit in REACHES_EVERY_JOB_OF_THE_CLUSTER)
    if path != "hardware/dgx-1.yaml":  # dgx-pod's pool is of that hardware too
        assert names["vision-resnet50"] == example_names["vision-resnet50"]  # another cluster's


def test_a_built_in_hardware_profile_counts_by_its_name_not_its_facts(monkeypatch, profiles_copy):
    """A release that corrects a built-in's facts renames no run: the identity reads the name `cpu-node`."""
    from mpigen.load import catalogue
    root = profiles_copy({"hardware/cpu-node.yaml": None})  # the pools name the built-in
    before = check_profiles([root])
    original = catalogue.load_builtin

    def corrected(name: str):
        document, problems = original(name)
        if name == "cpu-node" and document is not None:
            document.data["memoryGiB"] = document.data["memoryGiB"] * 2
        return document, problems

    monkeypatch.setattr(catalogue, "load_builtin", corrected)
    after = check_profiles([root])
    pi = [next(job for job in result.fleet.jobs if job.name == "pi") for result in (before, after)]
    assert pi[0].pool.hardware.memory_gib != pi[1].pool.hardware.memory_gib  # the correction did reach the model
    assert mpijob_name(pi[0]) == mpijob_name(pi[1])


# --- every field, one at a time, in the identity itself ---------------------------------------------------------


def _inputs() -> tuple[dict, dict, dict, identity.Resolved]:
    """resnet50-dgx's profile and its cluster's as written, its hardware's part, and what it resolved to."""
    from mpigen.load import to_plain
    from mpigen.load.catalogue import builtin_names
    result = check_profiles([PROFILES])
    documents = {(d.kind, d.data["name"]): d for d in result.documents}
    job = next(j for j in result.fleet.jobs if j.name == "resnet50-dgx")
    hardware = identity.hardware_parts({name: d for (kind, name), d in documents.items() if kind == "Hardware"},
                                       frozenset(builtin_names()))
    resolved = identity.Resolved((job.worker_count, job.gpus_per_worker, job.slots_per_worker),
                                 tuple(a.rail.name for a in job.rails), job.scheduling.queue,
                                 job.scheduling.topology_label, job.backend.value, job.namespace)
    return (to_plain(documents[("Job", "resnet50-dgx")].data), to_plain(documents[("Cluster", "dgx-lab")].data),
            hardware, resolved)


CHANGED = {"mpigen-test": "another value"}
"""Stands for any other value a field could take: the identity reads the profile as written."""


def test_each_job_field_renames_the_run_unless_it_only_describes_it():
    job, cluster, hardware, resolved = _inputs()
    base = identity.run_identity(job, cluster, hardware, resolved)
    for field in _schema("job")["properties"]:
        value = "cpu" if field == "pool" else CHANGED  # the pool is looked up by name
        renamed = identity.run_identity({**job, field: value}, cluster, hardware, resolved) != base
        expected = field not in (*identity.DESCRIBING_JOB_FIELDS, *identity.SIZE_FIELDS, *identity.RESOLVED_JOB_FIELDS)
        assert renamed == expected, field
    for field in _schema("job")["properties"]["runPolicy"]["properties"]:
        policy = {**job.get("runPolicy", {}), field: CHANGED}
        renamed = identity.run_identity({**job, "runPolicy": policy}, cluster, hardware, resolved) != base
        assert renamed == (field not in identity.DESCRIBING_RUN_POLICY), field
    # The size counts as what it resolves to: another worker count is another run.
    bigger = dataclasses.replace(resolved, size=(resolved.size[0] + 1, *resolved.size[1:]))
    assert identity.run_identity(job, cluster, hardware, bigger) != base
    # So do the namespace and the backend: the profile's, else the cluster's default.
    for moved in (dataclasses.replace(resolved, namespace="elsewhere"), dataclasses.replace(resolved, backend="trainjob")):
        assert identity.run_identity(job, cluster, hardware, moved) != base


def test_each_cluster_field_renames_the_run_exactly_where_its_pods_see_it():
    job, cluster, hardware, resolved = _inputs()
    base = identity.run_identity(job, cluster, hardware, resolved)

    def renamed(changed: dict) -> bool:
        return identity.run_identity(job, changed, hardware, resolved) != base

    for field in identity.CLUSTER_ELSEWHERE:
        assert not renamed({**cluster, field: CHANGED}), field
    assert renamed({**cluster, "cpuManagerPolicy": "static"})
    assert renamed({**cluster, "launcherPool": "cpu"})
    assert renamed({**cluster, "launcherPool": "dgx"})  # the job's own pool: the launcher gets its node selector
    pool = _schema("cluster")["properties"]["nodePools"]["items"]["properties"]
    for field in pool:
        pools = [{**p, field: CHANGED} if p["name"] == "dgx" else p for p in cluster["nodePools"]]
        if field in ("name", "hardware"):  # looked up by name: another pool, another hardware (tested above)
            continue
        assert renamed({**cluster, "nodePools": pools}) == (field in identity.POOL_PARTS), field
    for field in _schema("cluster")["properties"]["rails"]["items"]["properties"]:
        if field == "name":
            continue
        rails = [{**r, field: CHANGED} if r["name"] == "rail0" else r for r in cluster["rails"]]
        assert renamed({**cluster, "rails": rails}) == (field in identity.RAIL_PARTS), field
    for section, parts in (("network", identity.NETWORK_PARTS), ("scheduling", identity.SCHEDULING_PARTS)):
        for field in _schema("cluster")["properties"][section]["properties"]:
            changed = {**cluster, section: {**cluster.get(section, {}), field: CHANGED}}
            assert renamed(changed) == (field in parts), (section, field)
    # DRA counts through what the workers claim (`Resolved.claims`), never through the cluster's block as written.
    for field in _schema("cluster")["properties"]["dra"]["properties"]:
        assert not renamed({**cluster, "dra": {field: CHANGED}}), field
    claiming = identity.run_identity(job, cluster, hardware, replace(resolved, claims=("gpus:gpu.nvidia.com",)))
    assert claiming != base
    assert identity.run_identity(job, cluster, hardware, replace(resolved, claims=("gpus:h100.example.com",))) \
        not in (base, claiming)


def test_ssh_port_saying_the_port_sshd_has_anyway_keeps_the_name_unless_it_adds_the_probe():
    """`sshPort: 22` (or the nodes' network's port, the one value validate lets a host-network job write) compiles
    what leaving it out does where mpigen starts sshd: same run. With a `workerCommand` it adds the workers' readiness
    probe, so it renames the run whatever the port (no controller applies a spec edit to a run it started)."""
    job, cluster, hardware, resolved = _inputs()
    assert "sshPort" not in job and "workerCommand" not in job
    base = identity.run_identity(job, cluster, hardware, resolved)
    assert identity.run_identity({**job, "sshPort": 22}, cluster, hardware, resolved) == base
    assert identity.run_identity({**job, "sshPort": 2222}, cluster, hardware, resolved) != base
    on_the_nodes = dataclasses.replace(resolved, implied_ssh_port=22122)
    assert identity.run_identity({**job, "sshPort": 22122}, cluster, hardware, on_the_nodes) == \
        identity.run_identity(job, cluster, hardware, on_the_nodes)
    own = {**job, "workerCommand": ["/usr/sbin/sshd", "-De"]}
    assert identity.run_identity({**own, "sshPort": 22}, cluster, hardware, resolved) != \
        identity.run_identity(own, cluster, hardware, resolved)


DRA_KEEPING = {
    # cpu-lab's job is a CPU job without rails: under DRA it claims nothing.
    "dra on a cluster whose job claims nothing": ("clusters/cpu-lab.yaml", 'kubernetesVersion: "1.32"',
                                                  'kubernetesVersion: "1.34"\ndra: {}', "cpu-pi"),
    # H100 has no multi-node NVLink: no ComputeDomain either way.
    "computeDomains on hardware without multi-node NVLink": ("clusters/h100-dra.yaml", "dra: {}",
                                                             "dra: {computeDomains: false}", "llm-pretrain"),
    "the DRA defaults written out": ("clusters/h100-dra.yaml", "dra: {}",
                                     "dra: {gpuDeviceClass: gpu.nvidia.com, nicDeviceClass: dranet-rdma}",
                                     "llm-pretrain"),
}


@pytest.mark.parametrize("edit", sorted(DRA_KEEPING))
def test_a_dra_edit_that_changes_no_claim_keeps_the_name(profiles_copy, example_names, edit):
    path, old, new, job = DRA_KEEPING[edit]
    assert _names(_edited(profiles_copy, path, old, new))[job] == example_names[job]


def test_a_dra_edit_that_changes_a_claim_renames_the_run(profiles_copy, example_names):
    names = _names(_edited(profiles_copy, "clusters/h100-dra.yaml", "dra: {}", "dra: {gpuDeviceClass: h100.example.com}"))
    assert names["llm-pretrain"] != example_names["llm-pretrain"]
    # A NIC class of a cluster whose rails a device plugin gives claims no NIC: dgx-lab's GPU jobs claim GPUs only.
    text = (PROFILES / "clusters/dgx-lab.yaml").read_text(encoding="utf-8").replace(
        'kubernetesVersion: "1.31"', 'kubernetesVersion: "1.34"\ndra: {}')
    under_dra = _names(profiles_copy({"clusters/dgx-lab.yaml": text}))
    assert under_dra["resnet50-dgx"] != example_names["resnet50-dgx"]  # its GPUs are claimed now
    assert under_dra["pi"] == example_names["pi"]  # a CPU job: nothing claimed
    renamed_nic = _names(profiles_copy({"clusters/dgx-lab.yaml": text.replace("dra: {}", "dra: {nicDeviceClass: my-nics}")}))
    assert renamed_nic == under_dra
