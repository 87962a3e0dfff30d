"""The profiles folder a compiled chart's `mpigen/source` names: found above the chart or in the working directory,
and never outside the repository, whatever the chart (anyone's text) says and wherever a link leads."""

from __future__ import annotations

from pathlib import Path

from conftest import current_folder

from mpigen.check.chart_profiles import profiles_folder
from mpigen.objects import chartfiles
from mpigen.readback.discover import ChartInfo


def repository(root: Path, source: str) -> ChartInfo:
    """A git work tree at root/repo with a profile and a job chart naming `source`; root/outside beside it."""
    (root / "repo" / ".git").mkdir(parents=True)
    (root / "repo" / "profiles" / "jobs").mkdir(parents=True)
    (root / "repo" / "profiles" / "jobs" / "train.yaml").write_text("kind: Job\n", encoding="utf-8")
    (root / "outside").mkdir()
    (root / "outside" / "secret.yaml").write_text("kind: Cluster\n", encoding="utf-8")
    chart = root / "repo" / "charts" / "train"
    chart.mkdir(parents=True)
    return ChartInfo(chart, "charts/train", "train", {chartfiles.SOURCE: source})


def test_the_profiles_above_the_chart_are_found(tmp_path: Path) -> None:
    chart = repository(tmp_path, "profiles/jobs/train.yaml")
    with current_folder(tmp_path / "outside"):
        assert profiles_folder(chart) == tmp_path / "repo" / "profiles"
    with current_folder(tmp_path / "repo"):
        assert profiles_folder(chart) == Path("profiles")


def test_a_source_naming_a_folder_above_the_repository_is_not_read(tmp_path: Path) -> None:
    chart = repository(tmp_path, "outside/secret.yaml")
    with current_folder(tmp_path / "repo"):
        assert profiles_folder(chart) is None
    with current_folder(tmp_path):  # nor from the working directory, outside the chart's repository
        assert profiles_folder(chart) is None


def test_a_profiles_folder_linked_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    chart = repository(tmp_path, "profiles/secret.yaml")
    (tmp_path / "repo" / "linked").symlink_to(tmp_path / "outside")
    with current_folder(tmp_path / "repo"):
        assert profiles_folder(ChartInfo(chart.path, chart.display, chart.name,
                                         {chartfiles.SOURCE: "linked/secret.yaml"})) is None
        (tmp_path / "repo" / "profiles" / "secret.yaml").symlink_to(tmp_path / "outside" / "secret.yaml")
        assert profiles_folder(chart) is None
