"""generator/package/notes.py: what the infra NOTES say a DRA cluster's scheduler counts of the devices pods claim.

Kueue (site/content/en/docs/tasks/manage/setup_dra.md, tests/upstream/scheduling/kueue/docs_setup_dra.md): a
ClusterQueue counts a claimed device only through the Configuration's `resources.deviceClassMappings`, read once at
startup; a Workload whose claim names an unmapped DeviceClass is never admitted. Volcano's queues and a PodGroup's
minResources count pods' requests (volcano-sh/volcano #4400; mpi-operator pkg/controller/podgroup.go
calculatePGMinResources), which scheduler-plugins' coscheduling checks (pkg/coscheduling/core/core.go PreFilter).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import PROFILES
from ruamel.yaml import YAML

from mpigen.commands.pipeline import CompileResult, compile_profiles


def infra_notes(result: CompileResult, cluster: str) -> str:
    (chart,) = [c for c in result.charts if c.directory == f"{cluster}/infra"]
    return dict(chart.files)["templates/NOTES.txt"]


def test_a_kueue_dra_cluster_is_given_the_exact_device_class_mappings_and_the_restart(example: CompileResult) -> None:
    lines = infra_notes(example, "h100-dra").splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith("beside the Configuration's other settings:")) + 1
    block = [line[2:] for line in lines[start:] if line.startswith("  ")]
    end = next(i for i, line in enumerate(block) if line.startswith("Kueue reads its Configuration only at startup"))
    assert YAML(typ="safe", pure=True).load("\n".join(block[:end])) == {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
        "resources": {"deviceClassMappings": [{"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com"]},
                                              {"name": "dra.net/rdma-nic", "deviceClassNames": ["dranet-rdma"]}]}}
    assert block[end].endswith("after changing it, kubectl -n kueue-system rollout restart "
                               "deployment/kueue-controller-manager.")
    assert "never admits a Workload whose claim names a DeviceClass the mappings lack" in lines[start - 1]
    assert "deviceClassMappings" not in infra_notes(example, "dgx-pod")  # no dra: nothing to map


def test_volcano_and_coscheduling_dra_clusters_say_their_queues_and_gangs_do_not_count_claims(
        profiles_copy: Callable[..., Path]) -> None:
    """volcano-lab under DRA (GPUs claimed, rails through host-network); h100-dra on coscheduling instead of Kueue."""
    lab = (PROFILES / "clusters" / "volcano-lab.yaml").read_text(encoding="utf-8")
    lab = lab.replace('kubernetesVersion: "1.31"', 'kubernetesVersion: "1.34"').replace("nodePools:", "dra: {}\nnodePools:")
    h100 = (PROFILES / "clusters" / "h100-dra.yaml").read_text(encoding="utf-8")
    h100 = h100[:h100.index("scheduling:")] + "scheduling:\n  scheduler: coscheduling\n"
    result = compile_profiles([profiles_copy({"clusters/volcano-lab.yaml": lab, "clusters/h100-dra.yaml": h100})])
    assert result.ok, [d.format() for d in result.diagnostics]
    volcano = infra_notes(result, "volcano-lab")
    assert ("Devices claimed through DRA (GPUs of DeviceClass gpu.nvidia.com): Volcano's queues count what pods request "
            "(cpu, memory, extended resources), and a claim is none of it (volcano-sh/volcano #4400), so the queues "
            "above hold none of these devices and do not limit them") in volcano
    assert "DynamicResourceAllocation feature gate" in volcano and "`deviceclass/<class>`" in volcano
    coscheduling = infra_notes(result, "h100-dra")
    assert ("Devices claimed through DRA (GPUs of DeviceClass gpu.nvidia.com, RDMA NICs of DeviceClass dranet-rdma): a "
            "PodGroup's minResources, which mpi-operator sums from the pods' requests, hold none of them") in coscheduling
    assert "deviceClassMappings" not in volcano + coscheduling
    assert "rail0: NIC nic0\n" in coscheduling  # dranet: no resource a pod asks for
