"""Kueue as each release serves it (generator/vocabulary/kueue_releases.py): the infra chart of a cluster that names
its Kueue release (`scheduling.kueueVersion`) passes that release's own CRDs, vendored at its tag in
tests/upstream/scheduling/ (kueue-v0.9: v0.9.5, kueue-v0.14: v0.14.8, kueue: main after v0.19); the newest
release's output, what mpigen wrote before a release could be named, is refused by v0.14's; and launcher and workers
are one PodSet group only where the release groups an MPIJob's pod sets (v0.15, kubernetes-sigs/kueue#7061)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES, CustomResourceSchemas

from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests.scheduling import PODSET_GROUP
from mpigen.vocabulary import kueue_releases

DGX_POD = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
SCHEDULER = "  scheduler: kueue\n"
assert SCHEDULER in DGX_POD
PLURALS = ("clusterqueues", "localqueues", "resourceflavors", "topologies", "workloadpriorityclasses")
KINDS = {"ClusterQueue", "LocalQueue", "ResourceFlavor", "Topology", "WorkloadPriorityClass"}
# release: (its CRDs' folder, the apiVersion of the four queue kinds, the Topology's, the ClusterQueue's cohort field)
RELEASES = {"v0.9": ("kueue-v0.9", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1alpha1", "cohort"),
            "v0.14": ("kueue-v0.14", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta1", "cohort"),
            "v0.19": ("kueue", "kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta2", "cohortName")}
assert kueue_releases.NEWEST.name == "v0.19"


def release_crds(upstream: Path, folder: str) -> CustomResourceSchemas:
    return CustomResourceSchemas([upstream / "scheduling" / folder / f"kueue.x-k8s.io_{plural}.yaml"
                                  for plural in PLURALS])


def on_release(profiles_copy: Callable[..., Path], release: str, edits: dict[str, str | None] | None = None
               ) -> CompileResult:
    pod = DGX_POD.replace(SCHEDULER, f"{SCHEDULER}  kueueVersion: {release}\n")
    result = compile_profiles([profiles_copy({"clusters/dgx-pod.yaml": pod, **(edits or {})})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def kueue_objects(result: CompileResult) -> list[dict[str, Any]]:
    return [m.obj for c in result.charts if c.directory == "dgx-pod/infra" for m in c.manifests
            if m.obj["apiVersion"].startswith(kueue_releases.KUEUE_GROUP)]


def worker_and_launcher(result: CompileResult, job: str) -> tuple[dict[str, str], dict[str, str]]:
    (mpijob,) = [m.obj for c in result.charts if c.directory == f"dgx-pod/jobs/{job}" for m in c.manifests
                 if m.obj["kind"] == "MPIJob"]
    replicas = mpijob["spec"]["mpiReplicaSpecs"]
    return tuple(  # type: ignore[return-value]
        {k: v for k, v in replicas[r]["template"].get("metadata", {}).get("annotations", {}).items()
         if k.startswith(kueue_releases.KUEUE_GROUP)} for r in ("Worker", "Launcher"))


@pytest.mark.parametrize("release", list(RELEASES))
def test_the_infra_chart_is_what_the_clusters_kueue_release_serves(release: str, upstream: Path,
                                                                    profiles_copy: Callable[..., Path]) -> None:
    folder, api_version, topology_version, cohort = RELEASES[release]
    objects = kueue_objects(on_release(profiles_copy, release))
    assert {obj["kind"] for obj in objects} == KINDS
    crds = release_crds(upstream, folder)
    for obj in objects:
        assert obj["apiVersion"] == (topology_version if obj["kind"] == "Topology" else api_version), obj["kind"]
        assert crds.problems(obj) == [], (obj["kind"], obj["metadata"]["name"])
    queues = [obj for obj in objects if obj["kind"] == "ClusterQueue"]
    assert [queue["spec"][cohort] for queue in queues] == ["dgx-pod", "dgx-pod"]


def test_what_mpigen_wrote_before_a_release_could_be_named_is_refused_by_kueue_v0_14(
        example: CompileResult, upstream: Path) -> None:
    """The issue's claim: Kueue v0.9-v0.14 serve no v1beta2, so every object of the infra chart is refused; and
    rewriting the apiVersion alone leaves v1beta2's `cohortName`, unknown to v1beta1."""
    crds = release_crds(upstream, "kueue-v0.14")
    objects = kueue_objects(example)
    assert objects and all((obj["apiVersion"], obj["kind"]) not in crds for obj in objects)
    (queue, *_) = [obj for obj in objects if obj["kind"] == "ClusterQueue"]
    rewritten = {**queue, "apiVersion": "kueue.x-k8s.io/v1beta1"}
    assert [problem.split(":")[0] for problem in crds.problems(rewritten)] == [".spec.cohortName"]


def test_launcher_and_workers_are_one_podset_group_from_kueue_v0_15(profiles_copy: Callable[..., Path]) -> None:
    """Kueue validates an MPIJob's PodSet group from v0.15 (#7061; tas_validation.go: two pod sets, one of one pod,
    with the same topology request): before, the annotation is not emitted and the launcher lands anywhere in its
    flavor. The vision job asks for its leaf switch (`required`), language for its block (`preferred`)."""
    for release, grouped in (("v0.14", False), ("v0.15", True)):
        result = on_release(profiles_copy, release)
        for job, mode, label in (("vision-resnet50", "required", "fabric.example.com/leaf-switch"),
                                 ("language-bert", "preferred", "fabric.example.com/block")):
            worker, launcher = worker_and_launcher(result, job)
            request = {f"kueue.x-k8s.io/podset-{mode}-topology": label}
            group = {**request, "kueue.x-k8s.io/podset-group-name": PODSET_GROUP} if grouped else {}
            assert (worker, launcher) == ({**request, **group}, group), (release, job)


def test_a_launcher_on_a_pool_of_its_own_is_not_grouped(profiles_copy: Callable[..., Path]) -> None:
    """`launcherPool` puts the launcher in another flavor than the workers: no topology domain holds both."""
    pod = DGX_POD.replace("nodePools:\n", "launcherPool: cpu\nnodePools:\n", 1).replace(
        "  - name: dgx\n", "  - name: cpu\n    hardware: cpu-node\n    nodes: 2\n  - name: dgx\n", 1).replace(
        "nodes: {dgx: 4}", "nodes: {dgx: 4, cpu: 1}")
    assert pod.count("cpu: 1}") == 2
    result = compile_profiles([profiles_copy({"clusters/dgx-pod.yaml": pod})])
    if not result.ok:
        pytest.fail("\n".join(d.format() for d in result.diagnostics))
    worker, launcher = worker_and_launcher(result, "vision-resnet50")
    assert worker == {"kueue.x-k8s.io/podset-required-topology": "fabric.example.com/leaf-switch"}
    assert launcher == {}
