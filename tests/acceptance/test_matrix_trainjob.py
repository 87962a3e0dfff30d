"""The hardware x provider matrix of tests/acceptance/test_matrix.py again, each cluster with `jobBackend: trainjob`
and every job OpenMPI (the only implementation Trainer's MPI plugin writes a hostfile for): every job compiles to
a TrainJob whose TrainingRuntime is in its cluster's infra chart, renders with real Helm 3 and 4, passes
`mpigen check --strict`, validates against Trainer's CRDs, and the runtime's pods are valid pods of the cluster's
Kubernetes."""

from __future__ import annotations

import re
from pathlib import Path

import kubernetes_validate
import pytest
from conftest import CustomResourceSchemas, is_run_of, require_helm
from test_matrix import (
    COMBINATIONS,
    assert_helm_renders_the_compiled_objects,
    check_matrix_strict,
    compile_matrix,
    matrix_files,
    placement,
    render_matrix,
)

from mpigen.commands.pipeline import CompileResult

TRAINJOB = "jobBackend: trainjob\n"
OPENMPI = [combination for combination in COMBINATIONS if combination[2] == "OpenMPI"]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    files = {path: text + TRAINJOB if path.startswith("clusters/") else text
             for path, text in matrix_files(OPENMPI).items()}
    return render_matrix(tmp_path_factory.mktemp("trainjob-matrix"), files)


@pytest.fixture(scope="module")
def compiled(matrix: tuple[Path, Path]) -> CompileResult:
    return compile_matrix(matrix[0])


def test_every_combination_is_a_trainjob_on_a_runtime_of_its_infra_chart(compiled, upstream):
    crds = CustomResourceSchemas([upstream / "trainer" / "trainer.kubeflow.org_trainjobs.yaml",
                                  upstream / "trainer" / "trainer.kubeflow.org_trainingruntimes.yaml"])
    clusters = {cluster.name: cluster for cluster in compiled.fleet.clusters}
    trainjobs, runtimes = {}, {}
    for chart in compiled.charts:
        cluster = chart.directory.split("/", 1)[0]
        for manifest in chart.manifests:
            obj = manifest.obj
            assert obj["kind"] not in ("MPIJob", "Job"), chart.directory
            if obj["apiVersion"] != "trainer.kubeflow.org/v1alpha1":
                continue
            problems = crds.problems(obj)
            if obj["kind"] == "TrainJob":
                assert "/jobs/" in chart.directory
                trainjobs[chart.directory] = (obj["metadata"]["namespace"], obj["spec"]["runtimeRef"], problems)
                continue
            assert obj["kind"] == "TrainingRuntime" and chart.directory.endswith("/infra"), chart.directory
            for rjob in obj["spec"]["template"]["spec"]["replicatedJobs"]:
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                       "spec": rjob["template"]["spec"]["template"]["spec"]}
                try:
                    kubernetes_validate.validate(pod, clusters[cluster].kubernetes_version, strict=True)
                except kubernetes_validate.utils.ValidationError as exc:
                    problems.append(f"{rjob['name']}: {exc.message}")
            runtimes[(cluster, obj["metadata"]["namespace"], obj["metadata"]["name"])] = problems
    expected = {f"{c}/jobs/{j}" for c, _, _, j in (placement(*combination) for combination in OPENMPI)}
    assert set(trainjobs) == expected and len(runtimes) == len(expected)
    for directory, (namespace, ref, problems) in trainjobs.items():
        assert problems == [], directory
        assert ref["kind"] == "TrainingRuntime" and is_run_of(ref["name"], directory.rsplit("/", 1)[1])
        # Trainer looks the runtime up in the TrainJob's namespace: the infra chart of the same cluster holds it.
        assert runtimes[(directory.split("/", 1)[0], namespace, ref["name"])] == [], directory


def test_helm3_renders_every_trainjob_chart_to_the_objects_mpigen_built(matrix, compiled):
    assert_helm_renders_the_compiled_objects(require_helm(3), matrix[1], compiled)


def test_the_trainjob_matrix_passes_check_strict_with_real_helm(helm4, upstream, matrix, compiled):
    _, charts = matrix
    kinds = {m.obj["kind"] for chart in compiled.charts for m in chart.manifests}
    summary = check_matrix_strict(helm4, upstream, charts, kinds | {"Application", "HelmRelease", "GitRepository",
                                                                  "Kustomization"}, compiled)
    clusters = {placement(*combination)[0] for combination in OPENMPI}
    charts_checked = len(OPENMPI) + len(clusters)
    assert re.search(rf"^0 error\(s\), 0 warning\(s\) in \d+ document\(s\) of {charts_checked} chart\(s\)",
                     summary), summary
