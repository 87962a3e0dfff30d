"""`mpigen import` on the command line over the cluster fixtures (tests/fixtures/clusters): each pool imported with
operators.yaml validates and renders as it is, a re-import changes no byte, an edited profile is not overwritten
silently, and each bad input is one line, exit 1, nothing written. The DGX-1 pool, the bad inputs and ten thousand
nodes go through the real command in a process of its own, the rest in-process (conftest.invoke_mpigen)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, invoke_mpigen, run_mpigen
from ruamel.yaml import YAML

CLUSTERS = REPO / "tests" / "fixtures" / "clusters"
OPERATORS = CLUSTERS / "operators.yaml"
POOLS = {"dgx-1": ("dgx-1", 4), "dgx-a100": ("dgx-a100", 8), "dgx-h100": ("dgx-h100", 8), "cpu": ("cpu-2s64c", 0)}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_each_pool_imported_validates_and_renders_as_it_is(tmp_path: Path, pool: str) -> None:
    hardware, rails = POOLS[pool]
    run = run_mpigen if pool == "dgx-1" else invoke_mpigen  # one pool through the real command, the others in-process
    imported = run("import", CLUSTERS / f"{pool}.yaml", OPERATORS, "--cluster", "lab", "-o", tmp_path / "profiles")
    assert imported.returncode == 0, imported.stderr
    assert f"wrote {tmp_path / 'profiles' / 'hardware' / f'{hardware}.yaml'}" in imported.stdout
    cluster = YAML(typ="safe").load((tmp_path / "profiles" / "clusters" / "lab.yaml").read_text())
    assert len(cluster.get("rails", [])) == rails
    rendered = run("render", tmp_path / "profiles", "-o", tmp_path / "charts")
    assert rendered.returncode == 0, rendered.stderr
    assert (tmp_path / "charts" / "lab").is_dir()
    if pool == "dgx-1":  # as docs/import.md shows it
        text = (tmp_path / "profiles" / "hardware" / "dgx-1.yaml").read_text()
        assert '    speedGbps: 100  # SriovNetworkNodeState dgx1-01 .status.interfaces[0].linkSpeed\n' in text
        assert '    hca: "mlx5_0"  # guess: `ibdev2netdev` on a node: mlx5_N port 1 ==> interface\n' in text


def test_reimport_leaves_every_file_byte_identical_and_an_edit_is_refused_unless_forced(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    args = ("import", CLUSTERS / "dgx-1.yaml", OPERATORS, "--cluster", "lab", "-o", profiles)
    assert invoke_mpigen(*args).returncode == 0
    before = _files(profiles)
    again = invoke_mpigen(*args)
    assert again.returncode == 0 and "unchanged" in again.stdout and "wrote" not in again.stdout
    assert _files(profiles) == before
    edited = profiles / "clusters" / "lab.yaml"
    edited.write_text(edited.read_text().replace("  - training", "  - team-a"))
    refused = invoke_mpigen(*args)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("error: ") and str(edited) in refused.stderr and "--force" in refused.stderr
    assert "team-a" in edited.read_text()
    forced = invoke_mpigen(*args, "--force")
    assert forced.returncode == 0 and _files(profiles) == before
    # a profile the import wrote and nobody changed is replaced when the cluster changes: 32 GB V100s now
    export = tmp_path / "dgx-1.yaml"
    export.write_text((CLUSTERS / "dgx-1.yaml").read_text().replace('gpu.memory: "16384"', 'gpu.memory: "32768"'))
    changed = invoke_mpigen("import", export, OPERATORS, "--cluster", "lab", "-o", profiles)
    assert changed.returncode == 0, changed.stderr
    hardware = profiles / "hardware" / "dgx-1.yaml"
    assert f"wrote {hardware}" in changed.stdout and f"unchanged {edited}" in changed.stdout
    assert "memoryGiB: 32  #" in hardware.read_text()


def test_all_five_files_at_once_are_refused_naming_the_pools(tmp_path: Path) -> None:
    result = invoke_mpigen("import", *sorted(CLUSTERS.glob("*.yaml")), "--cluster", "lab", "-o", tmp_path / "p")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert "dgx-h100: rdma-shared" in result.stderr and "--nodes" in result.stderr
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(("text", "said"), [
    ("apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: [\n", "error: export.yaml:6:1: not valid YAML: "),
    ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}, "
     "data: {password: aHVudGVyMg==}}\n", "error: no Node in the input: export them with `kubectl get nodes,"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "export.yaml").write_text(text)
    result = run_mpigen("import", "export.yaml", "--cluster", "lab", "-o", "profiles", cwd=tmp_path)
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert said in result.stderr and "aHVudGVyMg" not in result.stderr + result.stdout
    assert not (tmp_path / "profiles").exists()


def test_ten_thousand_nodes_import_within_a_bounded_time(tmp_path: Path) -> None:
    node = ('{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n{0:05d}", "labels": {{"kubernetes.io/hostname":'
            ' "n{0:05d}", "node.kubernetes.io/instance-type": "{1}"}}}}, "status": {{"capacity": {{"cpu": "64", '
            '"memory": "256Gi"}}}}}}')
    items = ",\n".join(node.format(i, f"type-{i % 4}") for i in range(10_000))
    (tmp_path / "nodes.json").write_text('{"apiVersion": "v1", "kind": "List", "items": [\n' + items + "\n]}\n")
    result = subprocess.run([sys.executable, "-m", "mpigen", "import", "nodes.json", "--cluster", "big", "-o", "p"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    cluster = YAML(typ="safe").load((tmp_path / "p" / "clusters" / "big.yaml").read_text())
    assert [pool["nodes"] for pool in cluster["nodePools"]] == [2500] * 4


def test_a_profile_that_cannot_be_written_leaves_none_written(tmp_path: Path) -> None:
    blocked = tmp_path / "profiles" / "hardware" / "dgx-1.yaml"
    blocked.mkdir(parents=True)  # a folder where the hardware profile goes: written after clusters/lab.yaml
    result = invoke_mpigen("import", CLUSTERS / "dgx-1.yaml", OPERATORS, "--cluster", "lab", "-o", tmp_path / "profiles")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "nothing was written" in result.stderr and str(blocked) in result.stderr
    assert not (tmp_path / "profiles" / "clusters" / "lab.yaml").exists()


def test_a_cluster_and_its_hand_written_mpijob_import_together_and_compile(tmp_path: Path) -> None:
    """One command takes the nodes and an upstream MPIJob: the cluster's profiles, and a job profile on them that
    keeps the example's image and size, with what mpigen does differently said on stderr."""
    example = REPO / "tests" / "upstream" / "mpi-operator" / "examples" / "pi__pi.yaml"
    profiles = tmp_path / "profiles"
    done = invoke_mpigen("import", CLUSTERS / "cpu.yaml", OPERATORS, example, "--cluster", "lab", "--pool", "cpu-2s64c",
                      "-o", profiles)
    assert done.returncode == 0, done.stderr
    assert f"wrote {profiles / 'jobs' / 'pi.yaml'}" in done.stdout
    assert "MPIJob/pi: " in done.stderr  # the differences, one line each
    job = YAML(typ="safe").load((profiles / "jobs" / "pi.yaml").read_text())
    assert (job["cluster"], job["pool"], job["image"], job["workers"]) == \
        ("lab", "cpu-2s64c", "mpioperator/mpi-pi:openmpi", 2)
    rendered = invoke_mpigen("render", profiles, "-o", tmp_path / "charts")
    assert rendered.returncode == 0, rendered.stderr
    chart = tmp_path / "charts" / "lab" / "jobs" / "pi"
    assert "/home/mpiuser/pi" in (chart / "templates" / "mpijob.yaml").read_text()
    assert YAML(typ="safe").load((chart / "values.yaml").read_text())["image"] == "mpioperator/mpi-pi:openmpi"


def test_mpijobs_alone_need_no_cluster_and_say_their_guesses(tmp_path: Path) -> None:
    example = REPO / "tests" / "upstream" / "mpi-operator" / "examples" / "pi__pi.yaml"
    done = invoke_mpigen("import", example, "-o", tmp_path / "profiles")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "profiles" / "jobs" / "pi.yaml").read_text()
    assert "cluster: my-cluster  # guess: " in text and "pool: pool  # guess: " in text
    nodes_without_name = invoke_mpigen("import", CLUSTERS / "cpu.yaml", "-o", tmp_path / "other")
    assert nodes_without_name.returncode == 2 and "--cluster" in nodes_without_name.stderr
    assert not (tmp_path / "other").exists()


def test_node_facts_from_the_nodes_own_tools_fill_the_hcas_gpus_and_numa_and_still_validate(tmp_path: Path) -> None:
    """`ibdev2netdev` names each PF's HCA; `nvidia-smi topo -m` (tests/fixtures/inventory: a DGX A100 in NPS4, GPU
    pairs per HCA pair) says which GPUs sit beside each HCA and on which NUMA node: the NICs take them, the CPU gets
    the NUMA nodes per socket they imply, and the result validates as it is."""
    interfaces = ["ibp12s0", "ibp18s0", "ibp75s0", "ibp84s0", "ibp141s0", "ibp148s0", "ibp186s0", "ibp204s0",
                  "enp97s0f0", "enp97s0f1"]
    ibdev = tmp_path / "ibdev2netdev.txt"
    ibdev.write_text("".join(f"mlx5_{i} port 1 ==> {name} (Up)\n" for i, name in enumerate(interfaces)))
    topo = REPO / "tests" / "fixtures" / "inventory" / "dgx-a100_nvidia-smi-topo.txt"
    profiles = tmp_path / "profiles"
    done = invoke_mpigen("import", CLUSTERS / "dgx-a100.yaml", OPERATORS, "--cluster", "lab", "-o", profiles,
                      "--node-facts", f"dgxa100-01={ibdev}", "--node-facts", f"dgxa100-01={topo}")
    assert done.returncode == 0, done.stderr
    hardware = YAML(typ="safe").load((profiles / "hardware" / "dgx-a100.yaml").read_text())
    nics = {nic["pfName"]: nic for nic in hardware["nics"]}
    assert (nics["ibp12s0"]["hca"], nics["ibp12s0"]["gpus"], nics["ibp12s0"]["numaNode"]) == ("mlx5_0", [0, 1], 3)
    assert (nics["ibp204s0"]["hca"], nics["ibp204s0"]["gpus"]) == ("mlx5_7", [6, 7])
    assert hardware["cpu"]["numaNodesPerSocket"] == 4 and "enp97s0f0" not in nics  # a storage NIC is no rail
    assert invoke_mpigen("validate", profiles).returncode == 0
