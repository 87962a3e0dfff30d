"""`--cluster` and `--job` on render --manifests, check, plan and explain (`--pool` on plan): part of a big fleet,
and a name that is not there a usage error with the closest names. Render's filters go through the real command in a
process of its own, the other commands' in-process (conftest.invoke_mpigen)."""

from __future__ import annotations

import re

import pytest
from conftest import CHARTS, PROFILES, REPO, invoke_mpigen, run_mpigen

SOURCE = re.compile(r"^# Source: ([^/]+/(?:infra|jobs/[^/]+))/", re.MULTILINE)


def test_render_manifests_of_a_job_or_a_cluster():
    job = run_mpigen("render", PROFILES, "--manifests", "--job", "pi")
    assert job.returncode == 0, job.stderr
    assert set(SOURCE.findall(job.stdout)) == {"dgx-lab/jobs/pi"}
    whole = run_mpigen("render", PROFILES, "--manifests").stdout
    assert job.stdout in whole  # the very documents the whole fleet's stream holds
    cluster = run_mpigen("render", PROFILES, "--manifests", "--cluster", "cpu-lab")
    assert set(SOURCE.findall(cluster.stdout)) == {"cpu-lab/infra", "cpu-lab/jobs/cpu-pi"}


@pytest.mark.parametrize(("args", "message"), [
    (("render", "--manifests", "--cluster", "dgx-lb"), "Error: --cluster dgx-lb: no such cluster; did you mean "
                                                       "'dgx-lab' or 'dgx-pod'?"),
    (("render", "--manifests", "--job", "resnet50"), "Error: --job resnet50: no such job; did you mean "
                                                     "'resnet50-dgx', 'vision-resnet50' or 'netapp-resnet50'?"),
    (("plan", "--cluster", "cpu-lab", "--job", "pii"), "Error: --job pii: no such job on the chosen cluster(s); "
                                                       "expected one of 'cpu-pi'"),
    (("plan", "--pool", "gpu"), "Error: --pool gpu: no such pool;"),
    (("explain", "pi", "--cluster", "dgx"), "Error: --cluster dgx: no such cluster; did you mean"),
    (("check", "--no-helm", "--cluster", "cpu-lb"), "Error: --cluster cpu-lb: no such cluster; did you mean 'cpu-lab'?"),
])
def test_a_name_that_is_not_there_is_a_usage_error_with_the_closest_ones(args, message):
    run = run_mpigen if args[0] == "render" else invoke_mpigen  # render's through the real command, the rest in-process
    done = run(*args, cwd=REPO)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr, done.stderr


def test_render_into_a_folder_stays_whole(tmp_path):
    done = run_mpigen("render", PROFILES, "-o", tmp_path / "charts", "--cluster", "dgx-lab")
    assert done.returncode == 2 and not (tmp_path / "charts").exists()
    assert "--cluster and --job narrow --manifests only: a render into a folder writes the whole fleet" in done.stderr


def test_check_the_charts_of_a_cluster_or_a_job():
    cluster = invoke_mpigen("check", "--no-helm", CHARTS, "--cluster", "cpu-lab")
    assert cluster.returncode == 0, cluster.stdout
    assert cluster.stdout.splitlines()[-1].endswith("of 2 chart(s) and 2 manifest file(s)")  # its bootstrap too
    job = invoke_mpigen("check", "--no-helm", CHARTS, "--job", "pi", "--job", "cpu-pi")
    assert job.returncode == 0 and job.stdout.splitlines()[-1].endswith("of 2 chart(s) and 0 manifest file(s)")


def test_check_of_a_job_reads_its_cluster_s_infra_chart_as_context():
    """The job's networks are in its cluster's infra chart: read, not judged, so the job passes as in the whole check."""
    job = invoke_mpigen("check", "--job", "resnet50-dgx", cwd=REPO)
    assert job.returncode == 0, job.stdout
    assert job.stdout.splitlines()[-1] == "0 error(s), 0 warning(s) in 2 document(s) of 1 chart(s) and 0 manifest file(s)"


def test_plan_of_a_cluster_a_pool_and_a_job():
    cluster = invoke_mpigen("plan", PROFILES, "--cluster", "cpu-lab", "--output", "json")
    assert cluster.returncode == 0 and '"name": "cpu-lab"' in cluster.stdout and '"name": "dgx-lab"' not in cluster.stdout
    job = invoke_mpigen("plan", "--job", "pi", cwd=REPO)
    assert job.returncode == 0
    assert [line for line in job.stdout.splitlines() if line.startswith(("cluster ", "  pool "))] == [
        "cluster dgx-lab (profiles/clusters/dgx-lab.yaml): scheduler none, network sriov-device-plugin",
        "  pool cpu: 8 x cpu-node"]


def test_explain_a_job_of_one_cluster(profiles_copy):
    root = profiles_copy({"jobs/pi-cpu-lab.yaml": (PROFILES / "jobs/cpu-pi.yaml").read_text(encoding="utf-8")
                          .replace("name: cpu-pi", "name: pi")})
    two = invoke_mpigen("explain", "pi", "-p", root)
    assert two.returncode == 1 and "2 jobs are named 'pi' (on clusters " in two.stderr and "give --cluster" in two.stderr
    one = invoke_mpigen("explain", "pi", "-p", root, "--cluster", "cpu-lab")
    assert one.returncode == 0 and one.stdout.startswith("job pi (") and "cluster cpu-lab" in one.stdout.splitlines()[0]
