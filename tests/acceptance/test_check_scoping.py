"""`mpigen check` over several clusters at once (generator/readback/findings.py `CheckContext.same_cluster`): objects
live in clusters, so every rule that looks one object up for another looks only among those of the same cluster.

Two clusters share their namespace (`ml-training`) and rail names (`rail0`..`rail3`) under different providers:
`a-lab` attaches SR-IOV VFs, whose NetworkAttachmentDefinition `ml-training/railN` names the device resource
`nvidia.com/rdma_railN` its pods must request; `b-lab` shared RDMA devices (`rdma/rdma_railN`), whose NAD of the same
name needs no device.
Compared across clusters, one cluster's job would be judged against the other's NAD and refused, as repositories
holding both failed CI on correct charts; and a job whose own cluster lacks the NAD would pass on the other's.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import ACCEPTANCE_CHARTS, PROFILES, invoke_mpigen, is_run_of, run_mpigen

CLUSTERS = {"a-lab": "sriov-device-plugin", "b-lab": "rdma-shared"}
SUMMARY = re.compile(r"^(\d+) error\(s\), (\d+) warning\(s\)", re.M)


def _fleet(root: Path, clusters: dict[str, str]) -> Path:
    """Profiles of `clusters` (dgx-lab's, renamed, under the given provider, without GitOps), each with a copy of
    resnet50-dgx: two DGX-1 workers over the four rails in ml-training; and dgx-lab's 8 fabric acceptance jobs, also
    in ml-training, each over the four rails or one (conftest.ACCEPTANCE_CHARTS)."""
    profiles = root / "profiles"
    for folder in ("clusters", "jobs", "hardware"):
        (profiles / folder).mkdir(parents=True)
    (profiles / "hardware/dgx-1.yaml").write_text((PROFILES / "hardware/dgx-1.yaml").read_text(encoding="utf-8"),
                                                  encoding="utf-8")
    lab = (PROFILES / "clusters/dgx-lab.yaml").read_text(encoding="utf-8")
    lab = lab[:lab.index("\ngitops:")] + "\n"
    job = (PROFILES / "jobs/resnet50-dgx.yaml").read_text(encoding="utf-8")
    for name, provider in clusters.items():
        assert "name: dgx-lab\n" in lab and "  provider: sriov-device-plugin\n" in lab
        (profiles / f"clusters/{name}.yaml").write_text(
            lab.replace("name: dgx-lab\n", f"name: {name}\n").replace(
                "  provider: sriov-device-plugin\n", f"  provider: {provider}\n"), encoding="utf-8")
        short = name.removesuffix("-lab")
        (profiles / f"jobs/{short}-job.yaml").write_text(
            job.replace("name: resnet50-dgx\n", f"name: {short}-job\n").replace("cluster: dgx-lab\n",
                                                                                f"cluster: {name}\n"),
            encoding="utf-8")
    return profiles


def _errors(result) -> list[str]:
    summary = SUMMARY.search(result.stdout)
    assert summary and "Traceback" not in result.stderr, result.stdout + result.stderr
    errors = [line for line in result.stdout.splitlines() if ": " in line and " error(s)" not in line
              and not line.startswith(("pod security", "--no-helm"))]
    assert len(errors) == int(summary.group(1)), result.stdout
    return errors


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scoping").resolve()
    rendered = run_mpigen("render", _fleet(root, CLUSTERS), "-o", root / "charts")
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    return root / "charts"


def test_two_compiled_clusters_with_the_same_names_are_checked_apart(charts):
    nads = {name: (charts / name / "infra/templates/network-attachments.yaml").read_text(encoding="utf-8")
            for name in CLUSTERS}
    assert all("  name: rail0\n  namespace: ml-training\n" in text for text in nads.values())
    assert "resourceName: nvidia.com/rdma_rail0\n" in nads["a-lab"] and "resourceName" not in nads["b-lab"], \
        "one NAD name: a VF of nvidia.com/rdma_rail0 in a-lab, a shared device the pod asks for itself in b-lab"
    b_job = (charts / "b-lab/jobs/b-job/templates/mpijob.yaml").read_text(encoding="utf-8")
    assert "rdma/rdma_rail0: 1" in b_job and "nvidia.com/rdma_rail0" not in b_job
    result = run_mpigen("check", "--no-helm", charts)
    assert _errors(result) == [] and result.returncode == 0, result.stdout


def test_a_job_missing_its_clusters_network_is_found_only_there(charts):
    # Without a-lab's infra chart, a-job's networks are missing from its cluster, however b-lab's NADs of the same
    # namespace and names are there: four findings, all on a-job; b-job stays clean.
    result = invoke_mpigen("check", "--no-helm", charts / "a-lab/jobs", charts / "b-lab")
    errors = _errors(result)
    assert result.returncode == 1 and len(errors) == 4, result.stdout
    assert all("/a-lab/jobs/a-job/" in line and "no NetworkAttachmentDefinition ml-training/rail" in line
               for line in errors), errors


def _manifests(root: Path, name: str) -> Path:
    """The manifests of cluster `name` alone, as plain files (no chart says their cluster)."""
    profiles = _fleet(root / name, {name: CLUSTERS[name]})
    printed = invoke_mpigen("render", profiles, "--manifests")
    assert printed.returncode == 0, printed.stderr
    folder = root / "manifests" / name
    folder.mkdir(parents=True)
    (folder / "all.yaml").write_text(printed.stdout, encoding="utf-8")
    return folder


def test_hand_written_manifests_are_grouped_by_the_cluster_option(tmp_path):
    folders = {name: _manifests(tmp_path, name) for name in CLUSTERS}
    together = invoke_mpigen("check", "--no-helm", tmp_path / "manifests")
    assert together.returncode == 1 and any("no container of this pod requests" in line for line in _errors(together)), \
        "without --cluster, manifests of unknown origin are one cluster, with a NAD name meaning two things"
    groups = [f"--cluster={name}={folder}" for name, folder in folders.items()]
    apart = invoke_mpigen("check", "--no-helm", *groups, tmp_path / "manifests")
    assert _errors(apart) == [] and apart.returncode == 0, apart.stdout
    # Broken in one group: a-lab's NADs gone from its file; b-lab's of the same names do not stand in for them.
    text = (folders["a-lab"] / "all.yaml").read_text(encoding="utf-8")
    kept = [doc for doc in text.split("\n---\n") if "kind: NetworkAttachmentDefinition" not in doc]
    assert len(kept) < len(text.split("\n---\n"))
    (folders["a-lab"] / "all.yaml").write_text("\n---\n".join(kept), encoding="utf-8")
    broken = invoke_mpigen("check", "--no-helm", *groups, tmp_path / "manifests")
    errors = _errors(broken)
    # a-job's four rails; each nccl-tests acceptance job's four, and each perftest job's one rail.
    acceptance = [chart.split("/")[-1] for chart in ACCEPTANCE_CHARTS if chart.startswith("dgx-lab/")]
    expected = {job: 1 if "-perftest-" in job else 4 for job in acceptance}
    assert broken.returncode == 1 and len(errors) == 4 + sum(expected.values()), broken.stdout
    assert all(line.startswith(str(folders["a-lab"])) and "no NetworkAttachmentDefinition ml-training/rail" in line
               for line in errors), errors
    jobs = Counter(re.search(r": MPIJob/([^:]+): ", line)[1] for line in errors)
    (run,) = [name for name in jobs if is_run_of(name, "a-job")]
    assert jobs == {run: 4, **expected}, jobs


def test_a_cluster_option_must_name_a_cluster_and_a_path_once(tmp_path):
    result = invoke_mpigen("check", "--no-helm", "--cluster", "a-lab=", tmp_path)
    assert result.returncode == 2 and "write NAME=PATH" in result.stderr, result.stderr
    # Without `=PATH`, --cluster NAME checks only that cluster's charts: here there is none of that name.
    alone = invoke_mpigen("check", "--no-helm", "--cluster", "a-lab", tmp_path)
    assert alone.returncode == 2 and "--cluster a-lab: no such cluster; there is none to choose from" in alone.stderr
    twice = invoke_mpigen("check", "--no-helm", f"--cluster=a-lab={tmp_path}", f"--cluster=b-lab={tmp_path}", tmp_path)
    assert twice.returncode == 2 and "is given another cluster already" in twice.stderr, twice.stderr
    # The second red team's case: a 300-character NAME was accepted; a cluster's name is a DNS-1035 label.
    for name, says in (("a" * 300, "(300 characters): must be no more than 63 characters"),
                       ("1-lab", "must consist of lower case alphanumeric characters")):
        refused = invoke_mpigen("check", "--no-helm", f"--cluster={name}={tmp_path}", tmp_path)
        assert refused.returncode == 2 and says in refused.stderr and "DNS-1035" in refused.stderr, refused.stderr
    longest = invoke_mpigen("check", "--no-helm", f"--cluster={'a' * 63}={tmp_path}", tmp_path)
    assert longest.returncode != 2, longest.stderr
