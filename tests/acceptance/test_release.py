"""Releases are comparable: one version everywhere, every chart names the release that compiled it, `render --check`
on charts of another release says what the upgrade brings, and CHANGELOG.md has a section for this release."""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import shutil

import pytest
from conftest import CHARTS, PROFILES, REPO, run_mpigen

from mpigen import __version__
from mpigen.objects import chartfiles
from mpigen.support.project import REPOSITORY_URL, page_url

RELEASE_LINE = re.compile(rf"^  {re.escape(chartfiles.RELEASE)}: .*\n", re.MULTILINE)
FIRST_RELEASE_LACKS = re.compile("^  (" + "|".join(map(re.escape, (chartfiles.RUN_IDENTITY, chartfiles.RUN_RELEASE,
                                                                  chartfiles.RUN_SPEC))) + "): .*\n", re.MULTILINE)
"""The annotations of a job chart that 0.1.0 did not write yet, besides `mpigen/release`."""


def _chart_yamls(charts):
    return sorted(charts.rglob(chartfiles.CHART_YAML))


def _as_compiled_by(chart_yaml, release):
    """The Chart.yaml as `release` wrote it; None for 0.1.0, which wrote no `mpigen/release` and no run identity."""
    text = chart_yaml.read_text(encoding="utf-8")
    assert RELEASE_LINE.search(text), chart_yaml
    if release is None:
        text = FIRST_RELEASE_LACKS.sub("", text)
    shown = "" if release is None else f'  {chartfiles.RELEASE}: "{release}"\n'
    chart_yaml.write_text(RELEASE_LINE.sub(shown, text), encoding="utf-8")


def _run_of(chart_yaml):
    return re.search(rf"^  {re.escape(chartfiles.MPIJOB)}: (\S+)$", chart_yaml.read_text(encoding="utf-8"),
                     re.MULTILINE).group(1)


def test_version_is_the_installed_distributions():
    result = run_mpigen("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"mpigen, version {importlib.metadata.version('mpigen')}\n"
    assert importlib.metadata.version("mpigen") == __version__, "reinstall: pip install -e '.[test]'"


def test_pyproject_takes_the_version_from_the_package():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mpigen.__version__"}


def test_the_distributions_addresses_are_the_ones_messages_cite():
    """pip and PyPI show `[project.urls]`; messages and the schemas' `$id`s use support/project.py: one repository."""
    tomllib = pytest.importorskip("tomllib")
    urls = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert urls["Repository"] == REPOSITORY_URL
    for name, page in (("Documentation", "README.md"), ("Changelog", "CHANGELOG.md")):
        assert urls[name] == f"{REPOSITORY_URL}/blob/main/{page}" and (REPO / page).is_file()


def test_the_wheel_lists_every_folder_of_the_package():
    """generator/ installs as `mpigen`: each of its folders is a package of the wheel under that name, and the
    profile schemas ship inside it."""
    tomllib = pytest.importorskip("tomllib")
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"mpigen": "generator", "mpigen.schemas": "schemas",
                                         "mpigen.schemas.crds": "schemas/crds"}
    folders = [REPO / "generator", *(p for p in sorted((REPO / "generator").rglob("*"))
                                     if p.is_dir() and p.name != "__pycache__")]
    expected = sorted(".".join(("mpigen", *p.relative_to(REPO / "generator").parts)) for p in folders)
    assert sorted(setuptools["packages"]) == sorted([*expected, "mpigen.schemas", "mpigen.schemas.crds"])


def test_every_committed_chart_names_this_release():
    charts = _chart_yamls(CHARTS)
    assert len(charts) > 1
    for chart_yaml in charts:
        assert f'  {chartfiles.RELEASE}: "{__version__}"\n' in chart_yaml.read_text(encoding="utf-8"), chart_yaml


def test_the_changelog_has_a_section_for_this_release_and_the_first():
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert sections[0] == __version__, sections  # the newest first
    assert sections[-1] == "0.1.0"


HELD_BACK = re.compile(r"note: \d+ run\(s\) keep the spec they started with \(compiled by mpigen [0-9.]+\): each one's "
                       r"next run gets this release's; `mpigen diff` shows what")
HELD_BACK_FROM_FIRST = re.compile(r"warning: [a-z0-9-]+/jobs/[a-z0-9-]+: run [a-z0-9-]+ is adopted from a chart of mpigen "
                                  r"0\.1\.0, whose profile this release cannot compare, and keeps its spec .*")


def test_render_check_on_charts_of_the_first_release_says_the_upgrade_renames_no_run(tmp_path):
    charts = shutil.copytree(CHARTS, tmp_path / "charts")
    chart_yamls = _chart_yamls(charts)
    for chart_yaml in chart_yamls:
        _as_compiled_by(chart_yaml, None)
    assert any(FIRST_RELEASE_LACKS.search(path.read_text(encoding="utf-8")) for path in _chart_yamls(CHARTS))
    result = run_mpigen("render", PROFILES, "-o", charts, "--check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines() == [f"stale: {path}" for path in chart_yamls]  # no object changes
    # A committed run whose spec this release compiles otherwise keeps its own; from a release that named none,
    # each is said (HELD_BACK below).
    said = [line for line in result.stderr.splitlines()
            if not HELD_BACK_FROM_FIRST.fullmatch(line) and not HELD_BACK.fullmatch(line)]
    assert said == [
        f"{charts} holds charts another mpigen release compiled (this is mpigen {__version__}):",
        f"  every chart ({len(chart_yamls)}) compiled by mpigen 0.1.0 (they name no release: 0.1.0 wrote no "
        "mpigen/release)",
        f"  what differs in them comes with the upgrade, unless a profile changed too: {page_url('CHANGELOG.md')} says "
        "what each release changes in compiled output",
        "  no run is renamed",
        f"{charts} is not what the profiles compile to: run "
        f"`{shlex.join(['mpigen', 'render', str(PROFILES), '-o', str(charts)])}` and commit it",
    ]


def test_render_check_names_a_run_a_changed_profile_renames(tmp_path, profiles_copy):
    """Charts of one cluster compiled by an older release, and one job's image changed: that run is listed renamed,
    old name -> new, and only the charts of that release are named."""
    charts = shutil.copytree(CHARTS, tmp_path / "charts")
    older = _chart_yamls(charts / "dgx-lab")
    for chart_yaml in older:
        _as_compiled_by(chart_yaml, "0.1.9")
    pi = PROFILES / "jobs" / "pi.yaml"
    profiles = profiles_copy({"jobs/pi.yaml": pi.read_text(encoding="utf-8").replace(
        "image: mpioperator/mpi-pi:openmpi\n", "image: mpioperator/mpi-pi:openmpi-2\n")})
    old_run = _run_of(CHARTS / "dgx-lab" / "jobs" / "pi" / chartfiles.CHART_YAML)
    result = run_mpigen("render", profiles, "-o", charts, "--check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert {f"stale: {path}" for path in older} <= set(result.stdout.splitlines())
    lines = result.stderr.splitlines()
    start = lines.index(f"{charts} holds charts another mpigen release compiled (this is mpigen {__version__}):")
    renamed = re.fullmatch(rf"    dgx-lab/jobs/pi: {old_run} -> (pi-[0-9a-f]{{7}})", lines[-2])
    assert renamed and renamed.group(1) != old_run, lines
    assert lines[start + 1:-2] == [
        f"  {len(older)} chart(s) compiled by mpigen 0.1.9:",
        *(f"    {path.parent.relative_to(charts)}" for path in older),
        f"  what differs in them comes with the upgrade, unless a profile changed too: {page_url('CHANGELOG.md')} says "
        "what each release changes in compiled output",
        "  1 run(s) renamed (a GitOps sync deletes the running job and starts the new run):",
    ]


def test_render_check_of_charts_of_this_release_says_nothing_of_releases(tmp_path):
    charts = shutil.copytree(CHARTS, tmp_path / "charts")
    chart_yaml = charts / "dgx-lab" / "jobs" / "pi" / chartfiles.CHART_YAML
    chart_yaml.write_text(chart_yaml.read_text(encoding="utf-8").replace("description: ", "description: edited "),
                          encoding="utf-8")
    result = run_mpigen("render", PROFILES, "-o", charts, "--check")
    assert result.returncode == 1 and result.stdout == f"stale: {chart_yaml}\n", result.stdout + result.stderr
    # Beside the note on committed runs keeping the spec an earlier release compiled (charts/ holds some).
    said = [line for line in result.stderr.splitlines() if not HELD_BACK.fullmatch(line)]
    assert said and "release" not in "\n".join(said), result.stderr
