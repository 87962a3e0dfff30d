"""The hardware x provider x MPI matrix of tests/acceptance/test_matrix.py again, each cluster under Volcano with
`jobBackend: volcano-job`: every job compiles to a Volcano Job, renders with real Helm 3 and 4, passes
`mpigen check --strict`, validates against Volcano's CRD, and its pods are valid pods of the cluster's Kubernetes."""

from __future__ import annotations

import re
from pathlib import Path

import kubernetes_validate
import pytest
from conftest import CustomResourceSchemas, is_run_of, require_helm
from test_matrix import (
    COMBINATIONS,
    GPU_HARDWARE,
    PROVIDERS,
    assert_helm_renders_the_compiled_objects,
    check_matrix_strict,
    compile_matrix,
    matrix_files,
    placement,
    render_matrix,
)

from mpigen.commands.pipeline import CompileResult

VOLCANO = "scheduling:\n  scheduler: volcano\njobBackend: volcano-job\n"


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    files = {path: text + VOLCANO if path.startswith("clusters/") else text
             for path, text in matrix_files(COMBINATIONS).items()}
    return render_matrix(tmp_path_factory.mktemp("volcano-matrix"), files)


@pytest.fixture(scope="module")
def compiled(matrix: tuple[Path, Path]) -> CompileResult:
    return compile_matrix(matrix[0])


def test_every_combination_is_a_volcano_job_valid_for_volcano_and_kubernetes(compiled, upstream):
    crds = CustomResourceSchemas([upstream / "scheduling" / "batch.volcano.sh_jobs.yaml"])
    clusters = {cluster.name: cluster for cluster in compiled.fleet.clusters}
    found = {}
    for chart in compiled.charts:
        for manifest in chart.manifests:
            obj = manifest.obj
            assert obj["kind"] != "MPIJob", chart.directory
            if obj["apiVersion"] != "batch.volcano.sh/v1alpha1":
                continue
            version = clusters[chart.directory.split("/", 1)[0]].kubernetes_version
            problems = crds.problems(obj)
            for task in obj["spec"]["tasks"]:
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": task["template"]["spec"]}
                try:
                    kubernetes_validate.validate(pod, version, strict=True)
                except kubernetes_validate.utils.ValidationError as exc:
                    problems.append(f"{task['name']}: {exc.message}")
            found[chart.directory] = (obj["metadata"]["name"], problems)
    expected = {f"{c}/jobs/{j}" for c, _, _, j in (placement(*combination) for combination in COMBINATIONS)}
    assert set(found) == expected
    for directory, (name, problems) in found.items():
        assert is_run_of(name, directory.rsplit("/", 1)[1]) and problems == [], directory


def test_helm3_renders_every_volcano_chart_to_the_objects_mpigen_built(matrix, compiled):
    assert_helm_renders_the_compiled_objects(require_helm(3), matrix[1], compiled)


def test_the_volcano_matrix_passes_check_strict_with_real_helm(helm4, upstream, matrix, compiled):
    _, charts = matrix
    kinds = {m.obj["kind"] for chart in compiled.charts for m in chart.manifests}
    summary = check_matrix_strict(helm4, upstream, charts, kinds | {"Application", "HelmRelease", "GitRepository",
                                                                  "Kustomization"}, compiled)
    charts_checked = len(COMBINATIONS) + len(PROVIDERS) * len(GPU_HARDWARE) + 1
    assert re.search(rf"^0 error\(s\), 0 warning\(s\) in \d+ document\(s\) of {charts_checked} chart\(s\)",
                     summary), summary
