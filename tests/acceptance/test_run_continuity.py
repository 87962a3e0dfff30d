"""Day two: a compiled run is somebody's running job (generator/continuity/committed.py, generator/resolve/identity.py).

A new mpigen release whose output differs for unchanged profiles keeps every run's name and the spec it started
with; an edit that only describes a run keeps its name too; an edit of what the run does renames it. Each case
runs the command line on a copy of the example fleet and its committed charts: the upgrades and an adopted 0.1.0
chart through a real process, the other edits in-process (conftest.invoke_mpigen).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CHARTS, PROFILES, invoke_mpigen, is_run_of, run_helm, run_mpigen

UPGRADED = ("import mpigen.model.defaults as defaults\n"
            "defaults.LAUNCHER_CPU = '2'  # a release whose launchers ask for another CPU by default\n"
            "from mpigen.commands.cli import main\n"
            "main(prog_name='mpigen')\n")
"""mpigen with one default changed: a build of a later release, which compiles every launcher otherwise."""


def _upgraded_mpigen(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", UPGRADED, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """A copy of the example profiles and the charts the current release committed for them."""
    shutil.copytree(PROFILES, tmp_path / "profiles")
    shutil.copytree(CHARTS, tmp_path / "charts", ignore=shutil.ignore_patterns(".mpigen-cache"))
    return tmp_path


def _compiled_now(fleet: Path, template: Path) -> str:
    """The template as this release compiles it for the committed run: the committed charts hold, for a run an earlier
    release started, the spec that release compiled; a render into an empty folder names each run anew."""
    fresh = fleet / "fresh"
    if not fresh.exists():
        result = invoke_mpigen("render", "profiles", "-o", fresh, cwd=fleet)
        assert result.returncode == 0, result.stderr
    chart = str(template.relative_to(fleet / "charts").parent.parent)
    run, new_run = _runs(fleet / "charts")[chart], _runs(fresh)[chart]
    return (fresh / template.relative_to(fleet / "charts")).read_text().replace(new_run, run)


def _runs(charts: Path) -> dict[str, str]:
    """Each job chart's run name, by chart folder."""
    return {str(path.parent.relative_to(charts)): yaml.safe_load(path.read_text())["annotations"]["mpigen/mpijob"]
            for path in sorted(charts.glob("*/jobs/*/Chart.yaml"))}


def _job_templates(charts: Path) -> dict[str, str]:
    names = ("mpijob.yaml", "volcano-job.yaml", "trainjob.yaml")
    return {str(path.relative_to(charts)): path.read_text() for path in sorted(charts.glob("*/jobs/*/templates/*"))
            if path.name in names}


def _annotations(chart: Path) -> dict[str, Any]:
    return yaml.safe_load((chart / "Chart.yaml").read_text())["annotations"]


def test_an_upgrade_that_compiles_every_launcher_otherwise_renames_no_run_and_keeps_each_spec(fleet, helm):
    charts = fleet / "charts"
    shutil.copytree(charts, fleet / "before")
    runs, templates = _runs(charts), _job_templates(charts)
    assert len(runs) == 15
    fresh = _upgraded_mpigen("render", "profiles", "--manifests", cwd=fleet)
    assert fresh.returncode == 0, fresh.stderr
    assert "cpu: \"2\"" in fresh.stdout  # the upgraded build does compile launchers otherwise, for new runs

    review = _upgraded_mpigen("diff", "profiles", "-o", "charts", cwd=fleet)
    assert review.returncode == 0, review.stderr
    assert "replaced:" not in review.stdout and "new-run" not in review.stdout
    assert "held back until the next run: kubeflow.org/v2beta1 MPIJob ml-training/" + \
        runs["dgx-lab/jobs/resnet50-dgx"] in review.stdout
    assert '-                cpu: "1"\n+                cpu: "2"\n' in review.stdout

    result = _upgraded_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0, result.stderr
    assert _runs(charts) == runs
    assert _job_templates(charts) == templates  # each run keeps the spec it started with, byte for byte
    # Each run keeps its spec, and the release that compiled it (some committed runs keep 0.3.0's).
    releases = {chart: _annotations(fleet / "before" / chart)["mpigen/run-release"] for chart in runs}
    assert re.search(r"run\(s\) keep the spec they started with \(compiled by mpigen "
                     + re.escape(", ".join(sorted(set(releases.values())))) + r"\)", result.stderr), result.stderr
    for chart in runs:
        assert _annotations(charts / chart)["mpigen/run-release"] == releases[chart]
    # What Helm renders for a held chart is the committed job object: Argo CD and Flux see no change to apply.
    pi = charts / "dgx-lab" / "jobs" / "pi"
    rendered = [d for d in yaml.safe_load_all(run_helm(helm, "template", "pi", pi, "--namespace", "hpc").stdout) if d]
    launcher = next(d for d in rendered if d["kind"] == "MPIJob")["spec"]["mpiReplicaSpecs"]["Launcher"]
    assert launcher["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1"
    # The held fleet is stable: the upgraded build finds it up to date (a later render changes nothing).
    check = _upgraded_mpigen("render", "--check", "profiles", "-o", "charts", cwd=fleet)
    assert check.returncode == 0, check.stdout + check.stderr


def test_after_the_upgrade_an_edited_job_is_a_new_run_with_the_new_release_spec(fleet):
    charts = fleet / "charts"
    before = _runs(charts)
    job = fleet / "profiles" / "jobs" / "tensorflow-benchmarks.yaml"
    job.write_text(job.read_text().replace("workers: 2", "workers: 3"))
    result = _upgraded_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0, result.stderr
    after, edited = _runs(charts), "dgx-lab/jobs/tensorflow-benchmarks"
    assert after[edited] != before[edited] and is_run_of(after[edited], "tensorflow-benchmarks")
    assert {k: v for k, v in after.items() if k != edited} == {k: v for k, v in before.items() if k != edited}
    template = (charts / edited / "templates" / "mpijob.yaml").read_text()
    assert 'cpu: "2"' in template  # the new run gets what the upgraded release compiles


def test_a_chart_of_0_1_0_is_adopted_and_an_edit_of_its_image_is_still_a_new_run(fleet):
    """Charts of 0.1.0 record no identity: each run is adopted under its name, unless its values.yaml says another
    image or size than the profile (an edit made with the upgrade)."""
    charts = fleet / "charts"
    before = _runs(charts)
    for path in charts.glob("*/*/**/Chart.yaml"):
        path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                if not line.lstrip().startswith(("mpigen/run-", "mpigen/release"))))
    job = fleet / "profiles" / "jobs" / "resnet50-dgx.yaml"
    job.write_text(job.read_text().replace("24.03-tf2-py3", "24.05-tf2-py3"))
    result = run_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0, result.stderr
    after = _runs(charts)
    assert after["dgx-lab/jobs/resnet50-dgx"] != before["dgx-lab/jobs/resnet50-dgx"]
    assert {k: v for k, v in after.items() if k != "dgx-lab/jobs/resnet50-dgx"} == \
        {k: v for k, v in before.items() if k != "dgx-lab/jobs/resnet50-dgx"}
    for chart in after:
        assert _annotations(charts / chart)["mpigen/run-identity"].startswith("1:")


def test_describing_labels_keep_the_run_and_reach_only_the_job_object(fleet):
    charts = fleet / "charts"
    before = _runs(charts)
    job = fleet / "profiles" / "jobs" / "language-bert.yaml"
    job.write_text(job.read_text() + "labels:\n  team: language\nobjectLabels:\n  cost-centre: cc-4711\n"
                   "objectAnnotations:\n  example.com/owner: alice@example.com\n")
    result = invoke_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0, result.stderr
    assert _runs(charts) == before
    manifests = invoke_mpigen("render", "profiles", "--manifests", "-o", "charts", cwd=fleet)
    mpijob = next(d for d in yaml.safe_load_all(manifests.stdout)
                  if d and d["kind"] == "MPIJob" and d["metadata"]["name"] == before["dgx-pod/jobs/language-bert"])
    assert mpijob["metadata"]["labels"]["team"] == "language"
    assert mpijob["metadata"]["labels"]["cost-centre"] == "cc-4711"
    assert mpijob["metadata"]["annotations"]["example.com/owner"] == "alice@example.com"
    # The running job's pods keep the template they started with: the pod label waits for the next run.
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    assert "team" not in worker.get("metadata", {}).get("labels", {})
    assert "cost-centre" not in str(mpijob["spec"])
    # A new run gets the pod label; the object-only ones stay off the pods. (From a folder with no charts: there
    # `render --manifests` names runs as the charts folder does.)
    elsewhere = fleet / "elsewhere"
    elsewhere.mkdir()
    fresh = invoke_mpigen("render", fleet / "profiles", "--manifests", cwd=elsewhere)
    mpijob = next(d for d in yaml.safe_load_all(fresh.stdout)
                  if d and d["kind"] == "MPIJob" and is_run_of(d["metadata"]["name"], "language-bert"))
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"]["labels"]["team"] == "language"
    assert "cost-centre" not in str(mpijob["spec"]) and "alice" not in str(mpijob["spec"])


def test_rerun_starts_a_new_run_with_the_same_settings(fleet):
    charts = fleet / "charts"
    before = _runs(charts)
    job = fleet / "profiles" / "jobs" / "pi.yaml"
    job.write_text(job.read_text() + "rerun: 1\n")
    assert invoke_mpigen("render", "profiles", "-o", "charts", cwd=fleet).returncode == 0
    assert _runs(charts)["dgx-lab/jobs/pi"] != before["dgx-lab/jobs/pi"]


def test_a_hand_edited_spec_is_not_kept_but_compiled_again_and_said(fleet):
    charts = fleet / "charts"
    before = _runs(charts)
    template = charts / "dgx-lab" / "jobs" / "pi" / "templates" / "mpijob.yaml"
    committed = template.read_text()
    template.write_text(committed.replace("cleanPodPolicy: Running", "cleanPodPolicy: All"))
    result = invoke_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0, result.stderr
    assert "was edited by hand since mpigen wrote it" in result.stderr
    assert template.read_text() == _compiled_now(fleet, template) and _runs(charts) == before


def test_a_job_template_that_is_no_yaml_any_more_is_a_warning_not_a_traceback(fleet):
    """A merge conflict left in a chart: the render says it cannot keep the spec and compiles the chart again."""
    charts = fleet / "charts"
    template = charts / "cpu-lab" / "jobs" / "cpu-pi" / "templates" / "mpijob.yaml"
    committed = template.read_text()
    template.write_text(committed.replace("  slotsPerWorker: 1\n", "<<<<<<< HEAD\n  slotsPerWorker: [1\n=======\n"))
    result = invoke_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "cpu-lab/jobs/cpu-pi: cannot keep the spec run cpu-pi-" in result.stderr
    assert "is not valid YAML" in result.stderr
    assert template.read_text() == committed


def test_a_hand_edit_with_its_digest_removed_is_not_kept(fleet):
    charts = fleet / "charts"
    chart = charts / "cpu-lab" / "jobs" / "cpu-pi"
    template = chart / "templates" / "mpijob.yaml"
    committed = template.read_text()
    template.write_text(committed.replace("- /home/mpiuser/pi\n", "- /home/mpiuser/other\n"))
    meta = chart / "Chart.yaml"
    meta.write_text("".join(line for line in meta.read_text().splitlines(keepends=True) if "mpigen/run-spec" not in line))
    result = invoke_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0, result.stderr
    assert "was edited by hand since mpigen wrote it" in result.stderr
    assert template.read_text() == committed


def test_a_kept_spec_that_mounts_what_the_new_hostfile_lacks_is_not_kept(fleet):
    """The hostfile ConfigMap is compiled anew: a spec of another release that mounts a key it no longer has would
    leave a later launcher unable to start, so the spec is not kept, and the render says how to start anew."""
    from mpigen.continuity.committed import committed_spec
    from mpigen.objects.manifest import marked_digest
    charts = fleet / "charts"
    chart = charts / "dgx-lab" / "jobs" / "resnet50-dgx"
    template = chart / "templates" / "mpijob.yaml"
    committed = template.read_text()
    assert "- key: rankfile\n" in committed
    older = committed.replace("- key: rankfile\n", "- key: rankfile-v0\n", 1)
    template.write_text(older)
    meta = chart / "Chart.yaml"
    text = meta.read_text()
    old_digest = yaml.safe_load(text)["annotations"]["mpigen/run-spec"]
    meta.write_text(text.replace(old_digest, marked_digest(committed_spec(older))))
    result = invoke_mpigen("render", "profiles", "-o", "charts", cwd=fleet)
    assert result.returncode == 0, result.stderr
    assert "mounts key rankfile-v0 of ConfigMap resnet50-dgx-03a6fc3-hostfile" in result.stderr
    assert "raise the job's `rerun` to start it anew" in result.stderr
    assert template.read_text() == _compiled_now(fleet, template)
