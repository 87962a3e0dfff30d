"""generator/manifests/trainjob_health.lua: Argo CD's health of a TrainJob, run in real Lua 5.1 (the language of
Argo CD's interpreter, gopher-lua) and 5.4, on the conditions Kubeflow Trainer sets on a TrainJob: Suspended,
Complete and Failed (kubeflow/trainer pkg/apis/trainer/v1alpha1: TrainJobSuspended "Suspended", TrainJobComplete
"Complete", TrainJobFailed "Failed"; the JobSet plugin copies its JobSet's Completed and Failed conditions under
those types)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from conftest import run_mpigen

from mpigen.manifests.gitops import TRAINJOB_HEALTH_KEY, trainjob_health_check

lupa = pytest.importorskip("lupa", reason="lupa (pip, `make test` installs it) runs the Lua")


def health(version: str, conditions: list[dict[str, str]] | None) -> tuple[str, str]:
    runtime = importlib.import_module(f"lupa.{version}").LuaRuntime(unpack_returned_tuples=True)
    job: dict[str, Any] = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                           "metadata": {"name": "job", "namespace": "ml-training"}, "spec": {}}
    if conditions is not None:
        job["status"] = {"conditions": conditions}
    runtime.globals().obj = runtime.table_from(job, recursive=True)
    result = runtime.execute(trainjob_health_check())
    return result["status"], result["message"]


def condition(kind: str, status: str = "True", message: str | None = None) -> dict[str, str]:
    found = {"type": kind, "status": status, "reason": f"{kind}Reason"}
    if message is not None:
        found["message"] = message
    return found


@pytest.mark.parametrize("version", ["lua51", "lua54"])
def test_the_health_follows_the_conditions(version):
    assert health(version, None) == ("Progressing", "Waiting for Kubeflow Trainer to create the job")
    assert health(version, []) == ("Progressing", "TrainJob running")
    # Resumed: the Suspended condition turns False when the job is unsuspended (Kueue's admission).
    assert health(version, [condition("Suspended", "False")]) == ("Progressing", "TrainJob running")
    assert health(version, [condition("Suspended", message="TrainJob is suspended")]) == \
        ("Suspended", "TrainJob is suspended")
    assert health(version, [condition("Suspended", "False"), condition("Complete", message="jobset completed")]) == \
        ("Healthy", "jobset completed")
    # Failed wins over anything else that is true at the same time; without a message, the reason.
    assert health(version, [condition("Complete"), condition("Failed")]) == ("Degraded", "FailedReason")


def test_the_check_is_shipped_where_argo_cd_syncs_trainjobs(tmp_path: Path):
    # dgx-lab syncs with Argo CD and runs the example fleet's TrainJob; cpu-lab runs none.
    from conftest import PROFILES

    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out).returncode == 0
    shipped = sorted(path.relative_to(out).as_posix() for path in out.rglob("trainjob-health.lua"))
    assert shipped == ["dgx-lab/bootstrap/argocd/trainjob-health.lua"]
    assert (out / shipped[0]).read_text(encoding="utf-8") == trainjob_health_check()
    text = (out / "dgx-lab/bootstrap/root/root-application.yaml").read_text(encoding="utf-8")
    assert TRAINJOB_HEALTH_KEY in text and "bootstrap/argocd/trainjob-health.lua" in text
