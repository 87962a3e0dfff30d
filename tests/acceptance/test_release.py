"""Releases are comparable: one version everywhere, every chart names the release that compiled it, `render --check`
on charts of another release says what the upgrade brings, and CHANGELOG.md has a section for this release."""

from __future__ import annotations

import importlib.metadata
import re

import pytest
from conftest import CHARTS, REPO, run_mpigen

from generator import __version__, chartfiles


def test_version_is_the_installed_distributions():
    result = run_mpigen("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"mpigen, version {importlib.metadata.version('mpigen')}\n"
    assert importlib.metadata.version("mpigen") == __version__, "reinstall: pip install -e '.[test]'"


def test_pyproject_takes_the_version_from_the_package():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["build-system"]["build-backend"] == "hatchling.build"
    assert project["tool"]["hatch"]["version"]["path"] == "generator/__init__.py"


def test_every_committed_chart_names_this_release():
    charts = sorted(CHARTS.rglob(chartfiles.CHART_YAML))
    assert len(charts) > 1
    for chart_yaml in charts:
        assert f'  {chartfiles.RELEASE}: "{__version__}"\n' in chart_yaml.read_text(encoding="utf-8"), chart_yaml


def test_the_changelog_has_a_section_for_this_release_and_the_first():
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert sections[0] == __version__, sections  # the newest first
    assert sections[-1] == "0.1.0"
