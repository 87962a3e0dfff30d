"""`mpigen check` and `mpigen diff`: charts judged as the cluster will judge them, and compared object by object
with what the profiles compile to now."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mpigen.commands.arguments import (
    HELM_DEFAULTS,
    PATHS,
    charts_of,
    config_of,
    default_profiles_or_none,
    profiles_of,
    refuse_config,
    refuse_output_beside_profiles,
    selection_of,
    setting,
)
from mpigen.commands.completion import complete_clusters, complete_jobs
from mpigen.commands.reporting import has_errors, report_result
from mpigen.commands.verbosity import say, stage_lines, verbosity_options
from mpigen.support.diagnostics import one_line
from mpigen.vocabulary.repository import HELM_ENV

if TYPE_CHECKING:
    from mpigen.package import Chart
CHECK_FORMATS = ("json", "junit", "sarif", "text")
"""`mpigen check --output`: the keys of mpigen.check.report.FORMATS (a test holds them equal), named here so
that reading the options imports nothing of check."""


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, exists=True))
@click.option("--helm", "helm", metavar="PATH", envvar=HELM_ENV, help=f"Helm 3 or 4 to lint and render with "
              f"({HELM_DEFAULTS}).")
@click.option("--no-helm", is_flag=True, help="Render charts mpigen compiled with mpigen itself, even if helm is there.")
@click.option("--kube-version", metavar="1.N", help="Kubernetes version to validate built-in kinds for "
              "(default: the chart's cluster profile, else the newest bundled).")
@click.option("--crds", "crds", multiple=True, type=click.Path(path_type=Path, exists=True), metavar="DIR",
              help="CRD YAML files or folders adding schemas; other objects there (e.g. NADs) count as existing.")
@click.option("--context", "context", multiple=True, type=click.Path(path_type=Path, exists=True), metavar="PATH",
              help="Charts or manifests that exist beside the checked ones (e.g. the infra chart with the NADs): "
              "rendered and counted as existing, not judged.")
@click.option("--cluster", "clusters", multiple=True, metavar="NAME[=PATH]", shell_complete=complete_clusters,
              help="NAME: check only the charts of cluster NAME (and the files of its folder, e.g. its GitOps "
              "bootstrap). NAME=PATH: the manifests under PATH are objects of cluster NAME: rules compare objects of "
              "one cluster only (charts mpigen compiled say their own cluster). Repeatable.")
@click.option("--job", "jobs", multiple=True, metavar="NAME", shell_complete=complete_jobs,
              help="Check only the chart of job NAME (repeatable; with --cluster NAME, of those clusters).")
@click.option("--strict/--no-strict", default=False, help="A kind with no schema, and in a chart mpigen did not "
              "compile a field the API server would drop, is an error, not a warning "
              "(default: the repository config's `check: {strict: ...}`, else not).")
@click.option("--output", "output", type=click.Choice(CHECK_FORMATS), default="text", show_default=True,
              help="The report's format (a repository may set it: `check: {output: ...}` in .mpigen.yaml).")
@click.option("--explain-rules", is_flag=True, help="List the rules check applies, and every CEL rule of the CRD "
              "schemas (shipped and --crds) with whether it is evaluated, then exit (text, or json with --output json).")
@verbosity_options
@click.pass_context
def check(ctx: click.Context, paths: tuple[Path, ...], helm: str | None, no_helm: bool, kube_version: str | None,
          crds: tuple[Path, ...], context: tuple[Path, ...], clusters: tuple[str, ...], jobs: tuple[str, ...],
          strict: bool, output: str, explain_rules: bool) -> None:
    """Check charts and manifests as the cluster will judge them: exit 0 clean, 1 findings, 2 usage. PATHS: the
    charts folder `mpigen render` writes."""
    from mpigen.check import CheckOptions, CheckUsageError, run_check
    from mpigen.check.report import FORMATS
    from mpigen.vocabulary.kubernetes import dns1035_label_problems

    if explain_rules:
        from mpigen.check.explain import explain_rules as explain
        from mpigen.check.explain import explanation_json, explanation_text

        explanation = explain(crds)
        click.echo((explanation_json if output == "json" else explanation_text)(explanation), nl=False)
        return
    paths = paths or (_default_charts(ctx),)
    strict, output = setting(ctx, "strict", strict), setting(ctx, "output", output)
    chosen = tuple(given for given in clusters if "=" not in given)
    clusters = tuple(given for given in clusters if "=" in given)
    if kube_version is not None and not re.fullmatch(r"v?1\.[0-9]+(\.[0-9]+)?", kube_version):
        raise click.BadParameter("write it like 1.31 or 1.31.4", param_hint="--kube-version")
    groups: list[tuple[str, Path]] = []
    for given in clusters:
        name, equals, folder = given.partition("=")
        if not equals or not name or not folder:
            raise click.BadParameter(f"{given!r}: write NAME=PATH, NAME a cluster's name (e.g. dgx-lab=manifests/dgx-lab)",
                                     param_hint="--cluster")
        if problems := dns1035_label_problems(name):
            shown = repr(name) if len(name) <= 63 else f"{name[:40]!r}... ({len(name)} characters)"
            raise click.BadParameter(f"the cluster name {shown}: {'; '.join(problems)}; a cluster's name is a "
                                     "DNS-1035 label, as in its profile (e.g. dgx-lab=manifests/dgx-lab)",
                                     param_hint="--cluster")
        if not Path(folder).exists():
            raise click.BadParameter(f"{given!r}: {folder} does not exist", param_hint="--cluster")
        if any(os.path.abspath(folder) == os.path.abspath(other) for _, other in groups):
            raise click.BadParameter(f"{given!r}: {folder} is given another cluster already", param_hint="--cluster")
        groups.append((name, Path(folder)))
    helm, given_as = _helm_of(ctx, helm)
    options = CheckOptions(helm=helm, use_helm=not no_helm,
                           kube_version=kube_version.lstrip("v") if kube_version else None, crds=crds, context=context,
                           strict=strict, clusters=tuple(groups), helm_given_as=given_as,
                           selection=selection_of(chosen, jobs), progress=stage_lines())
    try:
        report = run_check(list(paths), options)
    except CheckUsageError as exc:
        from mpigen.check.helm import HelmRefused

        if isinstance(exc.__cause__, HelmRefused):
            _refuse_helm(ctx, exc.__cause__, given_as)
        raise click.UsageError(one_line(str(exc))) from exc
    for note in report.notes:
        say(one_line(note), err=True)
    click.echo(FORMATS[output](report), nl=False)
    if report.errors:
        sys.exit(1)


def _default_charts(ctx: click.Context) -> Path:
    """The charts folder render writes, when check is given nothing to check: it must exist."""
    from mpigen.commands.repository import NoDefault, default_charts

    config = config_of(ctx)
    profiles = default_profiles_or_none(ctx, "check") or ()  # the charts can be checked without their profiles
    try:
        charts = default_charts(config, profiles)
    except NoDefault as exc:
        raise click.UsageError(str(exc)) from None
    if not charts.is_dir():
        raise click.UsageError(f"no charts given, and {one_line(str(charts))} (the charts folder render writes) does "
                               "not exist: give the charts or manifests to check, or run `mpigen render` first")
    return charts


@click.command()
@PATHS
@click.option("-o", "--output", "output", type=click.Path(path_type=Path, file_okay=False),
              help="The charts folder to compare with (default: the folder `mpigen render` writes).")
@click.option("--against", "revision", metavar="REF", help="Compare with the charts as committed at this git revision "
              "(e.g. origin/main) instead of as they are on disk.")
@click.option("--helm", "helm", metavar="PATH", envvar=HELM_ENV, help=f"Helm 3 or 4 for charts mpigen did not "
              f"compile ({HELM_DEFAULTS}).")
@click.option("--format", "output_format", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="json: the actions, notes, changes and problems as one JSON document (-o names the charts folder).")
@click.option("--exit-code", is_flag=True, help="Exit 1 when anything differs.")
@verbosity_options
@click.pass_context
def diff(ctx: click.Context, paths: tuple[Path, ...], output: Path | None, revision: str | None, helm: str | None,
         output_format: str, exit_code: bool) -> None:
    """Show, per cluster and chart, object by object, how the profiles' manifests differ from the charts and their
    GitOps bootstrap files; changes that need a person come first, as action lines. PATHS: the repository config's
    profiles, else profiles/."""
    from mpigen.check.helm import HelmRefused, choose_helm
    from mpigen.commands.pipeline import compile_profiles
    from mpigen.diff import DiffError, as_json, as_text, diff_against

    paths = profiles_of(ctx, paths)
    charts = charts_of(ctx, output, paths)
    refuse_output_beside_profiles(paths, charts)
    progress = stage_lines()

    def compile_with(committed: Path) -> tuple[list[Chart], list[str]]:
        result = compile_profiles(paths, committed_in=committed, progress=progress)
        report_result(result)
        if has_errors(result.diagnostics):
            sys.exit(1)
        return result.charts, result.notes

    helm, given_as = _helm_of(ctx, helm)
    try:
        chosen = choose_helm(helm, given_as)
    except HelmRefused as exc:
        _refuse_helm(ctx, exc, given_as)
    if chosen:
        say(one_line(chosen.note("rendering charts mpigen did not compile")), err=True)
    try:
        report = diff_against(charts, compile_with, revision, chosen.path if chosen else None)
    except DiffError as exc:
        raise click.UsageError(one_line(str(exc))) from exc
    for problem in report.problems:
        say(f"warning: {one_line(problem)}", err=True)
    click.echo(as_json(report) if output_format == "json" else as_text(report), nl=False)
    say(report.summary(), err=True)
    if exit_code and report.units:
        sys.exit(1)


_CONFIG_HELM = "`helm`"
"""How a message names the config's Helm: the diagnostic's file:line:col says which config."""


def _helm_of(ctx: click.Context, given: str | None) -> tuple[str | None, str]:
    """The Helm asked for, and how the user gave it, as a message names it: `--helm`, the environment variable,
    or the repository config's `helm` (which neither overrides); (None, "--helm") where none was asked for."""
    if given:
        source = ctx.get_parameter_source("helm")
        return given, HELM_ENV if source is click.core.ParameterSource.ENVIRONMENT else "--helm"
    configured = config_of(ctx).helm
    return configured, _CONFIG_HELM if configured else "--helm"


def _refuse_helm(ctx: click.Context, refused: Exception, given_as: str) -> None:
    """A Helm that cannot be used: the config's is a config error at its `helm:` line (exit 1), one given on the
    command line or in the environment a usage error (exit 2)."""
    from mpigen.commands.repository import ConfigError
    from mpigen.support.diagnostics import Diagnostic

    at = config_of(ctx).helm_at
    if given_as != _CONFIG_HELM or at is None:
        raise click.UsageError(one_line(str(refused))) from refused
    refuse_config(ctx, ConfigError([Diagnostic(at, str(refused), "give the path of Helm 3 or 4 (relative to this "
                                               "file's folder) or the name of one on PATH; --helm and "
                                               f"{HELM_ENV} win over it")]))
