"""`mpigen diff`: object-by-object changes between the charts and what the profiles compile to."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import CHARTS, PROFILES, run_mpigen

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


def test_an_edited_profile_shows_the_objects_it_changes(repo):
    _more_workers(repo)
    for args in ([], ["--against", "HEAD"]):
        result = run_mpigen("diff", "profiles", "-o", "charts", "--exit-code", *args, cwd=repo)
        assert result.returncode == 1
        statuses = [line for line in result.stdout.splitlines() if line.startswith(("changed:", "added:", "removed:"))]
        assert statuses == ["changed: kubeflow.org/v2beta1 MPIJob hpc/pi", "changed: v1 ConfigMap hpc/pi-hostfile"]
        assert "-      replicas: 2\n+      replicas: 3\n" in result.stdout
        assert "+    pi-worker-2.pi.hpc.svc slots=1\n" in result.stdout
        assert "2 object(s) differ" in result.stderr


def test_against_a_revision_uses_the_committed_charts_not_the_folder(repo):
    (repo / "charts" / "dgx-lab" / "jobs" / "pi" / "values.yaml").write_text("garbage: [\n", encoding="utf-8")
    result = run_mpigen("diff", "profiles", "-o", "charts", "--against", "HEAD", "--exit-code", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_removed_job_shows_its_objects_removed(repo):
    (repo / "profiles" / "jobs" / "pi.yaml").unlink()
    result = run_mpigen("diff", "profiles", "-o", "charts", cwd=repo)
    assert result.returncode == 0
    assert "removed: kubeflow.org/v2beta1 MPIJob hpc/pi" in result.stdout.splitlines()


def test_an_unknown_revision_is_a_usage_error(repo):
    result = run_mpigen("diff", "profiles", "-o", "charts", "--against", "no-such-ref", cwd=repo)
    assert result.returncode == 2 and "Traceback" not in result.stderr
