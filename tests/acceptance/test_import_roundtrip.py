"""The issue's round trip, over what `mpigen import` writes (not over hand-written profiles): each pool of the cluster
fixtures is exported, imported by the real command, given a job that asks for every rail and GPU of a node, rendered,
and checked against the same export: no finding. Each mismatch a real cluster drifts into (seeded into a copy of the
export by tests/acceptance/test_drift.py's seeds) gives exactly one finding, at the line of the imported profile that
is no longer true. The import runs once per pool as a process; the re-import and the checks run in-process."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import current_folder, invoke_mpigen, run_mpigen
from test_drift import EXPORT, INSTANCE_TYPE, PRODUCT, export_copy, fewer, other_product, renamed, tainted, unlabelled

from mpigen.check.report import as_text
from mpigen.check.run import CheckOptions, run_check
from mpigen.commands.pipeline import compile_profiles
from mpigen.package import output_files
from mpigen.write import write_tree

POOLS = {  # fixture file: (hardware and pool name, the label import selects the pool by, a rail's resource, GPUs)
    "dgx-1": ("dgx-1", PRODUCT, "rdma_rail0", 8),
    "dgx-a100": ("dgx-a100", PRODUCT, "hdr_rail0", 8),
    "dgx-h100": ("dgx-h100", PRODUCT, "rdma_shared_rail0", 8),
    "cpu": ("cpu-2s64c", INSTANCE_TYPE, None, 0),
}
OTHER_GPU = {"dgx-1": "Tesla-V100-SXM2-32GB", "dgx-a100": "A100-SXM4-80GB", "dgx-h100": "NVIDIA-H200"}


def _job(pool: str, gpus: int) -> str:
    size = f"gpusPerWorker: {gpus}\n" if gpus else "slotsPerWorker: 4\n"
    return (f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: probe\ncluster: lab\npool: {pool}\nnamespace: training\n"
            f"image: example.com/probe:1\nworkers: 2\n{size}program: [/bin/true]\n")


@pytest.fixture(scope="module", params=sorted(POOLS))
def imported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """One pool imported by the real command, with a job on it, compiled into charts beside the profiles."""
    fixture = request.param
    root = tmp_path_factory.mktemp(f"import-{fixture}")
    done = run_mpigen("import", EXPORT / f"{fixture}.yaml", EXPORT / "operators.yaml", "--cluster", "lab",
                      "-o", root / "profiles")
    assert done.returncode == 0, done.stderr
    (root / "profiles" / "jobs").mkdir()
    (root / "profiles" / "jobs" / "probe.yaml").write_text(_job(POOLS[fixture][0], POOLS[fixture][3]))
    result = compile_profiles([root / "profiles"])
    assert result.ok, [d.format() for d in result.diagnostics]
    write_tree(root / "charts", output_files(result.charts))
    return fixture, root


def _check(root: Path, export: Path) -> list[tuple[str, str, int | None]]:
    with current_folder(root):
        report = run_check([Path("charts")], CheckOptions(use_helm=False, context=(export,)))
    return [(f.rule, f.source, f.line) for f in report.findings if f.rule == "drift"] + \
        [(f.rule, as_text(report), None) for f in report.findings if f.rule != "drift"]


def _line(root: Path, profile: str, *needles: str) -> tuple[str, str, int]:
    """The drift finding expected at the first line of `profile` holding every needle."""
    lines = (root / "profiles" / profile).read_text(encoding="utf-8").splitlines()
    return "drift", f"profiles/{profile}", next(i + 1 for i, line in enumerate(lines) if all(n in line for n in needles))


def _only(fixture: str, export: Path) -> Path:
    """The export as the test imported it: the pool's file and operators.yaml, nothing of the other pools."""
    for path in export.glob("*.yaml"):
        if path.name not in (f"{fixture}.yaml", "operators.yaml", "README.md"):
            path.unlink()
    return export


def test_the_round_trip_gives_no_finding(imported: tuple[str, Path], tmp_path: Path) -> None:
    fixture, root = imported
    assert _check(root, _only(fixture, export_copy(tmp_path / "export"))) == []


def _seeds(fixture: str, root: Path) -> dict[str, tuple[Callable[[Path], None], tuple[str, str, int]]]:
    hardware, label, resource, _ = POOLS[fixture]
    file = f"{fixture}.yaml"
    seeds = {
        "missing label": (unlabelled(file) if label == INSTANCE_TYPE else _unproduct(file),
                          _line(root, f"hardware/{hardware}.yaml", f'"{label}":')),
        "fewer nodes": (fewer(file), _line(root, "clusters/lab.yaml", "nodes: 2" if resource else "nodes: 4")),
        "new taint": (tainted(file), _line(root, "clusters/lab.yaml", f"- name: {hardware}")
                      if not resource else _line(root, "clusters/lab.yaml", '- {key: "nvidia.com/gpu"')),
    }
    if resource is not None:
        seeds["renamed resource"] = (renamed(resource, resource.replace("rail", "mlx5")),
                                     _line(root, "clusters/lab.yaml", f'resourceName: "{resource}"'))
        seeds["other GPU product"] = (other_product(file, OTHER_GPU[fixture]),
                                      _line(root, f"hardware/{hardware}.yaml", "model:", f"{PRODUCT}\"]"))
    return seeds


def _unproduct(file: str) -> Callable[[Path], None]:
    """GFD stopped labelling the pool's nodes with their product (its pod is gone from them)."""
    from test_drift import _edit_nodes
    return _edit_nodes(file, lambda nodes, _: [node["metadata"]["labels"].pop(PRODUCT) for node in nodes])


@pytest.mark.parametrize("seed", ["missing label", "fewer nodes", "new taint", "renamed resource", "other GPU product"])
def test_each_seeded_mismatch_is_one_finding_at_the_imported_line(imported: tuple[str, Path], seed: str,
                                                                  tmp_path: Path) -> None:
    fixture, root = imported
    seeds = _seeds(fixture, root)
    if seed not in seeds:
        assert POOLS[fixture][2] is None  # only the CPU pool has no rail to rename and no GPU to change
        return
    change, expected = seeds[seed]
    export = _only(fixture, export_copy(tmp_path / "export", change))
    assert _check(root, export) == [expected]


def test_the_same_export_imported_again_keeps_every_profile(imported: tuple[str, Path], tmp_path: Path) -> None:
    fixture, root = imported
    profiles = shutil.copytree(root / "profiles", tmp_path / "profiles")
    again = invoke_mpigen("import", EXPORT / f"{fixture}.yaml", EXPORT / "operators.yaml", "--cluster", "lab",
                       "-o", profiles)
    assert again.returncode == 0 and "wrote" not in again.stdout, again.stdout + again.stderr
