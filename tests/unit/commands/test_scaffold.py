"""generator/commands/scaffold.py: `mpigen init`'s starting fleet validates, compiles and passes check for every built-in
hardware and GitOps tool, and every fact it guesses says what to read instead."""

from __future__ import annotations

import pytest

from mpigen.commands.pipeline import compile_profiles
from mpigen.commands.scaffold import GITOPS_TOOLS, ScaffoldError, starting_fleet, write_new
from mpigen.load.catalogue import builtin_names


@pytest.mark.parametrize("gitops", GITOPS_TOOLS)
@pytest.mark.parametrize("hardware", builtin_names())
def test_the_starting_fleet_compiles_clean(tmp_path, hardware, gitops):
    files = starting_fleet(hardware, gitops)
    write_new(tmp_path / "profiles", files)
    result = compile_profiles([tmp_path / "profiles"])
    assert result.ok and result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert {chart.directory for chart in result.charts} == {"my-cluster/infra", "my-cluster/jobs/hello"}
    assert ("hardware/my-" + hardware + ".yaml" in files) == (hardware != "cpu-node")  # RDMA facts to fill in
    assert ("gitops:" in files["clusters/my-cluster.yaml"]) == (gitops != "none")


@pytest.mark.parametrize("hardware", ["dgx-a100", "dgx-h100"])
def test_every_guessed_nic_fact_says_where_to_read_it(hardware):
    text = starting_fleet(hardware, "none")[f"hardware/my-{hardware}.yaml"]
    facts = [line for line in text.splitlines() if line.startswith("    ") and ":" in line and "name:" not in line]
    assert facts and all("#" in line for line in facts)
    assert "extends: " + hardware in text and text.count("- name: ") == 8  # one entry per NIC of the built-in


def test_nothing_is_written_over_an_existing_file(tmp_path):
    root = tmp_path / "profiles"
    (root / "jobs").mkdir(parents=True)
    (root / "jobs" / "hello.yaml").write_text("mine\n", encoding="utf-8")
    with pytest.raises(ScaffoldError, match="exists already"):
        write_new(root, starting_fleet("dgx-1", "argocd"))
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["jobs", "jobs/hello.yaml"]
    assert (root / "jobs" / "hello.yaml").read_text(encoding="utf-8") == "mine\n"


def test_an_unknown_hardware_names_the_built_ins():
    with pytest.raises(ScaffoldError, match="dgx-h100"):
        starting_fleet("dgx-9", "argocd")


def test_the_dgx_h100_gets_nvidias_published_port_names_and_gpu_affinity():
    text = starting_fleet("dgx-h100", "none")["hardware/my-dgx-h100.yaml"]
    assert "hca: mlx5_3  # NVIDIA's default" in text and "pfName: ibp64s0" in text and "gpus: [1]" in text
    assert "mlx5_1 " not in text and "pfName: ib1 " not in text  # storage ports, and names DGX OS never uses


def test_the_gb200_gets_nvidias_published_rdma_devices_and_a_marked_guess_of_gpu_affinity():
    files = starting_fleet("gb200-nvl72", "none")
    text = files["hardware/my-gb200-nvl72.yaml"]
    hcas = [line.split()[1] for line in text.splitlines() if line.startswith("    hca: ")]
    assert hcas == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"]  # mlx5_2, mlx5_3: BlueField-3 ports, not rails
    assert text.count("NVIDIA's default") == 4
    # GB200's GPUs hang off the Grace CPUs by NVLink-C2C, its NICs off their PCIe: no GPU sits beside a NIC (a guess,
    # said so), so the DRA claims count and do not align.
    assert "\n    gpus:" not in text
    assert "\ngpu:\n  nicDistance: NODE  # a guess: " in text
    # Multi-node NVLink: the starting cluster claims through DRA, so its jobs join a ComputeDomain.
    cluster = files["clusters/my-cluster.yaml"]
    assert 'kubernetesVersion: "1.34"' in cluster and "  provider: dranet\n" in cluster and "\ndra: {}" in cluster
    assert "ipam" not in cluster


def test_a_flux_fleet_says_how_to_read_flux_bootstraps_git_repository_and_doing_so_compiles(tmp_path):
    files = starting_fleet("cpu-node", "flux")
    lines = files["clusters/my-cluster.yaml"].splitlines()
    hint = next(i for i, line in enumerate(lines) if "flux bootstrap" in line)
    assert lines[hint - 1].startswith("  repoURL: ") and "sourceRef: {name: flux-system}" in lines[hint]
    lines[hint - 1:hint + 1] = ["  sourceRef: {name: flux-system}"]  # as the comment says
    write_new(tmp_path / "profiles", {**files, "clusters/my-cluster.yaml": "\n".join(lines) + "\n"})
    result = compile_profiles([tmp_path / "profiles"])
    assert result.ok and result.diagnostics == [], [d.format() for d in result.diagnostics]
    (cluster,) = result.fleet.clusters
    assert cluster.gitops is not None and cluster.gitops.source_ref is not None
    assert "flux bootstrap" not in starting_fleet("cpu-node", "argocd")["clusters/my-cluster.yaml"]
