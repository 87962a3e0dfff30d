"""generator/manifests/volcano_job_health.lua: Argo CD's health of a Volcano Job, run in real Lua 5.1 (the language of
Argo CD's interpreter, gopher-lua) and 5.4, on every phase the Volcano Job CRD allows in `status.state.phase`
(tests/upstream/scheduling/batch.volcano.sh_jobs.yaml), with the message Volcano's controller may set."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PROFILES, UPSTREAM, run_mpigen

from mpigen.manifests.gitops import VOLCANO_JOB_HEALTH_KEY, volcano_job_health_check

lupa = pytest.importorskip("lupa", reason="lupa (pip, `make test` installs it) runs the Lua")

# Completed: every task done (the launcher's TaskCompleted -> CompleteJob). Failed, Aborted, Terminated and the
# phases on the way to them end the run badly (mpigen's TaskFailed -> TerminateJob). The rest are on the way.
EXPECTED = {"Pending": "Progressing", "Running": "Progressing", "Restarting": "Progressing",
            "Completing": "Progressing", "Completed": "Healthy", "Aborting": "Degraded", "Aborted": "Degraded",
            "Terminating": "Degraded", "Terminated": "Degraded", "Failed": "Degraded"}


def health(version: str, status: Any) -> tuple[str, str]:
    runtime = importlib.import_module(f"lupa.{version}").LuaRuntime(unpack_returned_tuples=True)
    job: dict[str, Any] = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                           "metadata": {"name": "job", "namespace": "training"}, "spec": {}}
    if status is not None:
        job["status"] = status
    runtime.globals().obj = runtime.table_from(job, recursive=True)
    result = runtime.execute(volcano_job_health_check())
    return result["status"], result["message"]


def test_every_phase_of_the_crd_is_mapped():
    crd = yaml.safe_load((UPSTREAM / "scheduling" / "batch.volcano.sh_jobs.yaml").read_text(encoding="utf-8"))
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    phases = schema["properties"]["status"]["properties"]["state"]["properties"]["phase"]["enum"]
    assert sorted(phases) == sorted(EXPECTED)


@pytest.mark.parametrize("version", ["lua51", "lua54"])
@pytest.mark.parametrize("phase", sorted(EXPECTED))
def test_the_health_follows_the_phase(version, phase):
    assert health(version, {"state": {"phase": phase}, "running": 1}) == (EXPECTED[phase], f"Volcano Job {phase}")
    said = {"state": {"phase": phase, "message": "pod job-mpimaster-0 failed", "reason": "PodFailed"}}
    assert health(version, said) == (EXPECTED[phase], "pod job-mpimaster-0 failed")


@pytest.mark.parametrize("version", ["lua51", "lua54"])
def test_a_job_without_a_status_is_progressing(version):
    assert health(version, None) == ("Progressing", "Waiting for Volcano to create the job")
    assert health(version, {"state": {}}) == ("Progressing", "Waiting for Volcano to create the job")


def test_the_check_is_shipped_where_argo_cd_syncs_volcano_jobs(profiles_copy, tmp_path: Path):
    # volcano-lab has no GitOps tool in the example fleet: give it Argo CD, and its Volcano Job gets a health check.
    cluster = (PROFILES / "clusters/volcano-lab.yaml").read_text(encoding="utf-8")
    assert "gitops" not in cluster
    root = profiles_copy({"clusters/volcano-lab.yaml": cluster + "gitops:\n  tool: argocd\n"
                          "  repoURL: https://git.example.com/platform/gpu-fleet.git\n"})
    out = tmp_path / "charts"
    assert run_mpigen("render", root, "-o", out).returncode == 0
    shipped = sorted(path.relative_to(out).as_posix() for path in out.rglob("volcano-job-health.lua"))
    assert shipped == ["volcano-lab/bootstrap/argocd/volcano-job-health.lua"]
    assert (out / shipped[0]).read_text(encoding="utf-8") == volcano_job_health_check()
    text = (out / "volcano-lab/bootstrap/root/root-application.yaml").read_text(encoding="utf-8")
    assert VOLCANO_JOB_HEALTH_KEY in text and "bootstrap/argocd/volcano-job-health.lua" in text
    # dgx-lab syncs with Argo CD too, but runs no Volcano Job: no such file there.
    assert not (out / "dgx-lab/bootstrap/argocd/volcano-job-health.lua").exists()
