"""Drift: `mpigen check CHARTS --context OBJECTS` judges the profiles the charts were compiled from against the live
nodes of the export. The fleet in tests/fixtures/drift/profiles/ is what the cluster fixtures
(tests/fixtures/clusters/) say, written by hand (one cluster per network provider: SR-IOV for the DGX-1, DGX A100
and CPU pools, the RDMA shared device plugin for the DGX H100 pool). The round trip gives no finding; each
mismatch seeded into a copy of the export, as a real change would look there, gives exactly one, at the profile
line that is no longer true. Every seed runs in-process; a few real processes prove the command line and formats."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import current_folder, run_mpigen, sarif_problems

from mpigen.check.report import as_junit, as_text
from mpigen.check.run import CheckOptions, run_check
from mpigen.commands.pipeline import compile_profiles
from mpigen.package import output_files
from mpigen.write import write_tree

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPORT = FIXTURES / "clusters"
FLEET = FIXTURES / "drift" / "profiles"

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
PRODUCT = "nvidia.com/gpu.product"


def compiled(root: Path, edit: Callable[[Path], None] | None = None) -> Path:
    """The fleet's profiles (`edit`ed) and the charts they compile to, side by side as in a repository."""
    shutil.copytree(FLEET, root / "profiles")
    if edit is not None:
        edit(root / "profiles")
    result = compile_profiles([root / "profiles"])
    assert result.ok, [d.format() for d in result.diagnostics]
    write_tree(root / "charts", output_files(result.charts))
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled(tmp_path_factory.mktemp("drift"))


@pytest.fixture
def in_project(project: Path, tmp_path: Path) -> Iterator[Path]:
    """The test's own folder for its exports, the project the working directory (the charts are `charts`)."""
    with current_folder(project):
        yield tmp_path


def export_copy(target: Path, change: Callable[[Path], None] | None = None) -> Path:
    shutil.copytree(EXPORT, target)
    if change is not None:
        change(target)
    return target


def _edit_nodes(file: str, edit: Callable[[list[dict[str, Any]], dict[str, Any]], None]) -> Callable[[Path], None]:
    """A change to the Nodes of one pool's export file (`edit(nodes, the List)`), written back as YAML."""
    def change(folder: Path) -> None:
        path = folder / file
        exported = yaml.safe_load(path.read_text(encoding="utf-8"))
        edit([item for item in exported["items"] if item["kind"] == "Node"], exported)
        path.write_text(yaml.safe_dump(exported), encoding="utf-8")
    return change


def renamed(old: str, new: str) -> Callable[[Path], None]:
    """The device plugin advertises a rail under another name: its config, the nodes' capacity and allocatable and
    the live NADs all say the new name (every file of the export, as the operators roll it out)."""
    def change(folder: Path) -> None:
        for path in folder.glob("*.yaml"):
            path.write_text(path.read_text(encoding="utf-8").replace(f"{old}\"", f"{new}\"")
                            .replace(f"{old}:", f"{new}:").replace(f"/{old}\n", f"/{new}\n"), encoding="utf-8")
    return change


def unlabelled(file: str) -> Callable[[Path], None]:
    """The pool's nodes lost (or never got) the instance-type label the pool selects them by."""
    return _edit_nodes(file, lambda nodes, _: [node["metadata"]["labels"].pop(INSTANCE_TYPE) for node in nodes])


def fewer(file: str) -> Callable[[Path], None]:
    """One node of the pool is gone (drained and deleted)."""
    return _edit_nodes(file, lambda nodes, exported: exported["items"].remove(nodes[-1]))


def other_product(file: str, product: str) -> Callable[[Path], None]:
    """The pool's nodes have another GPU: GFD labels them with its product."""
    def edit(nodes: list[dict[str, Any]], _: dict[str, Any]) -> None:
        for node in nodes:
            node["metadata"]["labels"][PRODUCT] = product
    return _edit_nodes(file, edit)


def tainted(file: str) -> Callable[[Path], None]:
    """The admins taint the pool's nodes, and nobody tells the profiles."""
    def edit(nodes: list[dict[str, Any]], _: dict[str, Any]) -> None:
        for node in nodes:
            node.setdefault("spec", {}).setdefault("taints", []).append(
                {"effect": "NoSchedule", "key": "example.com/maintenance", "value": "true"})
    return _edit_nodes(file, edit)


def failed_gpu(file: str) -> Callable[[Path], None]:
    """A GPU of one node failed: the device plugin advertises one fewer, and GFD counts one fewer."""
    def edit(nodes: list[dict[str, Any]], _: dict[str, Any]) -> None:
        nodes[0]["metadata"]["labels"]["nvidia.com/gpu.count"] = "7"
        for counted in ("allocatable", "capacity"):
            nodes[0]["status"][counted]["nvidia.com/gpu"] = "7"
    return _edit_nodes(file, edit)


def partitioned(how: str) -> Callable[[Path], None]:
    """The GPU operator cuts the pool's GPUs up, as GPU Feature Discovery then labels them (its README): MIG under
    the `single` strategy (the product gets the MIG profile, the count is of slices), under `mixed` (the slices are
    resources of their own), or time-sliced four ways (the product gets `-SHARED`, the GPUs advertised are four
    times as many)."""
    def edit(nodes: list[dict[str, Any]], _: dict[str, Any]) -> None:
        for node in nodes:
            labels, status = node["metadata"]["labels"], node["status"]
            if how == "shared":
                labels.update({"nvidia.com/gpu.replicas": "4", PRODUCT: labels[PRODUCT] + "-SHARED"})
            else:
                labels["nvidia.com/mig.strategy"] = how
            if how == "single":
                labels.update({PRODUCT: labels[PRODUCT] + "-MIG-1g.5gb", "nvidia.com/gpu.count": "56"})
            for counted in ("allocatable", "capacity"):
                if how == "mixed":
                    status[counted]["nvidia.com/mig-1g.5gb"] = status[counted].pop("nvidia.com/gpu").replace("8", "56")
                else:
                    status[counted]["nvidia.com/gpu"] = {"single": "56", "shared": "32"}[how]
    return _edit_nodes("dgx-a100.yaml", edit)


def no_gpu_plugin(file: str) -> Callable[[Path], None]:
    """The GPU device plugin (and GFD) do not run on the pool's nodes: they advertise and count no GPU."""
    def edit(nodes: list[dict[str, Any]], _: dict[str, Any]) -> None:
        for node in nodes:
            node["metadata"]["labels"].pop("nvidia.com/gpu.count")
            for counted in ("allocatable", "capacity"):
                node["status"][counted].pop("nvidia.com/gpu")
    return _edit_nodes(file, edit)


def place(profile: str, anchor: str, key: str | None) -> tuple[str, int, int]:
    """Where a profile fact is written: the value of the first `key` at or after the line holding `anchor` (None:
    the anchor's list item itself, where the fact is not written)."""
    lines = (FLEET / profile).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if anchor in line)
    if key is None:
        return f"profiles/{profile}", start + 1, lines[start].index("- ") + 3
    index = next(i for i in range(start, len(lines)) if key in lines[i])
    value = lines[index].index(key) + len(key)
    return f"profiles/{profile}", index + 1, value + len(lines[index][value:]) - len(lines[index][value:].lstrip()) + 1


SRIOV, RDMA = "clusters/fixture-sriov.yaml", "clusters/fixture-rdma.yaml"
SEEDS = {
    "dgx-1 renamed resource": (renamed("rdma_rail0", "mlx5_rail0"), place(SRIOV, "name: rail0", "resourceName:")),
    "dgx-1 missing label": (unlabelled("dgx-1.yaml"), place(SRIOV, "name: dgx1", f"{INSTANCE_TYPE}:")),
    "dgx-1 fewer nodes": (fewer("dgx-1.yaml"), place(SRIOV, "name: dgx1", "nodes:")),
    "dgx-1 other GPU": (other_product("dgx-1.yaml", "Tesla-V100-SXM2-32GB"), place("hardware/dgx-1.yaml", "gpu:", "model:")),
    "dgx-1 new taint": (tainted("dgx-1.yaml"), place(SRIOV, "name: dgx1", "taints:")),
    "dgx-1 failed GPU": (failed_gpu("dgx-1.yaml"), place("hardware/dgx-1.yaml", "gpu:", "count:")),
    "dgx-a100 renamed resource": (renamed("hdr_rail0", "mlx5_hdr0"), place(SRIOV, "name: hdr0", "resourceName:")),
    "dgx-a100 missing label": (unlabelled("dgx-a100.yaml"), place(SRIOV, "name: dgxa100", f"{INSTANCE_TYPE}:")),
    "dgx-a100 fewer nodes": (fewer("dgx-a100.yaml"), place(SRIOV, "name: dgxa100", "nodes:")),
    "dgx-a100 other GPU": (other_product("dgx-a100.yaml", "A100-SXM4-80GB"),
                           place("hardware/dgx-a100.yaml", "gpu:", "model:")),
    "dgx-a100 new taint": (tainted("dgx-a100.yaml"), place(SRIOV, "name: dgxa100", "taints:")),
    "dgx-a100 no GPU plugin": (no_gpu_plugin("dgx-a100.yaml"),  # no `resource:` written: the gpu block's first key
                               (*place("hardware/dgx-a100.yaml", "gpu:", "count:")[:2], 3)),
    "dgx-a100 MIG single": (partitioned("single"), place("hardware/dgx-a100.yaml", "gpu:", "model:")),
    "dgx-a100 MIG mixed": (partitioned("mixed"), place("hardware/dgx-a100.yaml", "gpu:", "model:")),
    "dgx-a100 shared GPUs": (partitioned("shared"), place("hardware/dgx-a100.yaml", "gpu:", "model:")),
    "dgx-h100 renamed resource": (renamed("rdma_shared_rail0", "rdma_shared_mlx5_0"),
                                  place(RDMA, "name: rail0", "resourceName:")),
    "dgx-h100 missing label": (unlabelled("dgx-h100.yaml"), place(RDMA, "name: dgxh100", f"{INSTANCE_TYPE}:")),
    "dgx-h100 fewer nodes": (fewer("dgx-h100.yaml"), place(RDMA, "name: dgxh100", "nodes:")),
    "dgx-h100 other GPU": (other_product("dgx-h100.yaml", "NVIDIA-H200"), place("hardware/dgx-h100.yaml", "gpu:", "model:")),
    "dgx-h100 new taint": (tainted("dgx-h100.yaml"), place(RDMA, "name: dgxh100", "taints:")),
    "cpu missing label": (unlabelled("cpu.yaml"), place("hardware/cpu-node.yaml", "nodeLabels:", f"{INSTANCE_TYPE}:")),
    "cpu fewer nodes": (fewer("cpu.yaml"), place(SRIOV, "name: cpu", "nodes:")),
    "cpu new taint": (tainted("cpu.yaml"), place(SRIOV, "name: cpu", None)),
}


def check(context: Path, *clusters: tuple[str, Path]) -> Any:
    return run_check([Path("charts")], CheckOptions(use_helm=False, context=(context,), clusters=clusters))


def test_the_round_trip_gives_no_finding(in_project: Path) -> None:
    report = check(export_copy(in_project / "export"))
    assert report.findings == []
    assert len(report.charts) == 6


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_each_seeded_mismatch_is_one_finding_at_its_profile_line(seed: str, in_project: Path) -> None:
    change, (profile, line, column) = SEEDS[seed]
    report = check(export_copy(in_project / "export", change))
    assert [(f.rule, f.source, f.line, f.column) for f in report.findings] == [("drift", profile, line, column)], \
        as_text(report)
    found = report.findings[0]
    assert found.object.startswith("Node/")
    assert report.places[found] == (line, column)
    assert as_text(report).startswith(f"{profile}:{line}:{column}: {found.object}: ")
    assert f"{profile}:{line}:{column}" in as_junit(report)


def down(nodes: list[dict[str, Any]], _: dict[str, Any]) -> None:
    """One node is cordoned and another stopped reporting, with the taints Kubernetes puts on them for that."""
    nodes[0]["spec"]["unschedulable"] = True
    nodes[0]["spec"].setdefault("taints", []).append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    nodes[1]["status"]["conditions"] = [{"type": "Ready", "status": "Unknown"}]
    nodes[1]["spec"].setdefault("taints", []).extend([{"key": "node.kubernetes.io/unreachable", "effect": effect}
                                                      for effect in ("NoSchedule", "NoExecute")])


def test_a_cordoned_or_unreachable_node_is_no_drift_of_the_profiles(in_project: Path) -> None:
    """The taints of a node's state are not the pool's to declare (adding them would let its pods onto a cordoned
    node): the profiles are still true, and `plan --context` is where the nodes down now are counted out."""
    report = check(export_copy(in_project / "export", _edit_nodes("dgx-a100.yaml", down)))
    assert report.findings == [], as_text(report)


@pytest.mark.parametrize("how", ["single", "mixed", "shared"])
def test_gpus_cut_up_are_said_so_not_taken_for_another_model_or_count(how: str, in_project: Path) -> None:
    """Setting `gpu.model` to `A100-SXM4-40GB-MIG-1g.5gb` or `gpu.count` to 0 would describe slices as GPUs."""
    [found] = check(export_copy(in_project / "export", partitioned(how))).findings
    assert "are partitioned (" in found.message and "set `gpu." not in found.message
    assert ("MIG: nvidia.com/mig.strategy=" + how if how != "shared" else "shared: nvidia.com/gpu.replicas=4") \
        in found.message


def test_nodes_advertising_no_gpu_are_not_told_to_count_zero(in_project: Path) -> None:
    [found] = check(export_copy(in_project / "export", no_gpu_plugin("dgx-a100.yaml"))).findings
    assert found.path == ".gpu.resource" and "do not advertise; set `gpu.resource`" in found.message


def test_a_renamed_resource_names_the_jobs_and_what_the_nodes_advertise(in_project: Path) -> None:
    report = check(export_copy(in_project / "export", renamed("rdma_rail0", "mlx5_rail0")))
    [found] = report.findings
    assert found.object == "Node/dgx1-01, Node/dgx1-02"
    assert "nvidia.com/mlx5_rail0, which no rail names" in found.message
    assert found.message.endswith("jobs affected: train-dgx1")


def test_nodes_of_one_cluster_never_count_for_another(in_project: Path) -> None:
    """The DGX-1 nodes exported as the RDMA cluster's leave the SR-IOV cluster's dgx1 pool without nodes."""
    sriov, rdma = in_project / "sriov", in_project / "rdma"
    export_copy(sriov)
    rdma.mkdir()
    for name in ("dgx-1.yaml", "dgx-h100.yaml"):
        (sriov / name).rename(rdma / name)
    report = check(in_project, ("fixture-sriov", sriov), ("fixture-rdma", rdma))
    assert [(f.source, f.line) for f in report.findings] == [place(SRIOV, "name: dgx1", "nodes:")[:2]], as_text(report)


def test_an_export_of_one_cluster_is_no_drift_of_another(in_project: Path) -> None:
    """kubectl exports the cluster of its current context: without `--cluster`, the RDMA cluster, none of whose
    pools picks a node of the SR-IOV cluster's export, is not the one exported (it was judged as having no nodes)."""
    export = export_copy(in_project / "export")
    (export / "dgx-h100.yaml").unlink()
    assert check(export).findings == []
    (export / "dgx-1.yaml").unlink()  # the SR-IOV cluster is still judged: its dgx1 pool's nodes are gone
    assert [(f.source, f.line) for f in check(export).findings] == [place(SRIOV, "name: dgx1", "nodes:")[:2]]


def test_a_check_without_nodes_in_its_context_judges_no_drift(in_project: Path) -> None:
    export = export_copy(in_project / "export", fewer("dgx-1.yaml"))
    for path in export.glob("*.yaml"):
        if path.name != "operators.yaml":
            path.unlink()
    assert check(export).findings == []


def test_the_command_line_reports_drift_in_json_and_sarif(project: Path, tmp_path: Path) -> None:
    clean = run_mpigen("check", "charts", "--context", export_copy(tmp_path / "clean"), "--no-helm", cwd=project)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    export = export_copy(tmp_path / "export", renamed("hdr_rail0", "mlx5_hdr0"))
    profile, line, column = SEEDS["dgx-a100 renamed resource"][1]
    as_json = run_mpigen("check", "charts", "--context", export, "--no-helm", "--output", "json", cwd=project)
    assert as_json.returncode == 1, as_json.stderr
    [found] = json.loads(as_json.stdout)["findings"]
    assert (found["rule"], found["source"], found["line"], found["column"]) == ("drift", profile, line, column)
    assert found["path"] == ".rails[4].resourceName"
    as_sarif = run_mpigen("check", "charts", "--context", export, "--no-helm", "--output", "sarif", cwd=project)
    assert as_sarif.returncode == 1 and not sarif_problems(as_sarif.stdout)
    [result] = json.loads(as_sarif.stdout)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert (location["artifactLocation"]["uri"], location["region"]["startLine"], location["region"]["startColumn"]) \
        == (profile, line, column)


def test_plan_counts_the_live_nodes_and_a_job_they_cannot_hold_does_not_start(project: Path, tmp_path: Path) -> None:
    """`plan --context`: the pool's capacity is the live nodes that hold its workers, shown beside the claim; a job
    that fits the claim but not the live nodes never starts, and says why."""
    clean = run_mpigen("plan", "profiles", "--context", export_copy(tmp_path / "clean"), "--output", "json",
                       "--strict", cwd=project)
    assert clean.returncode == 0, clean.stderr
    pools = {p["name"]: p for c in json.loads(clean.stdout)["clusters"] for p in c["pools"]}
    assert {name: (p["nodes"], p["live_nodes"]) for name, p in pools.items()} == {
        "dgx1": (2, 2), "dgxa100": (2, 2), "cpu": (4, 4), "dgxh100": (2, 2)}
    short = run_mpigen("plan", "profiles", "--context", export_copy(tmp_path / "short", fewer("dgx-1.yaml")),
                       "--strict", cwd=project)
    assert short.returncode == 1
    assert "    live nodes: 1 of the 2 claimed (its selector (node.kubernetes.io/instance-type=dgx-1, " \
           "nvidia.com/gpu.product=Tesla-V100-SXM2-16GB) picks 1: dgx1-01); the plan counts the live ones" in short.stdout
    assert "train-dgx1 can never run: its 2 workers fit the 2 nodes pool 'dgx1' claims, but not the 1 live node(s)" \
        in short.stdout
    assert "4 job(s): 3 start at once, 0 wait, 1 can never run" in short.stdout


def test_workers_sharing_a_node_need_the_devices_the_profile_counts(tmp_path: Path) -> None:
    """Two workers of 4 GPUs a DGX-1 node each take a VF of every rail; nodes that advertise one VF of rail0 hold one
    worker each, so the cluster's `numVfs` (8) is what is not true."""
    def packed(profiles: Path) -> None:
        job = profiles / "jobs" / "train-dgx1.yaml"
        job.write_text(job.read_text(encoding="utf-8").replace("totalGpus: 16\n", "totalGpus: 16\ngpusPerWorker: 4\n"
                                                               "workerSpread: pack\n").replace('cpu: "16"', 'cpu: "8"'),
                       encoding="utf-8")

    def one_vf(nodes: list[dict[str, Any]], _: dict[str, Any]) -> None:
        for node in nodes:
            for counted in ("allocatable", "capacity"):
                node["status"][counted]["nvidia.com/rdma_rail0"] = "1"

    root = compiled(tmp_path / "packed", packed)
    with current_folder(root):
        report = check(export_copy(tmp_path / "export", _edit_nodes("dgx-1.yaml", one_vf)))
    [found] = report.findings
    assert (found.source, found.line, found.path) == (*place(SRIOV, "network:", "numVfs:")[:2], ".network.numVfs")
    assert "runs 4 workers on pool 'dgx1', 2 a node" in found.message
    assert "its nodes hold 2: dgx1-01 holds 1 (1 nvidia.com/rdma_rail0)" in found.message


def test_plan_refuses_an_export_it_cannot_read(project: Path, tmp_path: Path) -> None:
    (tmp_path / "export.yaml").write_text("kind: List\nitems: [\n", encoding="utf-8")
    refused = run_mpigen("plan", "profiles", "--context", tmp_path / "export.yaml", cwd=project)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.startswith(f"error: {tmp_path / 'export.yaml'}: document 1: not valid YAML")
    assert "Traceback" not in refused.stderr
    export = export_copy(tmp_path / "export")
    (export / "meta.yaml").write_text("exportedAt: today\n", encoding="utf-8")  # skipped, as check skips it
    skipped = run_mpigen("plan", "profiles", "--context", export, "--strict", cwd=project)
    assert skipped.returncode == 0 and skipped.stdout, skipped.stderr
    assert skipped.stderr == f"{export / 'meta.yaml'}: document 1: warning: not a Kubernetes object (no apiVersion " \
        "or kind): skipped\n"
