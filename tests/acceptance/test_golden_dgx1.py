"""Golden: the example DGX-1 job over all four InfiniBand rails (profiles/jobs/resnet50-dgx.yaml on
profiles/clusters/dgx-lab.yaml), and the same job with the four ports in Ethernet mode (RoCE).

Every expected value below is written by hand, each with the fact it follows from (docs/facts.md section and
the seeds), never produced by the code under test. A change to any of them is a change of what mpigen tells
the cluster: review it against those facts, then edit the value here on purpose.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import PROFILES

from mpigen.commands.pipeline import CompileResult, compile_profiles

DGX_1 = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
assert DGX_1.count("    linkType: InfiniBand\n") == 4


def _objects(result: CompileResult) -> list[dict[str, Any]]:
    return [m.obj for chart in result.charts for m in chart.manifests]


def _resnet(result: CompileResult) -> dict[str, Any]:
    (mpijob,) = [o for o in _objects(result) if o["kind"] == "MPIJob" and o["metadata"]["name"].startswith("resnet50-dgx-")]
    return mpijob


def _worker(mpijob: dict[str, Any]) -> dict[str, Any]:
    return mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]


def _env(container: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["name"], e["value"]) for e in container["env"]]


@pytest.fixture(scope="module")
def roce(tmp_path_factory) -> CompileResult:
    root = tmp_path_factory.mktemp("roce") / "profiles"
    import shutil
    shutil.copytree(PROFILES, root)
    (root / "hardware" / "dgx-1.yaml").write_text(DGX_1.replace("linkType: InfiniBand", "linkType: Ethernet"),
                                                  encoding="utf-8")
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


# NCCL and MPI settings of the InfiniBand job, in the order mpigen writes them.
IB_ENV = [
    # facts 2-3: under the SR-IOV device plugin with the rdma CNI in exclusive mode a pod sees only its own VFs,
    # named mlx5_N by the kernel, not mlx5_0..3 of the PFs: the family prefix, as in the NetApp seed (mlx5).
    ("NCCL_IB_HCA", "mlx5"),
    # facts 2-3: under Multus eth0 is the cluster network; the rails are the pod's rail0..rail3 interfaces
    # (the networks annotation names them), `=` for an exact match.
    ("NCCL_SOCKET_IFNAME", "=rail0,rail1,rail2,rail3"),
    # facts 4: every two DGX-1 GPUs share a PCIe switch with one IB card, distance PIX.
    ("NCCL_NET_GDR_LEVEL", "PIX"),
    # facts 3: OpenMPI over UCX for IB/RoCE (profiles/jobs/resnet50-dgx.yaml uses OpenMPI, 4 by default).
    ("OMPI_MCA_pml", "ucx"),
    # The job profile's own env.
    ("NCCL_DEBUG", "INFO"),
]
# No NCCL_IB_GID_INDEX on InfiniBand (facts 3: RoCE only); no NCCL_IB_DISABLE (there are rails).

# The worker's resources: the job's cpu and memory, 8 GPUs (a whole DGX-1: totalGpus 16 / 8 per node) as
# nvidia.com/gpu (facts 4), and one VF of each rail (facts 2: one resource per rail, so each pod gets one VF
# from each PF), prefix nvidia.com for mpigen's sriov-device-plugin config.
LIMITS = {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": 8, "nvidia.com/rdma_rail0": 1,
          "nvidia.com/rdma_rail1": 1, "nvidia.com/rdma_rail2": 1, "nvidia.com/rdma_rail3": 1}
REQUESTS = {"cpu": "32", "memory": "256Gi"}  # extended resources need no request: it defaults to the limit

# facts 2: the JSON form of k8s.v1.cni.cncf.io/networks, each NAD in the job's namespace, with an explicit
# interface name (else net1..net4), in rail order.
NETWORKS = [{"name": f"rail{i}", "namespace": "ml-training", "interface": f"rail{i}"} for i in range(4)]

RESNET_PROGRAM = ["python", "/workspace/nvidia-examples/cnn/resnet.py", "--batch_size=256", "--num_iter=500",
                  "--precision=fp16"]


def _mpirun(env: list[tuple[str, str]]) -> list[str]:
    return [
        "mpirun",
        "--allow-run-as-root",  # the image runs as root (needed for IPC_LOCK, facts 2)
        "--hostfile", "/etc/mpigen/hostfile",  # mpigen's own copy, given explicitly (OpenMPI 5 ignores ORTE's variable)
        "-np", "16",  # 2 workers x 8 slots (a rank per GPU)
        # Each rank bound to its GPU's NIC socket: profiles/hardware/dgx-1.yaml names the GPUs beside each NIC
        # and the NICs' NUMA nodes (facts 4: IB0/IB1 on CPU 0, IB2/IB3 on CPU 1).
        "--rankfile", "/etc/mpigen/rankfile",
        # Container env does not reach ranks started over ssh: mpirun exports each variable by name.
        "-x", "PATH", "-x", "LD_LIBRARY_PATH", *[part for name, _ in env for part in ("-x", name)],
        *RESNET_PROGRAM,
    ]


def test_infiniband_job(example):
    mpijob = _resnet(example)
    worker = _worker(mpijob)
    container = worker["spec"]["containers"][0]
    assert _env(container) == IB_ENV
    assert container["resources"] == {"requests": REQUESTS, "limits": LIMITS}
    # facts 2: RDMA pods need IPC_LOCK, not privileged.
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert json.loads(worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]) == NETWORKS
    # No command: the operator runs `/usr/sbin/sshd -De` (facts 1). Ready once sshd listens on 22, so that
    # WaitForWorkersReady means it (mpi-operator's own Intel MPI and MPICH examples probe sshd's port so).
    assert "command" not in container
    assert container["readinessProbe"] == {"tcpSocket": {"port": 22}, "initialDelaySeconds": 2}
    launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["command"] == _mpirun(IB_ENV)
    assert _env(launcher) == IB_ENV, "the launcher exports what it has: the same env"
    # facts 2: a memory-backed /dev/shm, sized by the job (64 MiB breaks NCCL).
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}} in worker["spec"]["volumes"]


def test_infiniband_rail_networks(example):
    nads = {o["metadata"]["name"]: o for o in _objects(example)
            if o["kind"] == "NetworkAttachmentDefinition" and o["metadata"]["namespace"] == "ml-training"}
    assert sorted(nads) == ["rail0", "rail1", "rail2", "rail3"]
    for i in range(4):
        config = json.loads(nads[f"rail{i}"]["spec"]["config"])
        # facts 2: InfiniBand VFs use ib-sriov, chained with rdma; whereabouts for cross-node addresses.
        assert [p["type"] for p in config["plugins"]] == ["ib-sriov", "rdma"]
        assert config["plugins"][0]["ipam"] == {"type": "whereabouts", "range": f"192.168.10{i}.0/24"}
        # facts 2: the NAD names the resource the worker requests, or Multus fails with "VF pci addr is required".
        assert nads[f"rail{i}"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == \
            f"nvidia.com/rdma_rail{i}"


ROCE_ENV = [
    ("NCCL_IB_HCA", "mlx5"),
    ("NCCL_SOCKET_IFNAME", "=rail0,rail1,rail2,rail3"),
    # facts 3 and the NetApp seed (RoCE DGX-1s): GID index 3 for RoCEv2 over IPv4.
    ("NCCL_IB_GID_INDEX", "3"),
    ("NCCL_NET_GDR_LEVEL", "PIX"),
    ("OMPI_MCA_pml", "ucx"),
    ("NCCL_DEBUG", "INFO"),
]


def test_roce_job(roce):
    mpijob = _resnet(roce)
    worker = _worker(mpijob)
    container = worker["spec"]["containers"][0]
    assert _env(container) == ROCE_ENV
    # The link type changes nothing the pod asks for: the same VFs of the same four PFs.
    assert container["resources"] == {"requests": REQUESTS, "limits": LIMITS}
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert json.loads(worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]) == NETWORKS
    launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["command"] == _mpirun(ROCE_ENV)
    assert mpijob["metadata"]["name"] != _resnet_name_of_ib_job(), "a new run (facts 5): the env differs"


def _resnet_name_of_ib_job() -> str:
    return _resnet(compile_profiles([PROFILES]))["metadata"]["name"]


def test_roce_rail_networks_and_device_plugin(roce):
    objects = _objects(roce)
    nad = next(o for o in objects if o["kind"] == "NetworkAttachmentDefinition" and o["metadata"]["name"] == "rail0"
               and o["metadata"]["namespace"] == "ml-training")
    # facts 2: Ethernet (RoCE) VFs use the sriov CNI, chained with rdma.
    assert [p["type"] for p in json.loads(nad["spec"]["config"])["plugins"]] == ["sriov", "rdma"]
    config = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "sriovdp-config")
    selectors = json.loads(config["data"]["config.json"])["resourceList"][0]["selectors"]
    # facts 2/4: ConnectX-4 VFs (15b3:1014) of PF ib0, RDMA-capable, Ethernet link.
    assert selectors == {"vendors": ["15b3"], "devices": ["1014"], "drivers": ["mlx5_core"], "pfNames": ["ib0"],
                         "linkTypes": ["ether"], "isRdma": True}


# --- the same job as Volcano's own Job (backend volcano-job) -----------------------------------------------

@pytest.fixture(scope="module")
def volcano(tmp_path_factory) -> CompileResult:
    """dgx-lab under Volcano (its scheduler and job controller), resnet50-dgx compiled to a Volcano Job."""
    import shutil

    root = tmp_path_factory.mktemp("volcano") / "profiles"
    shutil.copytree(PROFILES, root)
    cluster = (root / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    assert "scheduling" not in cluster
    (root / "clusters" / "dgx-lab.yaml").write_text(cluster + "scheduling:\n  scheduler: volcano\n", encoding="utf-8")
    (root / "jobs" / "resnet50-trainjob.yaml").unlink()  # mpigen compiles a TrainJob's gang through Kueue only
    job = (root / "jobs" / "resnet50-dgx.yaml").read_text(encoding="utf-8")
    (root / "jobs" / "resnet50-dgx.yaml").write_text(job + "backend: volcano-job\n", encoding="utf-8")
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


# What mpi-operator appends to an MPIJob's launcher for OpenMPI (facts 1), which nothing sets for a Volcano Job:
# mpigen sets it on every container (the hostfile itself is on mpirun's command line).
ORTE_ENV = [
    ("OMPI_MCA_orte_default_hostfile", "/etc/mpigen/hostfile"),  # for an mpirun that does not name it
    ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),  # the hostfile's names are FQDNs, kept whole
    ("OMPI_MCA_orte_set_default_slots", "8"),  # a rank per GPU of a DGX-1
    ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),  # the operator's own ssh retries
]
VOLCANO_ENV = [*IB_ENV[:4], *ORTE_ENV, IB_ENV[4]]  # derived variables first, then the profile's NCCL_DEBUG


def test_infiniband_job_as_a_volcano_job(volcano):
    (vcjob,) = [o for o in _objects(volcano) if o["kind"] == "Job" and o["apiVersion"] == "batch.volcano.sh/v1alpha1"
                and o["metadata"]["name"].startswith("resnet50-dgx-")]
    name = vcjob["metadata"]["name"]
    assert name.startswith("resnet50-dgx-") and len(name) == len("resnet50-dgx-") + 7  # the run's digest
    spec = vcjob["spec"]
    # Volcano's MPI example: ssh (keys at /root/.ssh) and svc (host names) plugins, tasks mpiworker and mpimaster
    # (workers first: Volcano sizes the PodGroup from the first minAvailable pods in task order), the master's
    # TaskCompleted ending the job. WaitForWorkersReady: the master waits for the workers (dependsOn), so the gang
    # is the 2 workers (Volcano's mpi plugin guide; counting the master would deadlock).
    assert (spec["schedulerName"], spec["minAvailable"], spec["plugins"]) == ("volcano", 2, {"ssh": [], "svc": []})
    workers, master = spec["tasks"]
    assert (master["name"], master["replicas"], master["dependsOn"]) == ("mpimaster", 1, {"name": ["mpiworker"]})
    # backoffLimit 2 (the profile): the master's own maxRetry; reaching it raises TaskFailed, which ends the job.
    assert master["maxRetry"] == 2 and master["policies"] == [{"event": "TaskCompleted", "action": "CompleteJob"},
                                                              {"event": "TaskFailed", "action": "TerminateJob"}]
    assert (workers["name"], workers["replicas"]) == ("mpiworker", 2)
    worker = workers["template"]
    container = worker["spec"]["containers"][0]
    assert _env(container) == VOLCANO_ENV
    # facts 1: mpi-operator runs `/usr/sbin/sshd -De` in a worker without a command; Volcano runs the image's
    # entrypoint, so mpigen says it, and probes sshd's port (a worker is Ready once sshd listens).
    assert container["command"] == ["/usr/sbin/sshd", "-De"]
    assert container["readinessProbe"] == {"tcpSocket": {"port": 22}, "initialDelaySeconds": 2}
    assert container["resources"] == {"requests": REQUESTS, "limits": LIMITS}  # the same pods as the MPIJob's
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert json.loads(worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]) == NETWORKS
    launcher = master["template"]["spec"]["containers"][0]
    assert launcher["command"] == _mpirun(VOLCANO_ENV)
    # facts 1: the operator empties NVIDIA_VISIBLE_DEVICES on the launcher (it asks for no GPU); not exported.
    assert _env(launcher) == [*VOLCANO_ENV, ("NVIDIA_VISIBLE_DEVICES", "")]
    # Volcano names task pods <job>-<task>-<i> and its svc plugin makes <pod>.<job> resolvable (hostname and
    # subdomain), in the job's namespace.
    (hostfile,) = [o for o in _objects(volcano) if o["kind"] == "ConfigMap" and o["metadata"]["name"] ==
                   f"{name}-hostfile"]
    assert hostfile["data"]["hostfile"] == (f"{name}-mpiworker-0.{name}.ml-training.svc slots=8\n"
                                            f"{name}-mpiworker-1.{name}.ml-training.svc slots=8\n")


# --- the same job as Kubeflow Trainer v2's TrainJob (backend trainjob) ------------------------------------------

@pytest.fixture(scope="module")
def trainjob(tmp_path_factory) -> CompileResult:
    """dgx-lab as it is (no scheduler: Trainer runs the TrainJob), resnet50-dgx compiled to a TrainJob."""
    import shutil

    root = tmp_path_factory.mktemp("trainjob") / "profiles"
    shutil.copytree(PROFILES, root)
    job = (root / "jobs" / "resnet50-dgx.yaml").read_text(encoding="utf-8")
    (root / "jobs" / "resnet50-dgx.yaml").write_text(job + "backend: trainjob\n", encoding="utf-8")
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def test_infiniband_job_as_a_trainjob(trainjob):
    (tj,) = [o for o in _objects(trainjob) if o["kind"] == "TrainJob" and o["metadata"]["name"].startswith("resnet50-dgx-")]
    name = tj["metadata"]["name"]
    assert len(name) == len("resnet50-dgx-") + 7  # the run's digest, covering the runtime too
    # A namespaced TrainingRuntime of the same name (runtimeRef.kind defaults to ClusterTrainingRuntime); the job
    # chart's `workers` value is numNodes, the worker count (Trainer's MPI plugin: node count = numNodes when the
    # launcher is no node); numProcPerNode the slots (else Trainer could take the GPU count for a runtime's 1).
    assert tj["spec"] == {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": name},
                          "trainer": {"numNodes": 2, "numProcPerNode": 8}, "suspend": False}
    # In the infra chart: Trainer's webhook refuses a TrainJob whose runtime does not exist yet.
    (runtime,) = [m.obj for chart in trainjob.charts if chart.directory == "dgx-lab/infra" for m in chart.manifests
                  if m.obj["kind"] == "TrainingRuntime" and m.obj["metadata"]["name"] == name]
    assert runtime["metadata"]["namespace"] == "ml-training"
    # mlPolicy.mpi: OpenMPI (the only hostfile Trainer writes), 8 slots per node (a rank per GPU of a DGX-1), the
    # keys where mpi-operator would put them for a root image, and a launcher that is no node (it has no GPU).
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 2, "mpi": {
        "numProcPerNode": 8, "mpiImplementation": "OpenMPI", "sshAuthMountPath": "/root/.ssh",
        "runLauncherAsNode": False}}
    jobset = runtime["spec"]["template"]["spec"]
    # mpi-operator's Service publishes not-ready addresses; the run succeeds when the launcher does.
    assert jobset["network"] == {"publishNotReadyAddresses": True}
    assert jobset["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    nodes, launcher_job = jobset["replicatedJobs"]
    # WaitForWorkersReady: the launcher's Job waits for the nodes' Job to be Ready (JobSet dependsOn, which may
    # name only a replicated job listed before). backoffLimit 2 (the profile): the launcher Job's, as mpi-operator's.
    assert (launcher_job["name"], launcher_job["dependsOn"]) == ("launcher", [{"name": "node", "status": "Ready"}])
    assert launcher_job["template"]["spec"]["backoffLimit"] == 2
    worker = nodes["template"]["spec"]["template"]
    container = worker["spec"]["containers"][0]
    # Trainer's MPI plugin mounts the keys only into containers named `node`. facts 1: mpi-operator runs
    # `/usr/sbin/sshd -De` in a worker without a command; Trainer runs the image's entrypoint, so mpigen says it, and
    # probes sshd's port so that the launcher's dependsOn Ready means sshd listens.
    assert container["name"] == "node" and container["command"] == ["/usr/sbin/sshd", "-De"]
    assert container["readinessProbe"] == {"tcpSocket": {"port": 22}, "initialDelaySeconds": 2}
    assert _env(container) == IB_ENV  # the MPIJob's worker env
    assert container["resources"] == {"requests": REQUESTS, "limits": LIMITS}
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert json.loads(worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]) == NETWORKS
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}} in worker["spec"]["volumes"]
    launcher = launcher_job["template"]["spec"]["template"]["spec"]["containers"][0]
    # Trainer sets OpenMPI's ORTE variables on the launcher as mpi-operator does: the env is the MPIJob's.
    # No -np: the launcher is in the infra chart, which the job chart's `workers` value does not reach; OpenMPI
    # then starts one rank per slot of the hostfile (2 workers x 8 slots = 16).
    command = _mpirun(IB_ENV)
    assert launcher["command"] == command[:command.index("-np")] + command[command.index("-np") + 2:]
    # facts 1: the launcher asks for no GPU; Trainer does not empty NVIDIA_VISIBLE_DEVICES as mpi-operator does.
    assert _env(launcher) == [*IB_ENV, ("NVIDIA_VISIBLE_DEVICES", "")] and launcher["name"] == "node"
    # Trainer's hostfile lines (mpi.go: "%s slots=%d"), JobSet's endpoints <trainjob>-node-0-<i>.<trainjob>.
    (hostfile,) = [o for o in _objects(trainjob) if o["kind"] == "ConfigMap" and o["metadata"]["name"] ==
                   f"{name}-hostfile"]
    assert hostfile["data"]["hostfile"] == f"{name}-node-0-0.{name} slots=8\n{name}-node-0-1.{name} slots=8\n"
