"""generator/check/run.py with `--cluster NAME` and `--job NAME`: a filter narrows what is reported and never changes
the verdict on what is reported. The charts it leaves out are read as context (their objects exist, as `--context`
files' do), not judged, and not counted; so for every job and cluster of the example fleet the filtered check says
exactly what the whole fleet's check says of the chosen charts (and of their files).

A small fuzzer draws fleets from the example one, some of their infra objects and bootstrap files removed and some
infra charts made of no cluster (so they meet every cluster's objects), and a job or cluster of what is left: the
filtered check must still say what the whole check says. CI runs 12 examples from a fixed seed; `make fuzz`
(MPIGEN_FUZZ_EXAMPLES, MPIGEN_FUZZ_SEED) runs MPIGEN_FUZZ_EXAMPLES / 8."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import CHARTS
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

from mpigen.check import CheckOptions, run_check
from mpigen.check.report import CheckReport
from mpigen.model import EVERYTHING, Selection
from mpigen.objects import chartfiles
from mpigen.readback.discover import discover

FLEET = discover([CHARTS])
# Every real job chart, and one acceptance chart of each kind: acceptance charts share their names across clusters
# (`accept-<pool>-...`), so each is chosen with its cluster.
JOB_CHARTS = sorted(Path(chart.display).relative_to(CHARTS).as_posix() for chart in FLEET.charts if chart.is_job_chart)
JOBS = [path for path in JOB_CHARTS if "/acceptance/" not in path] + [
    "dgx-lab/acceptance/accept-dgx-all-reduce-pair", "roce-lab/acceptance/accept-dgx-perftest-rail0"]
CLUSTERS = sorted({chart.annotations[chartfiles.CLUSTER] for chart in FLEET.charts})
EXAMPLES = max(int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) // 8, 20) if "MPIGEN_FUZZ_EXAMPLES" in os.environ else 12
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_126)
REMOVABLE = sorted([*(p.relative_to(CHARTS).as_posix() for p in CHARTS.glob("*/infra/templates/*.yaml")),
                    *(p.relative_to(CHARTS).as_posix() for p in FLEET.manifests)])
INFRA = sorted(Path(chart.display).relative_to(CHARTS).as_posix() for chart in FLEET.charts if not chart.is_job_chart)
CLUSTER_LINE = re.compile(rf"^\s*{re.escape(chartfiles.CLUSTER)}:.*\n", re.MULTILINE)


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
    # no context chart failed to render: beside the Helm note, only the CRD rules' notes on what needs a live object
    assert all(note.endswith("give the live objects with --context") for note in part.notes[1:]), part.notes


@pytest.mark.parametrize("chart", JOBS)
def test_a_job_is_judged_as_the_whole_fleet_judges_it(whole, chart):
    cluster, job = chart.split("/")[0], chart.split("/")[-1]
    part = _check(CHARTS, Selection(clusters=frozenset({cluster}), jobs=frozenset({job})))
    assert [Path(judged).relative_to(CHARTS).as_posix() for judged in part.charts] == [chart] and part.files == []
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


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(removed=st.lists(st.booleans(), min_size=len(REMOVABLE), max_size=len(REMOVABLE)),
       unclustered=st.sets(st.sampled_from(INFRA), max_size=2), by_job=st.booleans(), pick=st.integers(0, 1000))
def test_any_part_of_a_drawn_fleet_is_judged_as_the_whole_fleet_judges_it(tmp_path_factory, removed, unclustered,
                                                                           by_job, pick):
    charts = shutil.copytree(CHARTS, tmp_path_factory.mktemp("fleet") / "charts")
    for file, gone in zip(REMOVABLE, removed, strict=True):
        if gone:
            (charts / file).unlink()
    for folder in unclustered:
        chart_yaml = charts / folder / chartfiles.CHART_YAML
        chart_yaml.write_text(CLUSTER_LINE.sub("", chart_yaml.read_text(encoding="utf-8")), encoding="utf-8")
    fleet = discover([charts])
    jobs = sorted(chart.name for chart in fleet.charts if chart.is_job_chart)
    clusters = sorted({cluster for chart in fleet.charts if (cluster := chart.annotations.get(chartfiles.CLUSTER))})
    names = jobs if by_job else clusters
    name = names[pick % len(names)]
    part = _check(charts, Selection(jobs=frozenset({name})) if by_job else Selection(clusters=frozenset({name})))
    whole = _check(charts)
    event("the part has errors" if part.errors else "the part has no error")
    _same_as_whole(whole, part)
