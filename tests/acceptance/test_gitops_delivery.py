"""GitOps delivery as teams run it, through the real CLI: a private Flux repository (an existing GitRepository, or
mpigen's own with a credentials Secret), an Argo CD ApplicationSet, and per-environment values files.

`mpigen render` compiles a copy of the example fleet with every option at once (dgx-lab: an ApplicationSet and a
values folder; cpu-lab: Flux with a credentials Secret and a values folder; volcano-lab: Flux on the `flux-system`
GitRepository), and `mpigen check --strict` judges the output, the bootstrap objects by the Argo CD and Flux CRDs'
schemas it ships (tests/unit/check/test_check_schemas.py holds them equal to the upstream CRDs converted): 0 errors,
0 warnings. A job chart is then rendered by real Helm with a per-environment values file, as Argo CD and Flux
render it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import ACCEPTANCE_CHARTS, PROFILES, require_helm, run_helm, run_mpigen
from ruamel.yaml import YAML

REPO_LINE = "  repoURL: https://git.example.com/platform/gpu-fleet.git\n"
EDITS = {
    "dgx-lab": REPO_LINE + "  applications: applicationset\n  valuesPath: environments/dgx-lab\n",
    "cpu-lab": REPO_LINE + "  secretRef: gpu-fleet-deploy-key\n  valuesPath: environments/cpu-lab\n",
}
FLUX_SYSTEM = {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}


def load_all(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")) if doc is not None]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose profiles use every option, rendered by `mpigen render profiles -o charts`."""
    root = tmp_path_factory.mktemp("fleet")
    shutil.copytree(PROFILES, root / "profiles")
    for cluster, block in EDITS.items():
        path = root / "profiles" / "clusters" / f"{cluster}.yaml"
        text = path.read_text(encoding="utf-8")
        assert text.endswith(REPO_LINE)
        path.write_text(text.removesuffix(REPO_LINE) + block, encoding="utf-8")
    volcano = root / "profiles" / "clusters" / "volcano-lab.yaml"
    volcano.write_text(volcano.read_text(encoding="utf-8") + "gitops:\n  tool: flux\n  sourceRef:\n    name: flux-system\n",
                       encoding="utf-8")
    result = run_mpigen("render", "profiles", "-o", "charts", cwd=root)
    assert result.returncode == 0, result.stderr
    return root


def test_the_output_passes_check_strictly_with_no_warning(repo: Path, helm4: Path) -> None:
    result = run_mpigen("check", "--strict", "--helm", helm4, "charts", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = [line for line in result.stdout.splitlines() if not line.startswith("pod security ")]
    # 22 charts and 46 acceptance charts (conftest.ACCEPTANCE_CHARTS); 8 bootstrap files and the acceptance.yaml of
    # dgx-lab, dgx-pod and volcano-lab.
    assert len(summary) == 1 and re.fullmatch(r"0 error\(s\), 0 warning\(s\) in \d+ document\(s\) of 71 chart\(s\) and "
                                              r"11 manifest file\(s\)", summary[0]), summary


def test_a_private_flux_repository_compiles_to_a_git_repository_with_its_secret(repo: Path) -> None:
    git, kustomization = load_all(repo / "charts/cpu-lab/bootstrap/root/root-sync.yaml")
    assert (git["kind"], git["spec"]["secretRef"]) == ("GitRepository", {"name": "gpu-fleet-deploy-key"})
    assert git["spec"]["ignore"] == "/*\n!/charts/\n!/environments/cpu-lab/\n"
    assert kustomization["spec"]["sourceRef"]["name"] == "cpu-lab"


def test_flux_on_the_flux_system_git_repository_writes_none_of_its_own(repo: Path) -> None:
    (kustomization,) = load_all(repo / "charts/volcano-lab/bootstrap/root/root-sync.yaml")
    assert kustomization["kind"] == "Kustomization" and kustomization["spec"]["sourceRef"] == FLUX_SYSTEM
    releases = load_all(repo / "charts/volcano-lab/bootstrap/apps/helmreleases.yaml")
    assert len(releases) == 3 and all(r["spec"]["chart"]["spec"]["sourceRef"] == FLUX_SYSTEM for r in releases)
    # Its 6 acceptance charts (conftest.ACCEPTANCE_CHARTS) are released suspended, apart from the jobs.
    acceptance = load_all(repo / "charts/volcano-lab/bootstrap/apps/acceptance.yaml")
    assert [r["spec"]["chart"]["spec"]["chart"] for r in acceptance] == [
        f"./charts/{chart}" for chart in ACCEPTANCE_CHARTS if chart.startswith("volcano-lab/")]
    assert all(r["spec"]["suspend"] is True and r["spec"]["chart"]["spec"]["sourceRef"] == FLUX_SYSTEM for r in acceptance)


def test_argo_cd_gets_one_applicationset(repo: Path) -> None:
    # The acceptance charts' Applications stay apart, never synced automatically (the ApplicationSet's would be).
    assert sorted(p.name for p in (repo / "charts/dgx-lab/bootstrap/apps").iterdir()) == ["acceptance.yaml",
                                                                                         "applicationset.yaml"]
    acceptance = load_all(repo / "charts/dgx-lab/bootstrap/apps/acceptance.yaml")
    assert [a["spec"]["source"]["path"] for a in acceptance] == [
        f"charts/{chart}" for chart in ACCEPTANCE_CHARTS if chart.startswith("dgx-lab/")]
    assert all(a["kind"] == "Application" and "automated" not in a["spec"]["syncPolicy"] for a in acceptance)
    (appset,) = load_all(repo / "charts/dgx-lab/bootstrap/apps/applicationset.yaml")
    assert appset["kind"] == "ApplicationSet"
    assert [d["path"] for g in appset["spec"]["generators"] for d in g["git"]["directories"]] == [
        "charts/dgx-lab/infra", "charts/dgx-lab/jobs/pi", "charts/dgx-lab/jobs/resnet50-dgx",
        "charts/dgx-lab/jobs/resnet50-trainjob", "charts/dgx-lab/jobs/tensorflow-benchmarks"]


@pytest.mark.parametrize("major", [3, 4])
def test_a_per_environment_values_file_is_what_helm_renders(repo: Path, major: int) -> None:
    """As Argo CD (`helm template` with the application's valueFiles) and Flux (the chart's values.yaml, then the
    environment's) render the job: the image, the worker count (the hostfile follows) and suspend from the file."""
    helm = require_helm(major)
    values = repo / "environments" / "dgx-lab" / "pi.yaml"
    values.parent.mkdir(parents=True, exist_ok=True)
    values.write_text("image: registry.staging.example.com/mpi-pi:openmpi\nworkers: 3\nsuspend: true\n",
                      encoding="utf-8")
    chart = repo / "charts" / "dgx-lab" / "jobs" / "pi"
    docs = [d for d in YAML(typ="safe", pure=True).load_all(
        run_helm(helm, "template", "pi", chart, "--namespace", "hpc", "-f", chart / "values.yaml", "-f", values).stdout)
        if d]
    (job,) = [d for d in docs if d["kind"] == "MPIJob"]
    specs = job["spec"]["mpiReplicaSpecs"]
    assert {specs[role]["template"]["spec"]["containers"][0]["image"] for role in specs} == {
        "registry.staging.example.com/mpi-pi:openmpi"}
    assert specs["Worker"]["replicas"] == 3 and job["spec"]["runPolicy"]["suspend"] is True
    (hostfile,) = [d for d in docs if d["kind"] == "ConfigMap"]
    assert len(hostfile["data"]["hostfile"].splitlines()) == 3
    assert job["metadata"]["name"] == YAML(typ="safe", pure=True).load(
        (chart / "Chart.yaml").read_text(encoding="utf-8"))["annotations"]["mpigen/mpijob"]  # never renamed by values
    # Anything else (resources, the namespace, rails) is the profile's: the chart's values schema refuses it.
    values.write_text("resources:\n  limits:\n    nvidia.com/gpu: 4\n", encoding="utf-8")
    refused = run_helm(helm, "template", "pi", chart, "-f", values, check=False)
    assert refused.returncode != 0 and "resources" in refused.stderr, refused.stderr
