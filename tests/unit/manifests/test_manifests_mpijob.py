"""The `kubeflow.org/v2beta1` MPIJob mpigen builds, checked against docs/facts.md sections 1-3 and the profiles.

Expected values are written out by hand from the example profiles: `resnet50-dgx` is 2 DGX-1 workers of
8 GPUs over the 4 InfiniBand rails, `pi` a CPU job run as uid 1000, `tensorflow-benchmarks` 1 GPU per worker
with `rails: []`.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import yaml
from conftest import PROFILES, UPSTREAM, is_run_of, run_helm

from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests import build_job, job_chart_ref, job_object
from mpigen.model import EnvVar, Job, MpiImplementation, names
from mpigen.package import output_files
from mpigen.write import write_tree

RESNET_PROGRAM = [
    "python",
    "/workspace/nvidia-examples/cnn/resnet.py",
    "--batch_size=256",
    "--num_iter=500",
    "--precision=fp16",
]

# --- helpers ---------------------------------------------------------------------------------------


def _job(result: CompileResult, name: str) -> Job:
    return next(job for job in result.fleet.jobs if job.name == name)


def _mpijob(job: Job) -> dict[str, Any]:
    return next(m.obj for m in build_job(job, job_chart_ref(job)) if m.obj["kind"] == "MPIJob")


def _compile(profiles_copy, edits: dict[str, str | None]) -> CompileResult:
    result = compile_profiles([profiles_copy(edits)])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def _replica(obj: dict[str, Any], role: str) -> dict[str, Any]:
    return obj["spec"]["mpiReplicaSpecs"][role]


def _container(obj: dict[str, Any], role: str) -> dict[str, Any]:
    containers = _replica(obj, role)["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def _env(container: dict[str, Any]) -> dict[str, str]:
    pairs = [(e["name"], e["value"]) for e in container.get("env", [])]
    assert len(pairs) == len(dict(pairs)), f"duplicate env names: {pairs}"
    return dict(pairs)


def _follows(command: list[str], flag: str) -> list[str]:
    return [command[i + 1] for i, part in enumerate(command[:-1]) if part == flag]


def _genv(command: list[str]) -> dict[str, str]:
    return {command[i + 1]: command[i + 2] for i, part in enumerate(command[:-2]) if part == "-genv"}


def _walk(node: Any, path: tuple = ()):
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, (*path, i))


def _profile(text: str) -> str:
    return "apiVersion: mpigen/v1alpha1\nkind: Job\ncluster: dgx-lab\n" + text



@pytest.fixture(scope="module")
def resnet(example) -> dict[str, Any]:
    return _mpijob(_job(example, "resnet50-dgx"))


@pytest.fixture(scope="module")
def pi(example) -> dict[str, Any]:
    return _mpijob(_job(example, "pi"))


@pytest.fixture(scope="module")
def tfb(example) -> dict[str, Any]:
    return _mpijob(_job(example, "tensorflow-benchmarks"))


# --- resnet50-dgx: 2 DGX-1 workers x 8 GPUs, 4 InfiniBand rails ------------------------------------------


def test_kind_name_and_namespace(resnet):
    assert resnet["apiVersion"] == "kubeflow.org/v2beta1"
    assert resnet["kind"] == "MPIJob"
    assert is_run_of(resnet["metadata"]["name"], "resnet50-dgx")  # default naming: `<job>-<hash>`
    assert resnet["metadata"]["namespace"] == "ml-training"


def test_slots_and_implementation(resnet):
    assert resnet["spec"]["slotsPerWorker"] == 8
    assert resnet["spec"]["mpiImplementation"] == "OpenMPI"


def test_replica_specs(resnet):
    assert set(resnet["spec"]["mpiReplicaSpecs"]) == {"Launcher", "Worker"}
    launcher, worker = _replica(resnet, "Launcher"), _replica(resnet, "Worker")
    assert launcher["replicas"] == 1
    assert launcher["restartPolicy"] == "OnFailure"
    assert worker["replicas"] == 2
    assert worker["restartPolicy"] == "Never"


def test_worker_limits_gpus_and_one_vf_per_rail(resnet):
    limits = _container(resnet, "Worker")["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == 8
    for rail in ("rail0", "rail1", "rail2", "rail3"):
        assert limits[f"nvidia.com/rdma_{rail}"] == 1
    extended = {k for k in limits if "/" in k}
    assert extended == {"nvidia.com/gpu", "nvidia.com/rdma_rail0", "nvidia.com/rdma_rail1",
                        "nvidia.com/rdma_rail2", "nvidia.com/rdma_rail3"}
    assert limits["cpu"] == "32"
    assert limits["memory"] == "256Gi"


def test_launcher_requests_no_gpu_and_no_rail(resnet):
    resources = _container(resnet, "Launcher").get("resources", {})
    for section in resources.values():
        assert not [k for k in section if "/" in k], section


def test_networks_annotation_is_json_with_explicit_interfaces_in_rail_order(resnet):
    template = _replica(resnet, "Worker")["template"]
    value = template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    assert isinstance(value, str)
    assert json.loads(value) == [
        {"name": "rail0", "namespace": "ml-training", "interface": "rail0"},
        {"name": "rail1", "namespace": "ml-training", "interface": "rail1"},
        {"name": "rail2", "namespace": "ml-training", "interface": "rail2"},
        {"name": "rail3", "namespace": "ml-training", "interface": "rail3"},
    ]
    launcher_meta = _replica(resnet, "Launcher")["template"].get("metadata", {})
    assert "k8s.v1.cni.cncf.io/networks" not in launcher_meta.get("annotations", {})


def test_ipc_lock_but_never_privileged_or_host_network(resnet):
    security = _container(resnet, "Worker")["securityContext"]
    assert security["capabilities"]["add"] == ["IPC_LOCK"]
    for path, node in _walk(resnet):
        if path and path[-1] in ("privileged", "hostNetwork", "hostIPC", "hostPID"):
            raise AssertionError(f"{'.'.join(map(str, path))} is set to {node!r}")
        if path and path[-1] == "allowPrivilegeEscalation":
            assert node is False


def test_dev_shm_is_memory_backed_with_the_profiles_size(resnet):
    spec = _replica(resnet, "Worker")["template"]["spec"]
    mounts = [m for m in _container(resnet, "Worker")["volumeMounts"] if m["mountPath"] == "/dev/shm"]
    assert len(mounts) == 1
    volume = next(v for v in spec["volumes"] if v["name"] == mounts[0]["name"])
    assert volume["emptyDir"] == {"medium": "Memory", "sizeLimit": "64Gi"}


def test_node_selector_from_hardware_labels(resnet):
    spec = _replica(resnet, "Worker")["template"]["spec"]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}


@pytest.mark.parametrize("role", ["Launcher", "Worker"])
def test_nccl_environment_on_infiniband(resnet, role):
    env = _env(_container(resnet, role))
    assert env["NCCL_IB_HCA"] == "mlx5"
    assert env["NCCL_SOCKET_IFNAME"] == "=rail0,rail1,rail2,rail3"
    assert env["NCCL_DEBUG"] == "INFO"
    assert "NCCL_IB_GID_INDEX" not in env, "GID index is a RoCE setting, not used on InfiniBand"
    assert "NCCL_IB_DISABLE" not in env


def test_mpirun_command_openmpi(resnet):
    command = _container(resnet, "Launcher")["command"]
    assert command[0] == "mpirun"
    assert _follows(command, "-np") == ["16"]
    assert _follows(command, "--hostfile") == ["/etc/mpigen/hostfile"]
    assert "--allow-run-as-root" in command
    exported = _follows(command, "-x")
    for name in _env(_container(resnet, "Launcher")):
        assert name in exported, f"{name} is set on the launcher but not exported with -x"
    assert {"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG"} <= set(exported)
    assert "-genv" not in command
    assert command[-len(RESNET_PROGRAM):] == RESNET_PROGRAM
    assert "args" not in _container(resnet, "Launcher")


def test_worker_runs_the_image_default_sshd(resnet):
    worker = _container(resnet, "Worker")
    assert "command" not in worker and "args" not in worker


def test_volumes_of_the_profile_on_both_roles(resnet):
    for role in ("Launcher", "Worker"):
        mounts = {m["mountPath"]: m for m in _container(resnet, role)["volumeMounts"]}
        assert mounts["/data/imagenet"].get("readOnly") is True
        spec = _replica(resnet, role)["template"]["spec"]
        volume = next(v for v in spec["volumes"] if v["name"] == mounts["/data/imagenet"]["name"])
        assert volume["persistentVolumeClaim"]["claimName"] == "imagenet"


def test_run_policy_and_launcher_creation_policy_pass_through(resnet):
    spec = resnet["spec"]
    assert spec["launcherCreationPolicy"] == "WaitForWorkersReady"
    policy = spec["runPolicy"]
    assert policy["cleanPodPolicy"] == "Running"
    assert policy["backoffLimit"] == 2
    assert "ttlSecondsAfterFinished" not in policy
    assert "activeDeadlineSeconds" not in policy
    assert policy.get("suspend", False) is False


def test_run_policy_every_field(profiles_copy):
    result = _compile(profiles_copy, {"jobs/policy.yaml": _profile(
        "name: policy\npool: cpu\nnamespace: hpc\nimage: example.org/app:1\nworkers: 1\nprogram: [/app]\n"
        "launcherCreationPolicy: AtStartup\n"
        "runPolicy:\n  cleanPodPolicy: All\n  backoffLimit: 0\n  activeDeadlineSeconds: 3600\n"
        "  ttlSecondsAfterFinished: 600\n  suspend: true\n"
        "allowRerunAfterTtl: true\n")})  # dgx-lab is synced by Argo CD: a TTL needs the opt-in
    spec = _mpijob(_job(result, "policy"))["spec"]
    assert spec["launcherCreationPolicy"] == "AtStartup"
    # AtStartup: the launcher exists while the gang forms, so it counts (1 worker + 1), were the operator to gang.
    assert spec["runPolicy"] == {"cleanPodPolicy": "All", "backoffLimit": 0, "activeDeadlineSeconds": 3600,
                                 "ttlSecondsAfterFinished": 600, "suspend": True,
                                 "schedulingPolicy": {"minAvailable": 2}}


def test_launcher_creation_policy_defaults_to_wait_for_workers_ready(pi):
    # docs/facts.md section 1: WaitForWorkersReady avoids the "could not resolve hostname" race (#481, #386);
    # mpigen makes no gang-scheduling PodGroup, so the #608 deadlock cannot arise.
    assert pi["spec"]["launcherCreationPolicy"] == "WaitForWorkersReady"


def test_object_names_come_from_the_name_helpers(example):
    job = _job(example, "resnet50-dgx")
    objects = {m.obj["kind"]: m.obj for m in build_job(job, job_chart_ref(job))}
    run = objects["MPIJob"]["metadata"]["name"]
    assert is_run_of(run, "resnet50-dgx")
    assert objects["ConfigMap"]["metadata"]["name"] == names.hostfile_configmap_name(run) == f"{run}-hostfile"
    launcher_volumes = _replica(objects["MPIJob"], "Launcher")["template"]["spec"]["volumes"]
    assert names.hostfile_configmap_name(run) in [v.get("configMap", {}).get("name") for v in launcher_volumes]
    annotation = json.loads(_replica(objects["MPIJob"], "Worker")["template"]["metadata"]["annotations"][
        "k8s.v1.cni.cncf.io/networks"])
    assert [a["name"] for a in annotation] == [names.nad_name(f"rail{i}") for i in range(4)]
    assert [a["interface"] for a in annotation] == [names.rail_interface(f"rail{i}") for i in range(4)]
    built = {m.obj["metadata"]["name"] for m in build_job(job, job_chart_ref(job))}
    assert not built & set(names.operator_owned_names(run))
    assert set(names.operator_owned_names(run)) == {f"{run}-config", f"{run}-ssh", f"{run}-launcher"}
    assert names.service_name(run) == run


def test_rank_count_follows_a_worker_count_override(example):
    job = _job(example, "resnet50-dgx")
    obj = next(m.obj for m in build_job(job, job_chart_ref(job), worker_count=3) if m.obj["kind"] == "MPIJob")
    assert _replica(obj, "Worker")["replicas"] == 3
    assert _follows(_container(obj, "Launcher")["command"], "-np") == ["24"]


def test_a_subset_of_rails_in_the_jobs_order(profiles_copy):
    result = _compile(profiles_copy, {"jobs/two-rails.yaml": _profile(
        "name: two-rails\npool: dgx\nnamespace: ml-training\nimage: example.org/app:1\nworkers: 1\n"
        "program: [python, train.py]\nrails: [rail2, rail0]\n")})
    obj = _mpijob(_job(result, "two-rails"))
    annotation = json.loads(_replica(obj, "Worker")["template"]["metadata"]["annotations"][
        "k8s.v1.cni.cncf.io/networks"])
    assert annotation == [
        {"name": "rail2", "namespace": "ml-training", "interface": "rail2"},
        {"name": "rail0", "namespace": "ml-training", "interface": "rail0"},
    ]
    limits = _container(obj, "Worker")["resources"]["limits"]
    assert {k for k in limits if "rdma" in k} == {"nvidia.com/rdma_rail2", "nvidia.com/rdma_rail0"}
    assert _env(_container(obj, "Worker"))["NCCL_SOCKET_IFNAME"] == "=rail2,rail0"


# --- root, launcherCommand, `$` ---------------------------------------------------------------------------


def test_allow_run_as_root_only_when_root(example):
    job = _job(example, "resnet50-dgx")
    as_root = _container(_mpijob(dataclasses.replace(job, run_as_user=0)), "Launcher")
    assert "--allow-run-as-root" in as_root["command"]
    assert as_root["securityContext"]["runAsUser"] == 0
    as_user = _container(_mpijob(dataclasses.replace(job, run_as_user=1234)), "Launcher")
    assert "--allow-run-as-root" not in as_user["command"]


def test_launcher_command_replaces_the_generated_one_verbatim(example):
    job = dataclasses.replace(_job(example, "resnet50-dgx"), launcher_command=(
        "bash", "-c", "mpirun --hostfile /etc/mpigen/hostfile -np 16 python train.py"))
    obj = _mpijob(job)
    launcher = _container(obj, "Launcher")
    assert launcher["command"] == ["bash", "-c", "mpirun --hostfile /etc/mpigen/hostfile -np 16 python train.py"]
    assert "args" not in launcher
    # the hostfile is still mounted for it
    assert "/etc/mpigen" in [m["mountPath"] for m in launcher["volumeMounts"]]


def test_launcher_command_from_a_profile(profiles_copy):
    result = _compile(profiles_copy, {"jobs/custom.yaml": _profile(
        "name: custom\npool: cpu\nnamespace: hpc\nimage: example.org/app:1\nworkers: 2\n"
        "launcherCommand: [/bin/sh, -c, 'exec my-launch --hosts /etc/mpigen/hostfile']\n")})
    command = _container(_mpijob(_job(result, "custom")), "Launcher")["command"]
    assert command == ["/bin/sh", "-c", "exec my-launch --hosts /etc/mpigen/hostfile"]


def test_dollar_in_user_strings_is_escaped(profiles_copy):
    result = _compile(profiles_copy, {"jobs/dollars.yaml": _profile(
        "name: dollars\npool: cpu\nnamespace: hpc\nimage: example.org/app:1\nworkers: 1\n"
        "program: [sh, -c, 'echo $(HOSTNAME) $HOME']\n"
        "mpirunArgs: ['--tag=$(X)']\n"
        "workerCommand: [/usr/sbin/sshd, -De, -o, 'Banner=$(B)']\n"
        "env:\n  GREETING: 'cost $5 $(NOT_EXPANDED)'\n")})
    obj = _mpijob(_job(result, "dollars"))
    launcher, worker = _container(obj, "Launcher"), _container(obj, "Worker")
    assert launcher["command"][-3:] == ["sh", "-c", "echo $$(HOSTNAME) $$HOME"]
    assert "--tag=$$(X)" in launcher["command"]
    assert worker["command"] == ["/usr/sbin/sshd", "-De", "-o", "Banner=$$(B)"]
    assert _env(launcher)["GREETING"] == "cost $$5 $$(NOT_EXPANDED)"
    assert _env(worker)["GREETING"] == "cost $$5 $$(NOT_EXPANDED)"
    for path, node in _walk(obj):
        if isinstance(node, str) and "$" in node:
            assert "$" not in node.replace("$$", ""), f"unescaped $ at {path}: {node!r}"


def test_dollar_in_launcher_command_is_escaped(example):
    job = dataclasses.replace(_job(example, "pi"), launcher_command=("sh", "-c", "echo $(A) ${B}"))
    assert _container(_mpijob(job), "Launcher")["command"] == ["sh", "-c", "echo $$(A) $${B}"]


# --- Intel MPI / MPICH mpirun -----------------------------------------------------------------------------


@pytest.mark.parametrize("implementation", [MpiImplementation.INTEL, MpiImplementation.MPICH])
def test_hydra_mpirun_passes_env_by_value(example, implementation):
    job = _job(example, "resnet50-dgx")
    # The resolved env is OpenMPI's (OMPI_MCA_* for it): drop those, as resolving for Hydra would.
    job = dataclasses.replace(job, mpi_implementation=implementation,
                              env=tuple(v for v in job.env if not v.name.startswith("OMPI_")))
    obj = _mpijob(job)
    assert obj["spec"]["mpiImplementation"] == implementation.value
    command = _container(obj, "Launcher")["command"]
    assert command[0] == "mpirun"
    assert _follows(command, "-hostfile") == ["/etc/mpigen/hostfile"]
    # NCCL_NET_GDR_LEVEL: the example DGX-1 states its GPU-NIC distance, PIX (docs/facts.md section 4).
    assert _genv(command) == {"NCCL_IB_HCA": "mlx5", "NCCL_SOCKET_IFNAME": "=rail0,rail1,rail2,rail3",
                              "NCCL_NET_GDR_LEVEL": "PIX", "NCCL_DEBUG": "INFO"}
    assert "-x" not in command
    assert "--allow-run-as-root" not in command, "an OpenMPI-only flag"
    ranks = _follows(command, "-np") + _follows(command, "-n")
    assert ranks == ["16"]
    assert command[-len(RESNET_PROGRAM):] == RESNET_PROGRAM


def test_hydra_genv_value_is_escaped(example):
    job = dataclasses.replace(_job(example, "pi"), mpi_implementation=MpiImplementation.MPICH,
                              env=(EnvVar("P", "$(Q)", "test"),))
    command = _container(_mpijob(job), "Launcher")["command"]
    assert _genv(command) == {"P": "$$(Q)"}


# --- pi: CPU only, non-root ---------------------------------------------------------------------------------


def test_cpu_job_has_no_gpu_rails_or_ipc_lock(pi):
    worker = _container(pi, "Worker")
    limits = worker["resources"]["limits"]
    assert limits == {"cpu": "1", "memory": "1Gi"}
    assert "k8s.v1.cni.cncf.io/networks" not in _replica(pi, "Worker")["template"].get("metadata", {}).get(
        "annotations", {})
    for role in ("Launcher", "Worker"):
        security = _container(pi, role).get("securityContext", {})
        assert "add" not in security.get("capabilities", {})
        assert not [k for k in _env(_container(pi, role)) if k.startswith("NCCL_")]


def test_a_job_run_as_a_user_meets_pod_security_restricted(pi):
    """pi runs as uid 1000: sshd and the ranks can do without every capability, setuid and unconfined syscalls."""
    for role in ("Launcher", "Worker"):
        assert _container(pi, role)["securityContext"] == {
            "runAsUser": 1000, "runAsNonRoot": True, "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


def test_cpu_job_slots_ranks_and_user(pi):
    assert pi["spec"]["slotsPerWorker"] == 1
    assert _replica(pi, "Worker")["replicas"] == 2
    for role in ("Launcher", "Worker"):
        assert _container(pi, role)["securityContext"]["runAsUser"] == 1000
    command = _container(pi, "Launcher")["command"]
    assert _follows(command, "-np") == ["2"]
    assert "--allow-run-as-root" not in command
    assert command[-1] == "/home/mpiuser/pi"


def test_cpu_job_worker_command_and_ssh_path(pi):
    assert _container(pi, "Worker")["command"] == ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]
    assert pi["spec"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"
    assert _replica(pi, "Worker")["template"]["spec"]["nodeSelector"] == {
        "node.kubernetes.io/instance-type": "cpu-2s64c"}


# --- tensorflow-benchmarks: 1 GPU per worker, rails: [] -------------------------------------------------------


def test_gpu_job_without_rails_disables_nccl_ib(tfb):
    for role in ("Launcher", "Worker"):
        env = _env(_container(tfb, role))
        assert env["NCCL_IB_DISABLE"] == "1"
        assert "NCCL_IB_HCA" not in env
        assert "NCCL_IB_GID_INDEX" not in env
        assert not env.get("NCCL_SOCKET_IFNAME", "").startswith("=rail")
    template = _replica(tfb, "Worker")["template"]
    assert "k8s.v1.cni.cncf.io/networks" not in template.get("metadata", {}).get("annotations", {})
    limits = _container(tfb, "Worker")["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == 1
    assert not [k for k in limits if "rdma" in k]
    assert "capabilities" not in _container(tfb, "Worker").get("securityContext", {})


def test_gpu_job_without_rails_slots_and_mpirun(tfb):
    assert tfb["spec"]["slotsPerWorker"] == 1
    command = _container(tfb, "Launcher")["command"]
    assert _follows(command, "-np") == ["2"]
    assert "NCCL_IB_DISABLE" in _follows(command, "-x")
    # The upstream example's `-mca btl ^openib` is the profile's env (OMPI_MCA_btl), exported like every variable.
    env = {e["name"]: e["value"] for e in _container(tfb, "Launcher")["env"]}
    assert env["OMPI_MCA_btl"] == "^openib" and env["OMPI_MCA_pml"] == "ob1"
    tail = ["-x", "NCCL_DEBUG", "python",
            "scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py", "--model=resnet101", "--batch_size=64",
            "--variable_update=horovod"]
    assert command[-len(tail):] == tail


# --- RoCE -------------------------------------------------------------------------------------------------


def test_roce_variant_sets_gid_index_and_sriov_nad(profiles_copy):
    hardware = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
    assert hardware.count("linkType: InfiniBand") == 4
    result = _compile(profiles_copy, {"hardware/dgx-1.yaml": hardware.replace("linkType: InfiniBand",
                                                                              "linkType: Ethernet")})
    obj = _mpijob(_job(result, "resnet50-dgx"))
    for role in ("Launcher", "Worker"):
        env = _env(_container(obj, role))
        assert env["NCCL_IB_GID_INDEX"] == "3"
        assert env["NCCL_IB_HCA"] == "mlx5"
        assert env["NCCL_SOCKET_IFNAME"] == "=rail0,rail1,rail2,rail3"
    assert "NCCL_IB_GID_INDEX" in _follows(_container(obj, "Launcher")["command"], "-x")
    nads = [m.obj for c in result.charts for m in c.manifests if m.obj["kind"] == "NetworkAttachmentDefinition"]
    assert len(nads) == 8
    for nad in nads:
        plugins = json.loads(nad["spec"]["config"])["plugins"]
        assert [p["type"] for p in plugins] == ["sriov", "rdma"]


# --- the chart, rendered by real Helm with another worker count ----------------------------------------------


def test_helm_render_scales_replicas_and_rank_count_together(helm, example, tmp_path):
    write_tree(tmp_path / "charts", output_files(example.charts))
    chart = tmp_path / "charts" / "dgx-lab" / "jobs" / "resnet50-dgx"
    out = run_helm(helm, "template", chart, "--set", "workers=3", "--namespace", "ml-training").stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    obj = next(d for d in docs if d["kind"] == "MPIJob")
    assert _replica(obj, "Worker")["replicas"] == 3
    command = _container(obj, "Launcher")["command"]
    assert _follows(command, "-np") == ["24"]
    assert all(isinstance(part, str) for part in command), "a command item rendered as a non-string"
    hostfile = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["hostfile"]
    run = obj["metadata"]["name"]
    assert is_run_of(run, "resnet50-dgx")
    assert hostfile == (
        f"{run}-worker-0.{run}.ml-training.svc slots=8\n"
        f"{run}-worker-1.{run}.ml-training.svc slots=8\n"
        f"{run}-worker-2.{run}.ml-training.svc slots=8\n"
    )


# --- privilege only where asked: privileged with a reason, hostPath, Secrets -------------------------------------

PRIVILEGED_REASON = "the nvidia-fs driver of GPUDirect Storage needs /dev/nvidia-fs*"


def test_privileged_workers_only_with_a_reason_written_beside_them(profiles_copy):
    profile = (PROFILES / "jobs" / "resnet50-dgx.yaml").read_text(encoding="utf-8")
    result = _compile(profiles_copy, {"jobs/resnet50-dgx.yaml": profile + f"privileged:\n  reason: {PRIVILEGED_REASON}\n"})
    mpijob = _mpijob(_job(result, "resnet50-dgx"))
    assert _container(mpijob, "Worker")["securityContext"] == {"privileged": True}  # every capability: no IPC_LOCK list
    assert "securityContext" not in _container(mpijob, "Launcher")  # mpirun needs no privilege
    assert mpijob["metadata"]["annotations"]["mpigen/privileged-reason"] == PRIVILEGED_REASON
    assert _replica(mpijob, "Worker")["template"]["metadata"]["annotations"]["mpigen/privileged-reason"] == \
        PRIVILEGED_REASON
    assert "annotations" not in _replica(mpijob, "Launcher")["template"].get("metadata", {})


def test_no_job_of_the_examples_is_privileged_or_mounts_the_host(example):
    for job in example.fleet.jobs:
        mpijob = job_object(build_job(job, job_chart_ref(job))).obj  # an MPIJob, or allreduce-vcjob's Volcano Job
        assert "mpigen/privileged-reason" not in mpijob["metadata"]["annotations"]
        for path, node in _walk(mpijob):
            assert not (path and path[-1] in ("privileged", "hostPath", "hostPID", "hostIPC")), (job.name, path, node)


def test_a_host_path_volume_only_where_asked_and_never_created_on_the_node(profiles_copy):
    profile = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    assert "volumes:" not in profile
    profile += "volumes:\n  - {name: raid, hostPath: /raid/datasets, mountPath: /data, readOnly: true}\n"
    mpijob = _mpijob(_job(_compile(profiles_copy, {"jobs/pi.yaml": profile}), "pi"))
    for role in ("Launcher", "Worker"):
        volumes = _replica(mpijob, role)["template"]["spec"]["volumes"]
        assert volumes[-1] == {"name": "raid", "hostPath": {"path": "/raid/datasets", "type": "Directory"}}
        assert _container(mpijob, role)["volumeMounts"][-1] == {"name": "raid", "mountPath": "/data", "readOnly": True}


SECRET_ENV = """env:
  HF_TOKEN: {secretKeyRef: {name: hugging-face, key: token}}
  NCCL_DEBUG: INFO
"""


@pytest.mark.parametrize("implementation", ["OpenMPI", "Intel"])
def test_a_secret_env_value_comes_from_the_secret_and_never_stands_in_the_command(profiles_copy, implementation):
    profile = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    assert "env:" not in profile and "mpiImplementation" not in profile
    if implementation == "Intel":
        profile = profile.replace("image: mpioperator/mpi-pi:openmpi", "image: mpioperator/mpi-pi:intel")
        profile += "mpiImplementation: Intel\n"
    mpijob = _mpijob(_job(_compile(profiles_copy, {"jobs/pi.yaml": profile + SECRET_ENV}), "pi"))
    for role in ("Launcher", "Worker"):
        env = _container(mpijob, role)["env"]
        assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hugging-face", "key": "token"}}} in env
        assert {"name": "NCCL_DEBUG", "value": "INFO"} in env
    command = _container(mpijob, "Launcher")["command"]
    assert command.count("HF_TOKEN") == 1
    if implementation == "OpenMPI":  # every variable by name
        assert {"HF_TOKEN", "NCCL_DEBUG"} <= set(_follows(command, "-x"))
    else:  # Hydra: literal values by value, the Secret's by name
        assert _genv(command)["NCCL_DEBUG"] == "INFO" and "HF_TOKEN" not in _genv(command)
        assert _follows(command, "-genvlist") == ["HF_TOKEN"]


HOST_PATH_REASON = "the job builds its images with the node's docker"


def test_a_host_folder_given_with_a_reason_shows_the_reason_to_reviewers(profiles_copy):
    profile = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    profile += ("volumes:\n  - name: docker\n    hostPath: {path: /var/run/docker.sock, reason: " + HOST_PATH_REASON
                + "}\n    mountPath: /var/run/docker.sock\n  - {name: raid, hostPath: /raid, mountPath: /raid}\n")
    mpijob = _mpijob(_job(_compile(profiles_copy, {"jobs/pi.yaml": profile}), "pi"))
    shown = f"hostPath volume docker (/var/run/docker.sock): {HOST_PATH_REASON}"  # /raid needs none, has none
    assert mpijob["metadata"]["annotations"]["mpigen/host-path-reason"] == shown
    for role in ("Launcher", "Worker"):  # both mount it
        assert _replica(mpijob, role)["template"]["metadata"]["annotations"]["mpigen/host-path-reason"] == shown
        volumes = _replica(mpijob, role)["template"]["spec"]["volumes"]
        assert volumes[-2] == {"name": "docker", "hostPath": {"path": "/var/run/docker.sock", "type": "Directory"}}


def test_workers_are_ready_once_sshd_listens_as_in_mpi_operators_examples(profiles_copy):
    # mpi-operator's Intel MPI and MPICH examples give the worker a tcpSocket readiness probe on sshd's port: Hydra
    # does not retry ssh, and without it Ready (what WaitForWorkersReady waits for) means only that the container
    # started. mpigen probes every worker's sshd the same way, whatever the MPI.
    example = UPSTREAM / "mpi-operator" / "examples" / "pi__pi-intel.yaml"
    upstream = yaml.safe_load(example.read_text(encoding="utf-8"))
    probe = upstream["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert set(probe) == {"tcpSocket", "initialDelaySeconds"} and probe["initialDelaySeconds"] == 2
    # (A profile whose workerCommand starts sshd itself, as jobs/pi.yaml does, gets no probe: its port is the
    # image's own sshd_config's.)
    for implementation in ("OpenMPI", "Intel", "MPICH"):
        text = (PROFILES / "jobs/resnet50-dgx.yaml").read_text(encoding="utf-8") + \
            f"mpiImplementation: {implementation}\n"
        result = compile_profiles([profiles_copy({"jobs/resnet50-dgx.yaml": text})])
        assert result.ok, [d.format() for d in result.diagnostics]
        job = next(j for j in result.fleet.jobs if j.name == "resnet50-dgx")
        worker = job_object(build_job(job, job_chart_ref(job))).obj["spec"]["mpiReplicaSpecs"]["Worker"]
        container = worker["template"]["spec"]["containers"][0]
        assert container["readinessProbe"] == {"tcpSocket": {"port": 22}, "initialDelaySeconds": 2}, implementation


@pytest.mark.parametrize("name", ["resnet50-dgx", "volcano-allreduce", "resnet50-trainjob"])
def test_a_run_ref_names_the_first_worker_of_this_run(profiles_copy, name):
    # torch.distributed's MASTER_ADDR must be rank 0's host. mpirun starts rank 0 on the first host of its
    # hostfile, and that host's name carries the run's digest, which no profile can know. `{runRef: firstWorker}`
    # is filled in with the hostfile's first host, on every container, for every backend (MPIJob, Volcano Job,
    # TrainJob); a new run (another image) gets its own name in it.
    from mpigen.manifests import pod_specs, pods_object
    path = f"jobs/{name}.yaml"
    text = (PROFILES / path).read_text(encoding="utf-8")
    refs = "  MASTER_ADDR: {runRef: firstWorker}\n  RUN: {runRef: name}\n"
    text = text.replace("\nenv:\n", f"\nenv:\n{refs}") if "\nenv:\n" in text else text + f"env:\n{refs}"
    image = next(line for line in text.splitlines() if line.startswith("image: "))
    hosts = set()
    for tag in ("", "-next"):
        job = _job(_compile(profiles_copy, {path: text.replace(image, image + tag)}), name)
        manifests = build_job(job, job_chart_ref(job))
        hostfile = next(m.obj for m in manifests if m.obj["kind"] == "ConfigMap")["data"]["hostfile"]
        first_host = hostfile.splitlines()[0].split()[0]
        run = job_object(manifests).obj["metadata"]["name"]
        containers = [c for spec in pod_specs(pods_object(job, manifests)) for c in spec["containers"]]
        assert len(containers) == 2
        for container in containers:
            env = {var["name"]: var.get("value") for var in container["env"]}
            assert env["MASTER_ADDR"] == first_host, container["name"]
            assert env["RUN"] == run
        hosts.add(first_host)
    assert len(hosts) == 2, "each run names its own first worker"


def test_a_run_ref_reaches_hydra_ranks_by_name(profiles_copy):
    # Hydra's `-genv NAME VALUE` would need the value on the command line; a name of the run is the launcher's own
    # variable, so it is passed by name (`-genvlist`), like a Secret's.
    text = (PROFILES / "jobs/pi.yaml").read_text(encoding="utf-8")
    job = _job(_compile(profiles_copy, {"jobs/pi.yaml": text + "mpiImplementation: Intel\n"
                                        "env:\n  MASTER_ADDR: {runRef: firstWorker}\n"}), "pi")
    command = _container(_mpijob(job), "Launcher")["command"]
    assert command[command.index("-genvlist") + 1] == "MASTER_ADDR"
    assert "-genv" not in command or "MASTER_ADDR" not in command[:command.index("-genvlist")]


def _ported_pi(example: str) -> tuple[str, dict[str, Any]]:
    """mpi-operator's pi example `example` (examples/v2beta1/pi/, Hydra) as a job profile on the example cluster, read
    from the upstream file itself: image, pull policy, user, ssh keys, worker command, sshd's port (its readiness
    probe's), size and program. Its launcher's `-n 2` is mpigen's own rank count."""
    upstream = yaml.safe_load((UPSTREAM / "mpi-operator" / "examples" / f"pi__{example}.yaml").read_text("utf-8"))
    spec = upstream["spec"]
    worker = spec["mpiReplicaSpecs"]["Worker"]
    container = worker["template"]["spec"]["containers"][0]
    launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert container["command"] is None  # `command:` left empty: the worker's whole command is in `args`
    profile = {
        "apiVersion": "mpigen/v1alpha1", "kind": "Job", "name": "pi", "cluster": "dgx-lab", "pool": "cpu",
        "namespace": "hpc", "image": container["image"], "imagePullPolicy": container["imagePullPolicy"],
        "workers": worker["replicas"], "slotsPerWorker": spec["slotsPerWorker"],
        "mpiImplementation": spec["mpiImplementation"], "program": launcher["args"][3:],
        "runAsUser": container["securityContext"]["runAsUser"], "sshAuthMountPath": spec["sshAuthMountPath"],
        "workerCommand": container["args"], "sshPort": container["readinessProbe"]["tcpSocket"]["port"],
        "resources": {k: str(v) for k, v in container["resources"]["limits"].items()},
        "runPolicy": {"cleanPodPolicy": spec["runPolicy"]["cleanPodPolicy"]},
    }
    assert launcher["args"][:3] == ["mpirun", "-n", "2"]
    return yaml.safe_dump(profile, sort_keys=False), container


@pytest.mark.parametrize("example", ["pi-intel", "pi-mpich"])
def test_upstream_hydra_pi_examples_ported_keep_their_readiness_probe_on_2222(profiles_copy, example):
    # mpi-operator's pi-intel and pi-mpich run sshd as user 1000 with `sshd -De -f ~/.sshd_config` on port 2222
    # (build/base/Dockerfile: `ARG port=2222`) and probe it, so Hydra never reaches a worker before sshd listens.
    # Ported with `sshPort`, the compiled workers carry the same probe, and mpirun's ssh connects to that port.
    profile, original = _ported_pi(example)
    result = _compile(profiles_copy, {"jobs/pi.yaml": profile})
    assert [d.format() for d in result.diagnostics] == []
    mpijob = _mpijob(_job(result, "pi"))
    worker = _container(mpijob, "Worker")
    assert worker["readinessProbe"] == original["readinessProbe"] == {"tcpSocket": {"port": 2222},
                                                                        "initialDelaySeconds": 2}
    assert worker["command"] == original["args"]
    # Intel MPI reads I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS; MPICH's Hydra reads HYDRA_LAUNCHER_EXTRA_ARGS (MPICH
    # src/pm/hydra/lib/tools/bootstrap/external/external_common_launch.c, `MPL_env2str("HYDRA_LAUNCHER_EXTRA_ARGS"`),
    # not the HYDRA_LAUNCH_EXTRA_ARGS mpi-operator sets, which no Hydra reads for ssh.
    variable = {"pi-intel": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "pi-mpich": "HYDRA_LAUNCHER_EXTRA_ARGS"}[example]
    assert _container(mpijob, "Launcher")["command"][:3] == ["env", f"{variable}=-p 2222 -o ConnectionAttempts=10",
                                                            "mpirun"]


def test_a_worker_command_without_ssh_port_keeps_no_probe_and_hydra_is_warned(diagnose, profiles_copy):
    profile, _ = _ported_pi("pi-intel")
    without = profile.replace("sshPort: 2222\n", "")
    outcome = diagnose({"jobs/pi.yaml": without})
    assert [(d.severity.value, d.message.split(":")[0]) for d in outcome.diagnostics] == [
        ("warning", "a workerCommand of the job's own gets no readiness probe without sshPort")], outcome.shown()
    assert "set sshPort to the port its sshd listens on (mpi-operator's images: 2222)" in outcome.diagnostics[0].hint
    assert "readinessProbe" not in _container(_mpijob(_job(_compile(profiles_copy, {"jobs/pi.yaml": without}), "pi")),
                                              "Worker")


@pytest.mark.parametrize(("edit", "probe", "command"), [
    # Non-root without a worker command: mpi-operator's `sshd -De` as user 1000 cannot bind 22; no probe there.
    ({"workerCommand": None}, None, None),
    # The port said: mpigen starts sshd on it (`-p`) and probes it; OpenMPI's ssh connects to it.
    ({"workerCommand": None, "sshPort": 2222}, 2222, ["/usr/sbin/sshd", "-De", "-p", "2222"]),
    ({"sshPort": 2222}, 2222, ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]),
])
def test_ssh_port_of_a_non_root_openmpi_job(profiles_copy, edit, probe, command):
    text = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    if edit.get("workerCommand", "") is None:
        text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("workerCommand:"))
    if "sshPort" in edit:
        text += f"sshPort: {edit['sshPort']}\n"
    result = compile_profiles([profiles_copy({"jobs/pi.yaml": text})])
    mpijob = _mpijob(_job(result, "pi"))
    worker, launcher = _container(mpijob, "Worker"), _container(mpijob, "Launcher")
    assert worker.get("readinessProbe", {}).get("tcpSocket", {}).get("port") == probe
    assert worker.get("command") == command
    rsh = launcher["command"][launcher["command"].index("plm_rsh_args") + 1] if probe else None
    assert rsh == ("-p 2222 -o ConnectionAttempts=10" if probe else None)
    warnings = [d.format() for d in result.diagnostics]
    if probe is None:
        assert len(warnings) == 1 and "sshd run as user 1000 cannot bind port 22, below 1024" in warnings[0], warnings
        assert "`sshPort: 2222` and `workerCommand: [/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]`" in \
            warnings[0]
    else:
        assert warnings == []
