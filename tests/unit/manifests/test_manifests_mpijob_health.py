"""generator/manifests/mpijob_health.lua: Argo CD's health of an MPIJob, run in real Lua 5.1 (the language of
Argo CD's interpreter, gopher-lua) and 5.4, on the statuses mpi-operator writes. The condition sequences are
those its integration tests (test/integration/mpi_job_controller_test.go) wait for: Created, then Running, then
Succeeded; Created and Suspended, then Suspended False and Running when resumed; Suspended True with Running
False when a running job is suspended; Failed; and Restarting when a worker restarts (the operator drops the
Running condition as it sets Restarting)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from mpigen.manifests.gitops import MPIJOB_HEALTH_KEY, mpijob_health_check

lupa = pytest.importorskip("lupa", reason="lupa (pip, `make test` installs it) runs the Lua")


def condition(kind: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-11-25T10:00:00Z", "lastUpdateTime": "2026-11-25T10:00:00Z"}


CREATED = condition("Created", "True", "MPIJobCreated", "MPIJob training/job is created.")
RUNNING = condition("Running", "True", "MPIJobRunning", "MPIJob training/job is running.")
NOT_RUNNING = condition("Running", "False", "MPIJobSuspended", "MPIJob suspended")
SUCCEEDED = condition("Succeeded", "True", "MPIJobSucceeded", "MPIJob training/job successfully completed.")
FAILED = condition("Failed", "True", "MPIJobFailed", "MPIJob training/job has failed: launcher pod failed")
SUSPENDED = condition("Suspended", "True", "MPIJobSuspended", "MPIJob suspended")
RESUMED = condition("Suspended", "False", "MPIJobResumed", "MPIJob resumed")
RESTARTING = condition("Restarting", "True", "MPIJobRestarting", "MPIJob training/job is restarting.")

CASES = [
    ("just created, no status yet", None, "Progressing", "Waiting for mpi-operator to create the job"),
    ("created", [CREATED], "Progressing", CREATED["message"]),
    ("running", [CREATED, RUNNING], "Progressing", RUNNING["message"]),
    ("succeeded", [CREATED, {**RUNNING, "status": "False"}, SUCCEEDED], "Healthy", SUCCEEDED["message"]),
    ("created suspended (Kueue)", [CREATED, SUSPENDED], "Suspended", SUSPENDED["message"]),
    ("resumed and running", [CREATED, RESUMED, RUNNING], "Progressing", RUNNING["message"]),
    ("suspended while running", [CREATED, SUSPENDED, NOT_RUNNING], "Suspended", SUSPENDED["message"]),
    ("failed", [CREATED, {**RUNNING, "status": "False"}, FAILED], "Degraded", FAILED["message"]),
    ("restarting", [CREATED, RESTARTING], "Progressing", RESTARTING["message"]),
]


def health(version: str, status: Any) -> tuple[str, str]:
    runtime = importlib.import_module(f"lupa.{version}").LuaRuntime(unpack_returned_tuples=True)
    mpijob: dict[str, Any] = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                              "metadata": {"name": "job", "namespace": "training"}, "spec": {}}
    if status is not None:
        mpijob["status"] = {"conditions": status, "replicaStatuses": {"Launcher": {}, "Worker": {}}}
    runtime.globals().obj = runtime.table_from(mpijob, recursive=True)
    result = runtime.execute(mpijob_health_check())
    return result["status"], result["message"]


@pytest.mark.parametrize("version", ["lua51", "lua54"])
@pytest.mark.parametrize(("case", "conditions", "status", "message"), CASES, ids=[case[0] for case in CASES])
def test_the_health_follows_the_conditions_mpi_operator_sets(version, case, conditions, status, message):
    assert health(version, conditions) == (status, message)


def test_the_check_is_shipped_beside_the_root_application_of_an_argo_cd_cluster(tmp_path):
    from conftest import PROFILES, run_mpigen

    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out).returncode == 0
    shipped = sorted(path.relative_to(out).as_posix() for path in out.rglob("mpijob-health.lua"))
    assert shipped == ["dgx-lab/bootstrap/argocd/mpijob-health.lua", "dgx-pod/bootstrap/argocd/mpijob-health.lua"]
    assert (out / shipped[0]).read_text(encoding="utf-8") == mpijob_health_check()
    root = (out / "dgx-lab/bootstrap/root/root-application.yaml").read_text(encoding="utf-8")
    assert MPIJOB_HEALTH_KEY in root and "bootstrap/argocd/mpijob-health.lua" in root
    assert not list((out / "cpu-lab").rglob("*.lua"))  # a Flux cluster: no Argo CD to read it
