"""generator/commands/pipeline.py: a cluster's explicit `podSecurity` level that its jobs raise is said, as a warning at the
entry, naming the jobs and the level the infra chart uses instead.

The example jobs' levels, by hand (tests/acceptance/test_check_cli.py COMMITTED_LEVELS): in dgx-lab's `hpc`, pi
needs restricted; in `ml-training`, resnet50-dgx and resnet50-trainjob need privileged (IPC_LOCK for RDMA) and
tensorflow-benchmarks baseline (it runs as root).
"""

from __future__ import annotations

from conftest import PROFILES

from mpigen.commands.pipeline import check_profiles, compile_profiles
from mpigen.support.diagnostics import Severity

DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
PI = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
END = len(DGX_LAB.splitlines()) + 1  # the first line added after the example's cluster
# dgx-lab's acceptance jobs (in ml-training, its first namespace), each with RDMA rails: IPC_LOCK.
ACCEPTANCE = ("all-gather-pair", "all-gather-pool", "all-reduce-pair", "all-reduce-pool",
              *(f"perftest-rail{n}" for n in range(4)))
HOST_PATH = "volumes:\n  - {name: data, hostPath: /data, mountPath: /data}\n"


def _warnings(result) -> list[str]:
    return [d.format() for d in result.diagnostics if d.severity is Severity.WARNING]


def test_a_level_the_jobs_raise_is_a_warning_at_its_entry_naming_them(profiles_copy):
    root = profiles_copy({"clusters/dgx-lab.yaml": DGX_LAB + "podSecurity:\n  ml-training: restricted\n  hpc: baseline\n",
                          "jobs/pi.yaml": PI + HOST_PATH})
    result = check_profiles([root])
    assert result.ok
    cluster = f"{root}/clusters/dgx-lab.yaml"
    assert _warnings(result) == [
        f"{cluster}:{END + 1}:16: warning: `podSecurity` asks for restricted in namespace 'ml-training', but job "
        "resnet50-dgx needs privileged (container worker adds capability IPC_LOCK), job resnet50-trainjob needs "
        "privileged (container node adds capability IPC_LOCK), job tensorflow-benchmarks needs baseline, "
        + ", ".join(f"job accept-dgx-{test} needs privileged (container worker adds capability IPC_LOCK)"
                    for test in ACCEPTANCE[:5]) + " and 3 more: the infra "  # the warning names at most eight
        "chart labels the namespace privileged; write `ml-training: privileged` to say so, or change the jobs",
        f"{cluster}:{END + 2}:8: warning: `podSecurity` asks for baseline in namespace 'hpc', but job pi needs "
        "privileged (hostPath volume data (/data)): the infra chart labels the namespace privileged; write "
        "`hpc: privileged` to say so, or change the job"]


def test_a_level_that_holds_or_allows_more_says_nothing(profiles_copy):
    root = profiles_copy({"clusters/dgx-lab.yaml": DGX_LAB + "podSecurity:\n  ml-training: privileged\n  hpc: baseline\n"})
    result = check_profiles([root])
    assert result.ok and _warnings(result) == []


def test_the_warning_comes_with_the_charts_labelled_as_it_says(profiles_copy):
    root = profiles_copy({"clusters/dgx-lab.yaml": DGX_LAB + "podSecurity:\n  hpc: restricted\n",
                          "jobs/pi.yaml": PI + HOST_PATH})
    result = compile_profiles([root])
    assert result.ok and len(_warnings(result)) == 1 and "in namespace 'hpc'" in _warnings(result)[0]
    infra = next(chart for chart in result.charts if chart.directory == "dgx-lab/infra")
    (hpc,) = [m.obj for m in infra.manifests if m.obj["kind"] == "Namespace" and m.obj["metadata"]["name"] == "hpc"]
    assert hpc["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_the_warning_names_the_first_jobs_and_counts_the_rest(profiles_copy):
    """A cluster of many jobs that raise its level gets one warning of bounded length, not one name per job."""
    jobs = {f"jobs/pi-{i:02}.yaml": PI.replace("name: pi\n", f"name: pi-{i:02}\n") + HOST_PATH for i in range(12)}
    root = profiles_copy({"clusters/dgx-lab.yaml": DGX_LAB + "podSecurity:\n  hpc: baseline\n",
                          "jobs/pi.yaml": PI + HOST_PATH, **jobs})
    result = check_profiles([root])
    assert result.ok
    (warning,) = _warnings(result)
    named = [f"job {name} needs privileged (hostPath volume data (/data))"
             for name in ("pi", *(f"pi-{i:02}" for i in range(7)))]
    assert f"but {', '.join(named)} and 5 more: the infra chart labels the namespace privileged" in warning, warning
