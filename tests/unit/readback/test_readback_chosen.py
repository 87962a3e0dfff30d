"""generator/readback/discover.py `chosen_targets` (`check --cluster NAME --job NAME`): the charts of those
clusters and jobs, by what their Chart.yaml says, and a cluster's folder files (its GitOps bootstrap); the rest
apart, as context."""

from __future__ import annotations

from conftest import CHARTS

from mpigen.model import EVERYTHING, Selection
from mpigen.readback.discover import Targets, chosen_targets, discover


def test_a_cluster_brings_its_charts_and_the_files_of_its_folder():
    targets = discover([CHARTS])
    assert chosen_targets(targets, EVERYTHING) == (targets, Targets(), [])
    chosen, rest, unknown = chosen_targets(targets, Selection(clusters=frozenset({"cpu-lab"})))
    assert unknown == [] and [chart.display for chart in chosen.charts] == [
        f"{CHARTS.as_posix()}/cpu-lab/infra", f"{CHARTS.as_posix()}/cpu-lab/jobs/cpu-pi"]
    assert chosen.manifests and all(path.is_relative_to(CHARTS / "cpu-lab" / "bootstrap") for path in chosen.manifests)
    _apart(targets, chosen, rest)


def test_a_job_brings_its_chart_only_and_unknown_names_are_said():
    targets = discover([CHARTS])
    chosen, rest, unknown = chosen_targets(targets, Selection(jobs=frozenset({"pi", "pii"})))
    assert [chart.name for chart in chosen.charts] == ["pi"] and chosen.manifests == []
    assert unknown == ["--job pii: no such job; did you mean 'pi'?"]
    _apart(targets, chosen, rest)


def _apart(targets: Targets, chosen: Targets, rest: Targets) -> None:
    """Every chart and file is either chosen or the context beside it (its infra chart among them): none is lost."""
    assert sorted(chosen.charts + rest.charts, key=lambda c: c.display) == targets.charts
    assert not set(chosen.manifests) & set(rest.manifests)
    assert set(chosen.manifests + rest.manifests) == set(targets.manifests)
    assert not rest.problems  # said once, of the chosen
    assert any(not chart.is_job_chart for chart in rest.charts)
