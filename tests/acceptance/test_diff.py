"""`mpigen diff`: object-by-object changes between the charts and what the profiles compile to, per cluster and
chart, the GitOps bootstrap files too, with the changes that need a person first. The committed fleet and the whole
review go through the real command in a process of its own, the other edits in-process (conftest.invoke_mpigen)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CHARTS, PROFILES, RAW_CONTROL, invoke_mpigen, is_run_of, run_mpigen

from mpigen.commands.cli import main
from mpigen.diff import diff_objects

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ml"}, "data": {"k": "1"}}


def test_added_removed_and_changed_objects():
    other = {**CM, "metadata": {"name": "b", "namespace": "ml"}}
    changed = {**CM, "data": {"k": "2"}}
    changes = diff_objects([CM, other], [changed, {**CM, "metadata": {"name": "c"}}])
    assert [(c.status, c.key) for c in changes] == [  # sorted by key
        ("added", "v1 ConfigMap c"), ("changed", "v1 ConfigMap ml/a"), ("removed", "v1 ConfigMap ml/b")]
    assert "-  k: \"1\"\n+  k: \"2\"\n" in changes[1].diff
    assert diff_objects([CM], [dict(CM)]) == []


def _labelled(name: str, release: str, kind: str = "MPIJob") -> dict:
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": kind,
            "metadata": {"name": name, "namespace": "ml", "labels": {"app.kubernetes.io/instance": release}},
            "spec": {"slotsPerWorker": 1 if name.endswith("1") else 2}}


def test_a_renamed_object_of_one_release_is_shown_as_replaced_with_its_diff():
    changes = diff_objects([_labelled("job-aaaaaa1", "job"), _labelled("other-1", "other")],
                           [_labelled("job-bbbbbb2", "job")])
    assert [(c.status, c.key) for c in changes] == [
        ("replaced", "kubeflow.org/v2beta1 MPIJob ml/job-aaaaaa1 -> job-bbbbbb2"),
        ("removed", "kubeflow.org/v2beta1 MPIJob ml/other-1")]
    assert "--- a: kubeflow.org/v2beta1 MPIJob ml/job-aaaaaa1\n+++ b: kubeflow.org/v2beta1 MPIJob ml/job-bbbbbb2\n" \
        in changes[0].diff
    assert "-  slotsPerWorker: 1\n+  slotsPerWorker: 2\n" in changes[0].diff


def test_no_pairing_when_a_release_gains_or_loses_more_than_one_object_of_a_kind():
    changes = diff_objects([_labelled("job-a", "job"), _labelled("job-b", "job")], [_labelled("job-c", "job")])
    assert sorted(c.status for c in changes) == ["added", "removed", "removed"]
    changes = diff_objects([_labelled("job-a", "job")], [_labelled("job-c", "job", kind="PodGroup")])
    assert sorted(c.status for c in changes) == ["added", "removed"]


@pytest.fixture
def repo(tmp_path):
    """A git repository holding a copy of the example profiles and charts, committed."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    shutil.copytree(PROFILES, tmp_path / "profiles")
    shutil.copytree(CHARTS, tmp_path / "charts")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "charts"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


def _more_workers(repo):
    job = repo / "profiles" / "jobs" / "pi.yaml"
    job.write_text(job.read_text(encoding="utf-8").replace("workers: 2", "workers: 3"), encoding="utf-8")


def test_nothing_differs_for_the_committed_fleet(repo):
    result = run_mpigen("diff", "profiles", "-o", "charts", "--exit-code", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no object differs" in result.stderr and _statuses(result.stdout) == []
    # What it may show: a committed run that keeps the spec an earlier release compiled for it (nothing to do now).
    sections = result.stdout.split("== cluster ")[1:]
    assert all("\nheld back until the next run: " in section for section in sections), result.stdout


def _statuses(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(("changed:", "added:", "removed:", "replaced:"))]


def test_an_edited_profile_shows_the_new_run_replacing_the_old(repo):
    old = (repo / "charts" / "dgx-lab" / "jobs" / "pi" / "templates" / "mpijob.yaml").read_text(encoding="utf-8")
    old_run = next(line.split(": ")[1] for line in old.splitlines() if line.startswith("  name: "))
    assert is_run_of(old_run, "pi")
    _more_workers(repo)
    for args in ([], ["--against", "HEAD"]):
        result = invoke_mpigen("diff", "profiles", "-o", "charts", "--exit-code", *args, cwd=repo)
        assert result.returncode == 1
        statuses = _statuses(result.stdout)
        assert len(statuses) == 2, statuses
        mpijob, configmap = statuses
        prefix = f"replaced: kubeflow.org/v2beta1 MPIJob hpc/{old_run} -> "
        assert mpijob.startswith(prefix)
        new_run = mpijob[len(prefix):]
        assert is_run_of(new_run, "pi") and new_run != old_run
        assert configmap == f"replaced: v1 ConfigMap hpc/{old_run}-hostfile -> {new_run}-hostfile"
        assert "-      replicas: 2\n+      replicas: 3\n" in result.stdout
        assert f"+    {new_run}-worker-2.{new_run}.hpc.svc slots=1\n" in result.stdout
        assert "2 object(s) differ" in result.stderr


def test_under_stable_naming_an_edit_changes_the_objects_in_place(repo):
    job = repo / "profiles" / "jobs" / "pi.yaml"
    job.write_text(job.read_text(encoding="utf-8") + "naming: stable\n", encoding="utf-8")
    assert invoke_mpigen("render", "profiles", "-o", "charts", cwd=repo).returncode == 0
    _more_workers(repo)
    result = invoke_mpigen("diff", "profiles", "-o", "charts", "--exit-code", cwd=repo)
    assert result.returncode == 1
    assert _statuses(result.stdout) == ["changed: kubeflow.org/v2beta1 MPIJob hpc/pi",
                                        "changed: v1 ConfigMap hpc/pi-hostfile"]
    assert "+    pi-worker-2.pi.hpc.svc slots=1\n" in result.stdout


def test_against_a_revision_uses_the_committed_charts_not_the_folder(repo):
    """The old side is read from the revision, and so are the run names the new side keeps: a job chart deleted
    on disk is not read (on disk, its run would be a new one)."""
    shutil.rmtree(repo / "charts" / "dgx-lab" / "jobs" / "pi")
    (repo / "charts" / "dgx-lab" / "infra" / "values.yaml").write_text("garbage: [\n", encoding="utf-8")
    result = invoke_mpigen("diff", "profiles", "-o", "charts", "--against", "HEAD", "--exit-code", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    on_disk = invoke_mpigen("diff", "profiles", "-o", "charts", cwd=repo)
    assert "added: kubeflow.org/v2beta1 MPIJob hpc/pi-" in on_disk.stdout


def test_a_removed_job_shows_its_objects_removed(repo):
    (repo / "profiles" / "jobs" / "pi.yaml").unlink()
    result = invoke_mpigen("diff", "profiles", "-o", "charts", cwd=repo)
    assert result.returncode == 0
    removed = [line for line in _statuses(result.stdout) if line.startswith("removed: kubeflow.org/v2beta1 MPIJob hpc/")]
    assert len(removed) == 1 and is_run_of(removed[0].rsplit("/", 1)[1], "pi"), removed


def test_an_unknown_revision_is_a_usage_error(repo):
    result = invoke_mpigen("diff", "profiles", "-o", "charts", "--against", "no-such-ref", cwd=repo)
    assert result.returncode == 2 and "Traceback" not in result.stderr


@pytest.mark.parametrize("revision", ["", "  ", "--output=/tmp/x"])
def test_an_empty_or_flag_like_revision_is_a_usage_error_not_the_disk(repo, revision):
    result = invoke_mpigen("diff", "profiles", "-o", "charts", "--against", revision, cwd=repo)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert ("--against needs a git revision (e.g. origin/main); leave it out to compare with the charts on disk"
            if not revision.startswith("-") else "a git revision does not start with '-'") in result.stderr
    assert "differ" not in result.stderr


def test_a_chart_claiming_mpigen_with_a_template_it_does_not_render_is_rendered_by_helm(repo, helm):
    """`diff` renders charts claiming `mpigen/source` itself: one holding a template mpigen's renderer would
    skip (here `.yml`) must be rendered by Helm, so its extra object shows."""
    extra = repo / "charts" / "dgx-lab" / "jobs" / "pi" / "templates" / "extra.yml"
    extra.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: hpc}\n", encoding="utf-8")
    result = invoke_mpigen("diff", "profiles", "-o", "charts", "--helm", helm, "--exit-code", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    assert _statuses(result.stdout) == ["removed: v1 ConfigMap hpc/extra"]
    extra.unlink()
    (extra.parent / "sub").mkdir()
    (extra.parent / "sub" / "extra.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n"
                                                     "metadata: {name: extra2, namespace: hpc}\n", encoding="utf-8")
    result = invoke_mpigen("diff", "profiles", "-o", "charts", "--helm", helm, "--exit-code", cwd=repo)
    assert _statuses(result.stdout) == ["removed: v1 ConfigMap hpc/extra2"]


# --- a fleet of three clusters sharing names ---------------------------------------------------------------------
# east (Flux), west (Argo CD) and lab (no GitOps tool): the same namespaces, rails, Kueue queue and PriorityClass, so
# every cluster's infra chart holds a `kube-system/sriovdp-config`, a ClusterQueue `training`, a PriorityClass
# `production` and Namespace `ml-training` of the same names. bert (east) is named stably, resnet (west) by content.

SHARED_CLUSTER = """\
apiVersion: mpigen/v1alpha1
kind: Cluster
name: {name}
kubernetesVersion: "1.31"
namespaces: [ml-training, hpc]
network:
  provider: sriov-device-plugin
nodePools:
  - name: dgx
    hardware: dgx-1
    nodes: 4
rails:
  - name: rail0
    nic: ib0
    ipam: {{range: 192.168.100.0/24}}
  - name: rail1
    nic: ib1
    ipam: {{range: 192.168.101.0/24}}
scheduling:
  scheduler: kueue
  priorityClasses:
    - name: production
      value: 1000
  queues:
    - name: training
      namespaces: [ml-training, hpc]
      nodes: {{dgx: 4}}
"""
GITOPS = "gitops:\n  tool: {tool}\n  repoURL: https://git.example.com/platform/gpu-fleet.git\n"
FLEET_JOB = """\
apiVersion: mpigen/v1alpha1
kind: Job
name: {name}
cluster: {cluster}
pool: dgx
namespace: ml-training
image: nvcr.io/nvidia/pytorch:24.03-py3
workers: 2
program: [python, train.py]
"""


@pytest.fixture(scope="module")
def fleet_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three-cluster fleet, rendered once and committed in a git repository (charts/ beside profiles/)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("fleet")
    profiles = root / "profiles"
    shutil.copytree(PROFILES / "hardware", profiles / "hardware")
    (profiles / "clusters").mkdir()
    (profiles / "jobs").mkdir()
    for name, tool in (("east", "flux"), ("west", "argocd"), ("lab", None)):
        text = SHARED_CLUSTER.format(name=name) + (GITOPS.format(tool=tool) if tool else "")
        (profiles / "clusters" / f"{name}.yaml").write_text(text, encoding="utf-8")
    (profiles / "jobs" / "bert.yaml").write_text(FLEET_JOB.format(name="bert", cluster="east") + "naming: stable\n",
                                                 encoding="utf-8")
    (profiles / "jobs" / "resnet.yaml").write_text(FLEET_JOB.format(name="resnet", cluster="west"), encoding="utf-8")
    rendered = CliRunner().invoke(main, ["render", str(profiles), "-o", str(root / "charts")])
    assert rendered.exit_code == 0, rendered.output
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "fleet"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture
def fleet(fleet_repo: Path, tmp_path: Path) -> Path:
    """A copy of the committed fleet a test may edit."""
    shutil.copytree(fleet_repo, tmp_path / "fleet", symlinks=True)
    return tmp_path / "fleet"


def _edit(fleet: Path, relpath: str, old: str, new: str) -> None:
    path = fleet / "profiles" / relpath
    text = path.read_text(encoding="utf-8")
    assert old in text, (relpath, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _rename_rail_on_east(fleet: Path) -> None:
    _edit(fleet, "clusters/east.yaml", "name: rail1", "name: fabric1")


def _shrink_lab_queue(fleet: Path) -> None:
    _edit(fleet, "clusters/lab.yaml", "nodes: {dgx: 4}", "nodes: {dgx: 3}")


def _follow_release_branch_on_east(fleet: Path) -> None:
    _edit(fleet, "clusters/east.yaml", "  repoURL:", "  revision: release\n  repoURL:")


def _move_resnet_to_east(fleet: Path) -> None:
    """West loses its job's Application, east gains a HelmRelease for it."""
    _edit(fleet, "jobs/resnet.yaml", "cluster: west", "cluster: east")


def _bump_bert_image(fleet: Path) -> None:
    _edit(fleet, "jobs/bert.yaml", "pytorch:24.03-py3", "pytorch:24.05-py3")


def _diff(fleet: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    """`mpigen diff profiles -o charts` in-process, from the fleet's folder."""
    monkeypatch.chdir(fleet)
    result = CliRunner().invoke(main, ["diff", "profiles", "-o", "charts", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _sections(stdout: str) -> tuple[list[str], dict[str, list[str]]]:
    """The lines before the first header (actions and notes), and the status lines under each header."""
    lines = stdout.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("== ")), len(lines))
    sections: dict[str, list[str]] = {}
    header = ""
    for line in lines[first:]:
        if line.startswith("== "):
            header = line
            sections[header] = []
        elif line.startswith(("changed: ", "added: ", "removed: ", "replaced: ", "held back until the next run: ")):
            sections[header].append(line)
    return lines[:first], sections


def test_a_renamed_rail_shows_its_cluster_s_device_plugin_config_while_others_keep_identical_copies(
        fleet, monkeypatch):
    """East's sriovdp-config changes; lab and west hold the same object, unchanged: today the last cluster's copy
    hid east's change."""
    _rename_rail_on_east(fleet)
    code, stdout, stderr = _diff(fleet, monkeypatch, "--exit-code")
    assert code == 1, stderr
    top, sections = _sections(stdout)
    # East's bert runs on the renamed rail too: its own chart changes (an action of its own, below).
    assert list(sections) == ["== cluster east, chart east/infra ==", "== cluster east, chart east/jobs/bert =="]
    assert "changed: v1 ConfigMap kube-system/sriovdp-config" in sections["== cluster east, chart east/infra =="]
    assert '+          "resourceName": "rdma_fabric1",\n' in stdout
    assert top[0] == (
        "charts/east/infra: action: ConfigMap kube-system/sriovdp-config, the SR-IOV network device plugin's config, "
        "changed; the plugin reads it only when it starts: once it is synced, restart the plugin's pods (its DaemonSet "
        "as the upstream manifests name it): kubectl -n kube-system rollout restart daemonset/kube-sriov-device-plugin")
    assert [line.split(": ")[:2] for line in top] == [["charts/east/infra", "action"],
                                                      ["charts/east/jobs/bert", "action"]]
    assert "2 change(s) need a person" in stderr


def test_a_cluster_scoped_object_changed_on_one_cluster_only_shows_under_that_cluster(fleet, monkeypatch):
    _shrink_lab_queue(fleet)
    code, stdout, _ = _diff(fleet, monkeypatch)
    assert code == 0
    top, sections = _sections(stdout)
    assert top == [] and sections == {"== cluster lab, chart lab/infra ==": [
        "changed: kueue.x-k8s.io/v1beta2 ClusterQueue training"]}


def test_a_flux_branch_change_in_the_root_shows_with_an_action_line(fleet, monkeypatch):
    _follow_release_branch_on_east(fleet)
    _, stdout, _ = _diff(fleet, monkeypatch)
    top, sections = _sections(stdout)
    root = "== cluster east, bootstrap east/bootstrap/root/root-sync.yaml =="
    assert sections[root] == ["changed: source.toolkit.fluxcd.io/v1 GitRepository flux-system/east"]
    assert "-    branch: main\n+    branch: release\n" in stdout
    assert top == [
        "charts/east/bootstrap/root/root-sync.yaml: action: root GitRepository flux-system/east changed; the GitOps "
        "tool does not sync its own root: apply it by hand, into cluster east: kubectl apply -f "
        "charts/east/bootstrap/root/root-sync.yaml"]


def test_applications_and_helmreleases_added_and_removed_show_under_their_cluster(fleet, monkeypatch):
    _move_resnet_to_east(fleet)
    _, stdout, _ = _diff(fleet, monkeypatch)
    _, sections = _sections(stdout)
    assert sections["== cluster west, bootstrap west/bootstrap/apps/applications.yaml =="] == [
        "removed: argoproj.io/v1alpha1 Application argocd/west-resnet"]
    assert sections["== cluster east, bootstrap east/bootstrap/apps/helmreleases.yaml =="] == [
        "added: helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/east-resnet"]
    assert [line.split(" ")[0] for line in sections["== cluster west, chart west/jobs/resnet =="]] == ["removed:"] * 2
    assert [line.split(" ")[0] for line in sections["== cluster east, chart east/jobs/resnet =="]] == ["added:"] * 2


def test_a_stable_named_run_s_image_bump_is_an_action_line(fleet, monkeypatch):
    _bump_bert_image(fleet)
    _, stdout, _ = _diff(fleet, monkeypatch)
    top, sections = _sections(stdout)
    assert sections == {"== cluster east, chart east/jobs/bert ==": [
        "changed: kubeflow.org/v2beta1 MPIJob ml-training/bert"]}
    assert top == [
        "charts/east/jobs/bert: action: MPIJob ml-training/bert keeps its name (naming: stable) and its spec changed; "
        "mpi-operator never applies a spec edit to a started run: to run the edit, delete the MPIJob once it is synced "
        "and sync again (the GitOps tool, or `helm upgrade`, creates it anew): kubectl -n ml-training delete mpijob bert"]


def test_a_describing_label_keeps_the_run_and_says_what_the_running_job_gets(fleet, monkeypatch):
    """A label on the job object and its pods: the MPIJob gets it at once, its running pods do not; the pods' label
    waits for the next run (held back)."""
    (fleet / "profiles" / "jobs" / "resnet.yaml").write_text(
        FLEET_JOB.format(name="resnet", cluster="west") + "labels:\n  team: vision\n", encoding="utf-8")
    _, stdout, _ = _diff(fleet, monkeypatch)
    top, sections = _sections(stdout)
    resnet = sections["== cluster west, chart west/jobs/resnet =="]
    run = resnet[0].rsplit("/", 1)[1]
    assert is_run_of(run, "resnet")
    assert top == [
        f"charts/west/jobs/resnet: note: MPIJob ml-training/{run} keeps its run; only its labels or annotations "
        "changed; the MPIJob gets them at once; its running pods do not",
        f"charts/west/jobs/resnet: note: MPIJob ml-training/{run} keeps the spec its run started with (compiled by "
        f"mpigen {_release()}); this release's spec for it is held back until the next run: the running job keeps its "
        "spec (raise the job's `rerun` to start that run now)"]
    assert resnet == [
        f"changed: kubeflow.org/v2beta1 MPIJob ml-training/{run}",
        f"held back until the next run: kubeflow.org/v2beta1 MPIJob ml-training/{run}"]


def _release() -> str:
    from mpigen import __version__
    return __version__


def test_the_whole_review_through_the_real_command_line_in_text_and_json(fleet):
    """Every edit at once, against the committed revision, as a user runs it: the text and the JSON say the same."""
    for edit in (_rename_rail_on_east, _shrink_lab_queue, _follow_release_branch_on_east, _move_resnet_to_east,
                 _bump_bert_image):
        edit(fleet)
    text = run_mpigen("diff", "profiles", "-o", "charts", "--against", "HEAD", cwd=fleet)
    data = run_mpigen("diff", "profiles", "-o", "charts", "--against", "HEAD", "--format", "json", cwd=fleet)
    assert text.returncode == 0 and data.returncode == 0, text.stderr + data.stderr
    assert data.stdout.isascii() and RAW_CONTROL.search(text.stdout) is None
    report = json.loads(data.stdout)
    assert report["format"] == 1 and report["against"] == "charts at HEAD" and report["problems"] == []
    assert [(a["kind"], a["where"]) for a in report["actions"]] == [
        ("root", "charts/east/bootstrap/root/root-sync.yaml"), ("device-plugin", "charts/east/infra"),
        ("edit-not-applied", "charts/east/jobs/bert")]
    top, sections = _sections(text.stdout)
    assert top[:3] == [f"{a['where']}: action: {a['what']}; {a['todo']}" for a in report["actions"]]
    assert top[3:] == [f"{n['where']}: note: {n['what']}; {n['todo']}" for n in report["notes"]]
    listed: dict[str, list[str]] = {}
    for change in report["changes"]:
        place = "bootstrap" if change["bootstrap"] else "chart"
        listed.setdefault(f"== cluster {change['cluster']}, {place} {change['chart']} ==", []).append(
            f"{change['status']}: {change['key']}")
        assert change["diff"] in text.stdout
    assert listed == sections
    queues = [c["cluster"] for c in report["changes"] if c["key"] == "kueue.x-k8s.io/v1beta2 ClusterQueue training"]
    configs = [c["cluster"] for c in report["changes"] if c["key"] == "v1 ConfigMap kube-system/sriovdp-config"]
    assert queues == ["east", "lab"] and configs == ["east"]  # east's queue quotas name the renamed rail's resource
    assert report["summary"]["changes"] == len(report["changes"]) and f"{len(report['changes'])} object(s) differ" \
        in text.stderr


def test_switching_a_cluster_to_an_applicationset_says_to_let_go_of_its_applications_first(repo):
    cluster = repo / "profiles" / "clusters" / "dgx-lab.yaml"
    cluster.write_text(cluster.read_text(encoding="utf-8") + "  applications: applicationset\n", encoding="utf-8")
    result = invoke_mpigen("diff", "profiles", "-o", "charts", cwd=repo)
    assert result.returncode == 0, result.stderr
    actions = [line for line in result.stdout.splitlines() if ": action: " in line]
    assert actions == [
        "charts/dgx-lab/bootstrap/apps/applications.yaml: action: the Applications of cluster dgx-lab change hands, to "
        "applicationset.yaml; the root prunes each, and its resources finalizer has Argo CD delete what it deployed, "
        "running jobs included, before it is made again: before this change is synced, let go of them without deleting "
        "anything: for app in dgx-lab-infra dgx-lab-pi dgx-lab-resnet50-dgx dgx-lab-resnet50-trainjob "
        "dgx-lab-tensorflow-benchmarks; do kubectl -n argocd patch application.argoproj.io \"$app\" --type json -p "
        "'[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'; done"], result.stdout
    assert "added: argoproj.io/v1alpha1 ApplicationSet argocd/dgx-lab" in result.stdout
