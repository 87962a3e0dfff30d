"""The hostfile mpigen ships must be, line for line, the one mpi-operator writes (docs/facts.md section 1).

Host names are `<mpijob>-worker-<i>.<mpijob>.<ns>.svc`; OpenMPI lines are `<host> slots=<n>`, Intel MPI
and MPICH lines `<host>:<n>`. Expected lines are written out by hand below, never computed: the jobs
here use `naming: stable`, so the MPIJob is named after the job; the default, hashed name is tested at
the end, and in tests/unit/manifests/test_manifests_run_name.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import is_run_of, run_helm, run_name_of

from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests import build_job, job_chart_ref, job_object, run_name
from mpigen.manifests.hostfile import configmap_data
from mpigen.model import Backend, Job, MpiImplementation, Naming, Placement, names
from mpigen.model.hostfile import HostfileFormat, digits_total
from mpigen.package import output_files
from mpigen.vocabulary.kubernetes import ETCD_MAX_REQUEST_BYTES, OBJECT_BOUND
from mpigen.write import write_tree

# --- helpers ---------------------------------------------------------------------------------------


def _job_profile(name: str, implementation: str, workers: int, slots: int) -> str:
    """A CPU job on the example cluster's `cpu` pool (8 nodes of 128 logical CPUs), named `stable`."""
    return f"""apiVersion: mpigen/v1alpha1
kind: Job
name: {name}
cluster: dgx-lab
pool: cpu
namespace: hpc
image: example.org/mpi/app:1
mpiImplementation: {implementation}
workers: {workers}
slotsPerWorker: {slots}
program: [/opt/app/bin/solver]
resources:
  cpu: "{slots}"
  memory: 4Gi
naming: stable
"""


def _compile(profiles_copy, edits: dict[str, str | None]) -> CompileResult:
    result = compile_profiles([profiles_copy(edits)])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def _job(result: CompileResult, name: str) -> Job:
    """The job, under stable naming so that its MPIJob is named exactly `name`."""
    job = next(job for job in result.fleet.jobs if job.name == name)
    return dataclasses.replace(job, naming=Naming.STABLE)


def _built(job: Job) -> dict[str, dict[str, Any]]:
    """The job's objects by kind, built from the model."""
    return {m.obj["kind"]: m.obj for m in build_job(job, job_chart_ref(job))}


def _hostfile_lines(job: Job) -> list[str]:
    data = _built(job)["ConfigMap"]["data"]
    # A rankfile rides along where ranks are bound to their GPU's NIC socket (test_manifests_placement.py).
    assert list(data) == ["hostfile", "rankfile"] if job.placement.rankfile else ["hostfile"], data
    text = data["hostfile"]
    assert text.endswith("\n") and not text.endswith("\n\n"), repr(text)
    return text.split("\n")[:-1]


def _launcher(job: Job) -> dict[str, Any]:
    return _built(job)["MPIJob"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]


# --- OpenMPI ---------------------------------------------------------------------------------------


def test_openmpi_example_two_workers(example):
    job = _job(example, "resnet50-dgx")
    assert _hostfile_lines(job) == [
        "resnet50-dgx-worker-0.resnet50-dgx.ml-training.svc slots=8",
        "resnet50-dgx-worker-1.resnet50-dgx.ml-training.svc slots=8",
    ]


def test_openmpi_one_worker(example):
    job = dataclasses.replace(_job(example, "resnet50-dgx"), worker_count=1)
    assert _hostfile_lines(job) == ["resnet50-dgx-worker-0.resnet50-dgx.ml-training.svc slots=8"]


def test_openmpi_cpu_job_one_slot(example):
    assert _hostfile_lines(_job(example, "pi")) == [
        "pi-worker-0.pi.hpc.svc slots=1",
        "pi-worker-1.pi.hpc.svc slots=1",
    ]


def test_openmpi_twelve_workers(profiles_copy):
    result = _compile(profiles_copy, {"jobs/ompi-twelve.yaml": _job_profile("ompi-twelve", "OpenMPI", 12, 4)})
    assert _hostfile_lines(_job(result, "ompi-twelve")) == [
        "ompi-twelve-worker-0.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-1.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-2.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-3.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-4.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-5.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-6.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-7.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-8.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-9.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-10.ompi-twelve.hpc.svc slots=4",
        "ompi-twelve-worker-11.ompi-twelve.hpc.svc slots=4",
    ]


# --- Intel MPI ---------------------------------------------------------------------------------------


def test_intel_one_worker(profiles_copy):
    result = _compile(profiles_copy, {"jobs/impi-one.yaml": _job_profile("impi-one", "Intel", 1, 2)})
    assert _hostfile_lines(_job(result, "impi-one")) == ["impi-one-worker-0.impi-one.hpc.svc:2"]


def test_intel_twelve_workers(profiles_copy):
    result = _compile(profiles_copy, {"jobs/impi.yaml": _job_profile("impi", "Intel", 12, 2)})
    assert _hostfile_lines(_job(result, "impi")) == [
        "impi-worker-0.impi.hpc.svc:2",
        "impi-worker-1.impi.hpc.svc:2",
        "impi-worker-2.impi.hpc.svc:2",
        "impi-worker-3.impi.hpc.svc:2",
        "impi-worker-4.impi.hpc.svc:2",
        "impi-worker-5.impi.hpc.svc:2",
        "impi-worker-6.impi.hpc.svc:2",
        "impi-worker-7.impi.hpc.svc:2",
        "impi-worker-8.impi.hpc.svc:2",
        "impi-worker-9.impi.hpc.svc:2",
        "impi-worker-10.impi.hpc.svc:2",
        "impi-worker-11.impi.hpc.svc:2",
    ]


def test_intel_by_replacing_a_resolved_gpu_job(example):
    openmpi = _job(example, "resnet50-dgx")
    job = dataclasses.replace(openmpi, mpi_implementation=MpiImplementation.INTEL, openmpi_version=None,
                              placement=Placement(map_by=None, bind_to=None))
    assert _hostfile_lines(job) == [
        "resnet50-dgx-worker-0.resnet50-dgx.ml-training.svc:8",
        "resnet50-dgx-worker-1.resnet50-dgx.ml-training.svc:8",
    ]


# --- MPICH -------------------------------------------------------------------------------------------


def test_mpich_one_worker(profiles_copy):
    result = _compile(profiles_copy, {"jobs/mpich-one.yaml": _job_profile("mpich-one", "MPICH", 1, 16)})
    assert _hostfile_lines(_job(result, "mpich-one")) == ["mpich-one-worker-0.mpich-one.hpc.svc:16"]


def test_mpich_twelve_workers(profiles_copy):
    result = _compile(profiles_copy, {"jobs/mpich.yaml": _job_profile("mpich", "MPICH", 12, 3)})
    assert _hostfile_lines(_job(result, "mpich")) == [
        "mpich-worker-0.mpich.hpc.svc:3",
        "mpich-worker-1.mpich.hpc.svc:3",
        "mpich-worker-2.mpich.hpc.svc:3",
        "mpich-worker-3.mpich.hpc.svc:3",
        "mpich-worker-4.mpich.hpc.svc:3",
        "mpich-worker-5.mpich.hpc.svc:3",
        "mpich-worker-6.mpich.hpc.svc:3",
        "mpich-worker-7.mpich.hpc.svc:3",
        "mpich-worker-8.mpich.hpc.svc:3",
        "mpich-worker-9.mpich.hpc.svc:3",
        "mpich-worker-10.mpich.hpc.svc:3",
        "mpich-worker-11.mpich.hpc.svc:3",
    ]


# --- the name helpers agree with the operator ----------------------------------------------------------


def test_name_helpers_follow_the_operator():
    assert names.worker_name("pi", 0) == "pi-worker-0"
    assert names.launcher_name("pi") == "pi-launcher"
    assert names.service_name("pi") == "pi"
    assert names.worker_host("pi", "hpc", 11) == "pi-worker-11.pi.hpc.svc"
    assert names.hostfile_configmap_name("pi") == "pi-hostfile"
    assert names.HOSTFILE_PATH == "/etc/mpigen/hostfile"


# --- the ConfigMap, its mount and mpirun's flag ----------------------------------------------------------


def test_configmap_is_named_hostfile_never_the_operators_config(example):
    for job in example.fleet.jobs:
        manifests = build_job(job, job_chart_ref(job))
        built = {m.obj["kind"]: m.obj for m in manifests}
        run = job_object(manifests).obj["metadata"]["name"]  # an MPIJob, or the Volcano Job of allreduce-vcjob
        assert is_run_of(run, job.name)
        assert built["ConfigMap"]["metadata"]["name"] == f"{run}-hostfile"
        assert built["ConfigMap"]["metadata"]["namespace"] == job.namespace
    objects = [m.obj for c in example.charts for m in c.manifests]
    configmaps = {o["metadata"]["name"] for o in objects if o["kind"] == "ConfigMap"}
    all_names = {o["metadata"]["name"] for o in objects}
    for job in ("pi", "resnet50-dgx", "tensorflow-benchmarks"):
        run = run_name_of(objects, job)
        assert f"{run}-hostfile" in configmaps
        assert f"{run}-config" not in all_names and f"{job}-config" not in all_names


def test_no_chart_file_names_the_operators_configmap(example):
    objects = [m.obj for c in example.charts for m in c.manifests]
    for path, data in output_files(example.charts).items():
        text = data.decode()
        for job in ("pi", "resnet50-dgx", "tensorflow-benchmarks"):
            owned = f"{run_name_of(objects, job)}-config"
            assert owned not in text, f"{path} mentions {owned}, which mpi-operator owns"


@pytest.mark.parametrize("name", ["pi", "resnet50-dgx", "tensorflow-benchmarks"])
def test_launcher_mounts_the_hostfile_at_etc_mpigen(example, name):
    job = next(job for job in example.fleet.jobs if job.name == name)
    spec = _built(job)["MPIJob"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    run = _built(job)["MPIJob"]["metadata"]["name"]
    assert is_run_of(run, name)
    container = spec["containers"][0]
    mounts = [m for m in container["volumeMounts"] if m["mountPath"] == "/etc/mpigen"]
    assert len(mounts) == 1, container["volumeMounts"]
    volume = next(v for v in spec["volumes"] if v["name"] == mounts[0]["name"])
    assert volume["configMap"]["name"] == f"{run}-hostfile"
    # the key `hostfile` lands at /etc/mpigen/hostfile, `rankfile` (where there is one) beside it: items
    # must not rename them
    for item in volume["configMap"].get("items", []):
        assert item in ({"key": "hostfile", "path": "hostfile"}, {"key": "rankfile", "path": "rankfile"})
    assert volume["configMap"]["items"][0] == {"key": "hostfile", "path": "hostfile"}
    assert all(m["mountPath"] != "/etc/mpi" for m in container["volumeMounts"]), "the operator mounts /etc/mpi"


def _follows(command: list[str], flag: str) -> list[str]:
    return [command[i + 1] for i, part in enumerate(command[:-1]) if part == flag]


def test_openmpi_mpirun_gets_double_dash_hostfile(example):
    command = _launcher(_job(example, "resnet50-dgx"))["containers"][0]["command"]
    assert command[0] == "mpirun"
    assert _follows(command, "--hostfile") == ["/etc/mpigen/hostfile"]
    assert "-hostfile" not in command


@pytest.mark.parametrize("implementation", ["Intel", "MPICH"])
def test_hydra_mpirun_gets_single_dash_hostfile(profiles_copy, implementation):
    name = f"{implementation.lower()}-flags"
    result = _compile(profiles_copy, {f"jobs/{name}.yaml": _job_profile(name, implementation, 3, 2)})
    command = _launcher(_job(result, name))["containers"][0]["command"]
    assert command[0] == "mpirun"
    assert _follows(command, "-hostfile") == ["/etc/mpigen/hostfile"]
    assert "--hostfile" not in command


# --- the chart's own hostfile template, rendered by real Helm --------------------------------------------


def _render_hostfile(helm: Path, chart_dir: Path, workers: int) -> list[str]:
    out = run_helm(helm, "template", chart_dir, "--set", f"workers={workers}").stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    text = cm["data"]["hostfile"]
    assert text.endswith("\n") and not text.endswith("\n\n"), repr(text)
    return text.split("\n")[:-1]


def test_helm_renders_openmpi_hostfile_for_any_worker_count(helm, profiles_copy, tmp_path):
    pi = (profiles_copy() / "jobs" / "pi.yaml").read_text(encoding="utf-8") + "naming: stable\n"
    result = _compile(profiles_copy, {"jobs/pi.yaml": pi})
    write_tree(tmp_path / "charts", output_files(result.charts))
    chart = tmp_path / "charts" / "dgx-lab" / "jobs" / "pi"
    assert _render_hostfile(helm, chart, 1) == ["pi-worker-0.pi.hpc.svc slots=1"]
    assert _render_hostfile(helm, chart, 12) == [
        "pi-worker-0.pi.hpc.svc slots=1",
        "pi-worker-1.pi.hpc.svc slots=1",
        "pi-worker-2.pi.hpc.svc slots=1",
        "pi-worker-3.pi.hpc.svc slots=1",
        "pi-worker-4.pi.hpc.svc slots=1",
        "pi-worker-5.pi.hpc.svc slots=1",
        "pi-worker-6.pi.hpc.svc slots=1",
        "pi-worker-7.pi.hpc.svc slots=1",
        "pi-worker-8.pi.hpc.svc slots=1",
        "pi-worker-9.pi.hpc.svc slots=1",
        "pi-worker-10.pi.hpc.svc slots=1",
        "pi-worker-11.pi.hpc.svc slots=1",
    ]


def test_helm_renders_intel_hostfile_for_any_worker_count(helm, profiles_copy, tmp_path):
    result = _compile(profiles_copy, {"jobs/impi.yaml": _job_profile("impi", "Intel", 2, 8)})
    write_tree(tmp_path / "charts", output_files(result.charts))
    chart = tmp_path / "charts" / "dgx-lab" / "jobs" / "impi"
    assert _render_hostfile(helm, chart, 1) == ["impi-worker-0.impi.hpc.svc:8"]
    assert _render_hostfile(helm, chart, 12) == [
        "impi-worker-0.impi.hpc.svc:8",
        "impi-worker-1.impi.hpc.svc:8",
        "impi-worker-2.impi.hpc.svc:8",
        "impi-worker-3.impi.hpc.svc:8",
        "impi-worker-4.impi.hpc.svc:8",
        "impi-worker-5.impi.hpc.svc:8",
        "impi-worker-6.impi.hpc.svc:8",
        "impi-worker-7.impi.hpc.svc:8",
        "impi-worker-8.impi.hpc.svc:8",
        "impi-worker-9.impi.hpc.svc:8",
        "impi-worker-10.impi.hpc.svc:8",
        "impi-worker-11.impi.hpc.svc:8",
    ]


def test_helm_renders_mpich_hostfile(helm, profiles_copy, tmp_path):
    result = _compile(profiles_copy, {"jobs/mpich.yaml": _job_profile("mpich", "MPICH", 1, 3)})
    write_tree(tmp_path / "charts", output_files(result.charts))
    chart = tmp_path / "charts" / "dgx-lab" / "jobs" / "mpich"
    assert _render_hostfile(helm, chart, 1) == ["mpich-worker-0.mpich.hpc.svc:3"]
    assert _render_hostfile(helm, chart, 3) == [
        "mpich-worker-0.mpich.hpc.svc:3",
        "mpich-worker-1.mpich.hpc.svc:3",
        "mpich-worker-2.mpich.hpc.svc:3",
    ]


# --- default naming: every host name follows the hashed MPIJob name ---------------------------------------


def test_default_naming_host_names_follow_the_hashed_mpijob_name(example):
    job = next(job for job in example.fleet.jobs if job.name == "resnet50-dgx")
    built = _built(job)
    run = built["MPIJob"]["metadata"]["name"]
    assert is_run_of(run, "resnet50-dgx")
    assert built["ConfigMap"]["data"]["hostfile"] == (
        f"{run}-worker-0.{run}.ml-training.svc slots=8\n"
        f"{run}-worker-1.{run}.ml-training.svc slots=8\n")


def test_helm_renders_the_hashed_host_names(helm, tmp_path, example):
    write_tree(tmp_path / "charts", output_files(example.charts))
    run = run_name_of([m.obj for c in example.charts for m in c.manifests], "pi")
    assert _render_hostfile(helm, tmp_path / "charts" / "dgx-lab" / "jobs" / "pi", 3) == [
        f"{run}-worker-0.{run}.hpc.svc slots=1",
        f"{run}-worker-1.{run}.hpc.svc slots=1",
        f"{run}-worker-2.{run}.hpc.svc slots=1",
    ]


# --- the bytes of the objects that hold a line per worker, counted without writing them ----------------------------


def _written(job: Job, mpijob: str, workers: int) -> dict[str, int]:
    """The bytes of each object's lines as written: mpigen's ConfigMap, and under an MPIJob mpi-operator's
    `<mpijob>-config`, whose discover_hosts.sh is `#!/bin/sh` and an `echo <host>` per worker (its
    updateDiscoverHostsInConfigMap, with every worker running)."""
    data = configmap_data(job, mpijob, workers)
    written = {f"ConfigMap {mpijob}-hostfile": sum(len(text.encode()) for text in data.values())}
    if job.backend is Backend.MPIJOB:
        discover = "#!/bin/sh\n" + "".join(f"echo {line.split()[0].split(':')[0]}\n"
                                           for line in data["hostfile"].splitlines())
        written[f"mpi-operator's ConfigMap {mpijob}-config"] = len(data["hostfile"].encode()) + len(discover.encode())
    return written


@pytest.mark.parametrize("workers", [0, 1, 9, 10, 11, 99, 100, 101, 1234])
def test_the_bytes_of_each_object_of_lines_are_counted_as_written(example, workers):
    jobs = [*example.fleet.jobs, *(dataclasses.replace(job, mpi_implementation=implementation)
                                   for job in example.fleet.jobs if job.name == "pi"
                                   for implementation in (MpiImplementation.INTEL, MpiImplementation.MPICH))]
    assert {(job.backend, bool(job.placement.rankfile)) for job in jobs} >= {
        (Backend.MPIJOB, True), (Backend.MPIJOB, False), (Backend.TRAINJOB, True), (Backend.VOLCANO_JOB, True)}
    for job in jobs:
        mpijob = run_name.mpijob_name(job)
        counted = {found.name: found.size for found in HostfileFormat.of_job(job).objects(mpijob, workers)}
        assert counted == _written(job, mpijob, workers), job.name


def test_the_most_workers_whose_lines_etcd_stores_is_the_last_count_that_fits(example):
    """pi on the dgx-lab cluster (namespace ml-training): mpi-operator's ConfigMap is the larger of the two."""
    job = next(job for job in example.fleet.jobs if job.name == "pi")
    form, mpijob = HostfileFormat.of_job(job), run_name.mpijob_name(job)
    most = form.max_workers(mpijob)
    assert 10_000 < most < 20_000
    fits, passes = _written(job, mpijob, most), _written(job, mpijob, most + 1)
    assert max(fits.values()) <= OBJECT_BOUND < max(passes.values()) == passes[f"mpi-operator's ConfigMap {mpijob}-config"]
    assert form.max_workers(mpijob, 100) == 100 and form.max_workers(mpijob, most + 5) == most
    assert max(_written(job, mpijob, 2 * most).values()) > ETCD_MAX_REQUEST_BYTES


def test_digits_of_a_run_of_numbers_are_counted_without_writing_them():
    for count in (0, 1, 9, 10, 11, 100, 1001):
        for stride, offset in ((1, 0), (8, 0), (8, 7), (640, 639)):
            assert digits_total(count, stride, offset) == sum(len(str(offset + i * stride)) for i in range(count))
    assert digits_total(10**12) == sum(9 * 10**(width - 1) * width for width in range(1, 13)) + 1
