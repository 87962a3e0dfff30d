"""`mpigen diff`: object-by-object changes between the charts and what the profiles compile to."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import CHARTS, PROFILES, is_run_of, run_mpigen

from generator.diff import diff_objects

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
    assert result.stdout == "" and "no object differs" in result.stderr


def _statuses(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(("changed:", "added:", "removed:", "replaced:"))]


def test_an_edited_profile_shows_the_new_run_replacing_the_old(repo):
    old = (repo / "charts" / "dgx-lab" / "jobs" / "pi" / "templates" / "mpijob.yaml").read_text(encoding="utf-8")
    old_run = next(line.split(": ")[1] for line in old.splitlines() if line.startswith("  name: "))
    assert is_run_of(old_run, "pi")
    _more_workers(repo)
    for args in ([], ["--against", "HEAD"]):
        result = run_mpigen("diff", "profiles", "-o", "charts", "--exit-code", *args, cwd=repo)
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
    assert run_mpigen("render", "profiles", "-o", "charts", cwd=repo).returncode == 0
    _more_workers(repo)
    result = run_mpigen("diff", "profiles", "-o", "charts", "--exit-code", cwd=repo)
    assert result.returncode == 1
    assert _statuses(result.stdout) == ["changed: kubeflow.org/v2beta1 MPIJob hpc/pi",
                                        "changed: v1 ConfigMap hpc/pi-hostfile"]
    assert "+    pi-worker-2.pi.hpc.svc slots=1\n" in result.stdout


def test_against_a_revision_uses_the_committed_charts_not_the_folder(repo):
    (repo / "charts" / "dgx-lab" / "jobs" / "pi" / "values.yaml").write_text("garbage: [\n", encoding="utf-8")
    result = run_mpigen("diff", "profiles", "-o", "charts", "--against", "HEAD", "--exit-code", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_removed_job_shows_its_objects_removed(repo):
    (repo / "profiles" / "jobs" / "pi.yaml").unlink()
    result = run_mpigen("diff", "profiles", "-o", "charts", cwd=repo)
    assert result.returncode == 0
    removed = [line for line in _statuses(result.stdout) if line.startswith("removed: kubeflow.org/v2beta1 MPIJob hpc/")]
    assert len(removed) == 1 and is_run_of(removed[0].rsplit("/", 1)[1], "pi"), removed


def test_an_unknown_revision_is_a_usage_error(repo):
    result = run_mpigen("diff", "profiles", "-o", "charts", "--against", "no-such-ref", cwd=repo)
    assert result.returncode == 2 and "Traceback" not in result.stderr


@pytest.mark.parametrize("revision", ["", "  ", "--output=/tmp/x"])
def test_an_empty_or_flag_like_revision_is_a_usage_error_not_the_disk(repo, revision):
    result = run_mpigen("diff", "profiles", "-o", "charts", "--against", revision, cwd=repo)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert ("--against needs a git revision (e.g. origin/main); leave it out to compare with the charts on disk"
            if not revision.startswith("-") else "a git revision does not start with '-'") in result.stderr
    assert "differ" not in result.stderr


def test_a_chart_claiming_mpigen_with_a_template_it_does_not_render_is_rendered_by_helm(repo, helm):
    """`diff` renders charts claiming `mpigen/source` itself: one holding a template mpigen's renderer would
    skip (here `.yml`) must be rendered by Helm, so its extra object shows."""
    extra = repo / "charts" / "dgx-lab" / "jobs" / "pi" / "templates" / "extra.yml"
    extra.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: hpc}\n", encoding="utf-8")
    result = run_mpigen("diff", "profiles", "-o", "charts", "--helm", helm, "--exit-code", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    assert _statuses(result.stdout) == ["removed: v1 ConfigMap hpc/extra"]
    extra.unlink()
    (extra.parent / "sub").mkdir()
    (extra.parent / "sub" / "extra.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n"
                                                     "metadata: {name: extra2, namespace: hpc}\n", encoding="utf-8")
    result = run_mpigen("diff", "profiles", "-o", "charts", "--helm", helm, "--exit-code", cwd=repo)
    assert _statuses(result.stdout) == ["removed: v1 ConfigMap hpc/extra2"]
