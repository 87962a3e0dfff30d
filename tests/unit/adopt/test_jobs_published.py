"""MPIJobs in the shape cloud providers publish them (tests/fixtures/mpijobs/README.md), adopted onto the example fleet and
compiled in-process: the compiled MPIJob keeps the published program, its `-x` exports and flags, the env, the image
and the size."""

from __future__ import annotations

from typing import Any

import yaml
from conftest import REPO

from mpigen.adopt import adopt_jobs
from mpigen.commands.pipeline import compile_profiles
from mpigen.readback.documents import read_manifest_file

FIXTURES = REPO / "tests" / "fixtures" / "mpijobs"


def _container(obj: dict[str, Any], role: str) -> dict[str, Any]:
    (container,) = obj["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"]
    return container


def test_a_bash_launcher_of_nccl_tests_keeps_its_launcher_line(profiles_copy: Any) -> None:
    source = FIXTURES / "nccl-tests-bash-launcher.yaml"
    written = yaml.safe_load(source.read_text(encoding="utf-8"))
    objects, findings = read_manifest_file(source)
    assert findings == []
    dgx_lab = (REPO / "profiles" / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    eight_nodes = dgx_lab.replace("    hardware: dgx-1\n    nodes: 4\n", "    hardware: dgx-1\n    nodes: 8\n")
    assert eight_nodes != dgx_lab
    root = profiles_copy({"clusters/dgx-lab.yaml": eight_nodes})  # the published job runs 8 workers

    adoption = adopt_jobs(objects, "dgx-lab", "dgx", [root])

    (profile,) = adoption.profiles
    assert [n for n in adoption.notes if "does not compile" in n and ("110 CPUs" in n or "960Gi" in n)], adoption.notes
    job = yaml.safe_load(profile.text)
    del job["resources"]  # 110 CPUs and 960Gi a worker: more than a dgx node has
    (root / "jobs" / f"{profile.name}.yaml").write_text(yaml.safe_dump(job), encoding="utf-8")
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    (mpijob,) = [m.obj for c in result.charts if c.directory == f"dgx-lab/jobs/{profile.name}" for m in c.manifests
                 if m.obj["kind"] == "MPIJob"]

    before, after = _container(written, "Launcher"), _container(mpijob, "Launcher")
    # The bash line (mpirun, its -x exports, the program, the shell comment after it) runs as published.
    assert [*after["command"], *after.get("args", [])] == [*before["command"], *before["args"]]
    assert {"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"} in after["env"]
    assert {"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "value": "1"} in after["env"]
    assert after["image"] == _container(mpijob, "Worker")["image"] == before["image"]
    spec = mpijob["spec"]
    assert (spec["slotsPerWorker"], spec["mpiReplicaSpecs"]["Worker"]["replicas"]) == (8, 8)
    assert spec["mpiImplementation"] == "OpenMPI"
    assert _container(mpijob, "Worker")["resources"]["limits"]["nvidia.com/gpu"] == 8
