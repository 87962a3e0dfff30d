"""`mpigen plan` and `mpigen explain` as a user runs them: exit codes, file:line, JSON, and nothing written on error."""

from __future__ import annotations

import json

from conftest import PROFILES, REPO, TRAIN_JOB, run_mpigen


def test_plan_of_the_example_fleet():
    done = run_mpigen("plan", PROFILES, "--strict")
    assert done.returncode == 0, done.stderr
    assert "pool dgx: 8 x dgx-1" in done.stdout and "language-bert waits for quota" in done.stdout
    # resnet50-dgx: 16 GPUs x estimatedHours 3
    assert done.stdout.rstrip().endswith("10 job(s): 9 start at once, 1 wait, 0 can never run; 48 GPU-hours estimated "
                                         "(1 job(s))")
    data = json.loads(run_mpigen("plan", PROFILES, "--output", "json").stdout)
    assert data["summary"]["waits"] == 1


def test_a_job_that_can_never_run_is_reported_and_fails_only_under_strict(profiles_copy):
    root = profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 40\n"})
    lenient = run_mpigen("plan", root)
    assert lenient.returncode == 0, lenient.stderr
    where = f"{root / 'jobs/train.yaml'}:8:12"
    assert f"{where}: train can never run: 5 full-node workers need 5 nodes" in lenient.stdout
    strict = run_mpigen("plan", root, "--strict")
    assert strict.returncode == 1 and "1 job(s) can never run where they are (--strict)" in strict.stderr
    assert "Traceback" not in strict.stderr
    jobs = [j for c in json.loads(run_mpigen("plan", root, "--output", "json").stdout)["clusters"]
            for p in c["pools"] for j in p["jobs"]]
    assert next(j for j in jobs if j["name"] == "train")["location"]["line"] == 8


def test_a_profile_error_stops_the_plan_and_nothing_is_drawn(profiles_copy, tmp_path):
    root = profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 40\nworkerz: 2\n"})
    done = run_mpigen("plan", root, "--html", tmp_path / "plan.html")
    assert done.returncode == 1 and "train.yaml:9:1" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "plan.html").exists()


def test_a_picture_that_cannot_be_written_is_a_clear_error(tmp_path):
    done = run_mpigen("plan", PROFILES, "--svg", tmp_path / "missing" / "plan.svg")
    assert done.returncode == 1 and done.stderr.startswith("error: cannot write ") and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_explain_by_name_from_the_repository_and_by_path():
    by_name = run_mpigen("explain", "resnet50-dgx", cwd=REPO)
    assert by_name.returncode == 0, by_name.stderr
    assert "  MPIJob name = resnet50-dgx-" in by_name.stdout
    assert "  13: worker 1, local rank 5, GPU 5, NIC ib2 (mlx5_2), rail rail2" in by_name.stdout
    by_path = run_mpigen("explain", "profiles/jobs/resnet50-dgx.yaml", cwd=REPO)
    assert by_path.stdout == by_name.stdout
    data = json.loads(run_mpigen("explain", "resnet50-dgx", "--output", "json", cwd=REPO).stdout)
    assert data["kind"] == "explain" and len(data["ranks"]) == 16 and data["ranks"][13]["nic"] == "ib2"


def test_explain_a_job_profile_kept_outside_the_fleet(tmp_path):
    job = tmp_path / "train.yaml"
    job.write_text(TRAIN_JOB + "totalGpus: 8\n", encoding="utf-8")
    done = run_mpigen("explain", job, "-p", PROFILES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"job train ({job}): cluster dgx-lab, pool dgx")
    assert f"{job}:8: totalGpus 8 / 8 GPUs per worker" in done.stdout


def test_explain_an_unknown_job():
    done = run_mpigen("explain", "resnet50-dgz", "-p", PROFILES)
    assert done.returncode == 1 and "no job 'resnet50-dgz'" in done.stderr and "did you mean 'resnet50-dgx'" in \
        done.stderr
