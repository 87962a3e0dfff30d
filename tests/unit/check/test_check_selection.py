"""generator/check/run.py with `--cluster NAME` and `--job NAME`: a filter narrows what is reported and never changes
the verdict on what is reported. The charts it leaves out are read as context (their objects exist, as `--context`
files' do), not judged, and not counted; so for every job and cluster of the example fleet the filtered check says
exactly what the whole fleet's check says of the chosen charts (and of their files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import CHARTS

from mpigen.check import CheckOptions, run_check
from mpigen.check.report import CheckReport
from mpigen.model import EVERYTHING, Selection
from mpigen.objects import chartfiles
from mpigen.readback.discover import discover

FLEET = discover([CHARTS])
JOBS = sorted(chart.name for chart in FLEET.charts if chart.is_job_chart)
CLUSTERS = sorted({chart.annotations[chartfiles.CLUSTER] for chart in FLEET.charts})


def _check(charts: Path, selection: Selection = EVERYTHING) -> CheckReport:
    return run_check([charts], CheckOptions(use_helm=False, selection=selection))


@pytest.fixture(scope="module")
def whole() -> CheckReport:
    return _check(CHARTS)


def _of(report: CheckReport, charts: list[str], files: list[str]):
    """The report's findings and documents in the given chart folders and files, in a stable order."""
    def held(source: str) -> bool:
        return source in files or any(source == chart or source.startswith(f"{chart}/") for chart in charts)

    return (sorted((f for f in report.findings if held(f.source)), key=repr),
            sorted(repr(d.obj) for d in report.documents if held(d.source)),
            sorted(w.format() for w in report.pod_security if held(w.source)))


def _same_as_whole(whole: CheckReport, part: CheckReport) -> None:
    assert part.charts and set(part.charts) <= set(whole.charts) and set(part.files) <= set(whole.files)
    findings, documents, security = _of(whole, part.charts, part.files)
    assert sorted(part.findings, key=repr) == findings  # nothing more reported, nothing less, no verdict changed
    assert sorted(repr(d.obj) for d in part.documents) == documents  # counted: what was judged, and only that
    assert sorted(w.format() for w in part.pod_security) == security
    assert not part.notes[1:], part.notes  # no context chart failed to render


@pytest.mark.parametrize("job", JOBS)
def test_a_job_is_judged_as_the_whole_fleet_judges_it(whole, job):
    part = _check(CHARTS, Selection(jobs=frozenset({job})))
    assert [Path(chart).name for chart in part.charts] == [job] and part.files == []
    _same_as_whole(whole, part)


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_a_cluster_is_judged_as_the_whole_fleet_judges_it(whole, cluster):
    part = _check(CHARTS, Selection(clusters=frozenset({cluster})))
    assert {Path(chart).relative_to(CHARTS).parts[0] for chart in part.charts} == {cluster}
    _same_as_whole(whole, part)


def test_a_filter_reports_the_true_errors_too(tmp_path):
    """Without dgx-lab's infra chart its jobs' networks are really missing: the filtered check says so, word for word
    as the whole check does (the context makes no finding go away that the whole fleet has)."""
    charts = shutil.copytree(CHARTS, tmp_path / "charts")
    shutil.rmtree(charts / "dgx-lab" / "infra")
    fleet = _check(charts)
    part = _check(charts, Selection(jobs=frozenset({"resnet50-dgx"})))
    assert any("no NetworkAttachmentDefinition ml-training/rail3" in f.message for f in part.errors)
    _same_as_whole(fleet, part)


def test_a_context_chart_that_cannot_be_rendered_is_said_in_a_note(tmp_path):
    """Its objects are unknown, so what the job lacks is reported (as the whole check does), and the note says why."""
    charts = shutil.copytree(CHARTS, tmp_path / "charts")
    (charts / "dgx-lab" / "infra" / "templates" / "broken.yaml").write_text("{{ if }}\n", encoding="utf-8")
    part = _check(charts, Selection(jobs=frozenset({"resnet50-dgx"})))
    assert part.notes[1:] == [f"{(charts / 'dgx-lab' / 'infra').as_posix()} (not chosen, read as context) could not be "
                              "rendered: the rules do not know its objects; check it on its own"]
    assert part.charts == [(charts / "dgx-lab" / "jobs" / "resnet50-dgx").as_posix()]  # not judged: no render finding
    assert sorted(part.findings, key=repr) == _of(_check(charts), part.charts, part.files)[0] and len(part.errors) == 4
