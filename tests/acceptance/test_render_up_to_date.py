"""`mpigen render --check`: CI's guard that charts/ is what the profiles compile to. The committed charts through the
real command in a process of its own, the edited, missing and pending ones in-process (conftest.invoke_mpigen)."""

from __future__ import annotations

import hashlib
import json
import shutil

from conftest import CHARTS, PROFILES, invoke_mpigen, run_mpigen


def _digest(folder):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_committed_charts_are_up_to_date():
    result = run_mpigen("render", PROFILES, "-o", CHARTS, "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stdout


def test_a_hand_edited_chart_a_missing_file_and_an_extra_file_are_listed(tmp_path):
    charts = shutil.copytree(CHARTS, tmp_path / "charts")
    values = charts / "dgx-lab" / "jobs" / "pi" / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("workers: 2", "workers: 3"), encoding="utf-8")
    (charts / "dgx-lab" / "jobs" / "pi" / "templates" / "NOTES.txt").unlink()
    (charts / "dgx-lab" / "stray.yaml").write_text("x: 1\n", encoding="utf-8")
    before = _digest(charts)
    result = invoke_mpigen("render", PROFILES, "-o", charts, "--check")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"missing: {charts}/dgx-lab/jobs/pi/templates/NOTES.txt",
        f"stale: {charts}/dgx-lab/jobs/pi/values.yaml",
        f"extra: {charts}/dgx-lab/stray.yaml",
    ]
    assert f"run `mpigen render {PROFILES} -o {charts}` and commit it" in result.stderr  # the command the user runs
    assert _digest(charts) == before, "--check wrote something"


def test_an_empty_folder_lists_every_file_as_missing(tmp_path):
    result = invoke_mpigen("render", PROFILES, "-o", tmp_path / "none", "--check")
    assert result.returncode == 1
    assert all(line.startswith("missing: ") for line in result.stdout.splitlines())
    assert not (tmp_path / "none").exists()


def test_charts_written_where_the_gitops_objects_do_not_look_are_warned_about(tmp_path):
    (tmp_path / ".git").mkdir()  # a work tree: only its top matters
    elsewhere = invoke_mpigen("render", PROFILES, "-o", tmp_path / "deploy" / "charts")
    assert elsewhere.returncode == 0, elsewhere.stderr
    warnings = [line for line in elsewhere.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 3, elsewhere.stderr  # dgx-lab, dgx-pod (Argo CD) and cpu-lab (Flux) say `path: charts`
    assert warnings[1] == (
        "warning: cluster 'dgx-lab' (profiles/clusters/dgx-lab.yaml): gitops.path is 'charts', "
        f"but the charts are written to 'deploy/charts' of the git repository {tmp_path}, so its argocd objects point "
        f"at charts that are not there; set `gitops.path: deploy/charts`, or render into {tmp_path / 'charts'}")
    where_they_look = invoke_mpigen("render", PROFILES, "-o", tmp_path / "charts")
    assert where_they_look.returncode == 0 and "warning" not in where_they_look.stderr, where_they_look.stderr


def test_a_committed_render_waiting_in_the_staging_folder_is_not_up_to_date(tmp_path):
    """The second red team's case: `render --check` said "up to date" while a committed plan waited in
    `.mpigen-staging` for the next render, which then changed the charts. With a stamp or without, it is pending."""
    charts = tmp_path / "charts"
    assert invoke_mpigen("render", PROFILES, "-o", charts, "--stamp").returncode == 0
    staging = charts / ".mpigen-staging"
    staging.mkdir()
    (staging / "plan.committed.json").write_text(json.dumps({"move": [], "delete": ["dgx-lab/jobs/pi/values.yaml"]}),
                                                 encoding="utf-8")
    before = _digest(charts)
    for stamp in ((), ("--stamp",)):
        result = invoke_mpigen("render", PROFILES, "-o", charts, "--check", *stamp)
        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stdout.splitlines() == [f"pending: {staging}/plan.committed.json"]
        assert "the next render completes it" in result.stderr
        assert f"run `mpigen render {PROFILES} -o {charts}`" in result.stderr
    assert _digest(charts) == before, "--check wrote something"
    completed = invoke_mpigen("render", PROFILES, "-o", charts)  # the next render does change the folder
    assert completed.returncode == 0 and "1 file(s) written" in completed.stdout and not staging.exists()
