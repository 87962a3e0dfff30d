"""Command line: a thin layer that runs the pipeline and reports its results."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator import __version__
from generator.diagnostics import Diagnostic, Severity
from generator.package import output_files
from generator.pipeline import CompileResult, check_profiles, compile_profiles
from generator.render import render_manifests
from generator.write import WriteRefused, write_tree

PATHS = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))


def _report(result: CompileResult) -> None:
    for diagnostic in result.diagnostics:
        click.echo(diagnostic.format(), err=True)
    errors = sum(1 for d in result.diagnostics if d.severity is Severity.ERROR)
    warnings = len(result.diagnostics) - errors
    if errors:
        click.echo(f"{errors} error(s), {warnings} warning(s) in {result.profile_count} profile file(s); "
                   "nothing was written", err=True)


def _fail(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mpigen")
def main() -> None:
    """Compile hardware, cluster and MPI job profiles into Helm charts."""


@main.command()
@PATHS
def validate(paths: tuple[Path, ...]) -> None:
    """Check profiles: every error of every file, as path:line:col."""
    result = check_profiles(paths)
    _report(result)
    if _fail(result.diagnostics):
        sys.exit(1)
    fleet = result.fleet
    click.echo(f"{result.profile_count} profile(s) valid: {len(fleet.hardware)} hardware, "
               f"{len(fleet.clusters)} cluster(s), {len(fleet.jobs)} job(s)")


@main.command()
@PATHS
@click.option("-o", "--output", "output", type=click.Path(path_type=Path, file_okay=False),
              help="Folder to write the charts into (e.g. charts).")
@click.option("--manifests", is_flag=True,
              help="Print the manifests the charts render to with default values, write nothing.")
def render(paths: tuple[Path, ...], output: Path | None, manifests: bool) -> None:
    """Compile profiles into Helm charts under OUTPUT/<cluster>/."""
    if output is None and not manifests:
        raise click.UsageError("give -o CHARTS to write charts, or --manifests to print what they render to")
    result = compile_profiles(paths)
    _report(result)
    if _fail(result.diagnostics):
        sys.exit(1)
    if manifests:
        click.echo(render_manifests(result.charts), nl=False)
        return
    try:
        report = write_tree(output, output_files(result.charts))
    except WriteRefused as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(f"{len(result.charts)} chart(s) in {output}: {len(report.written)} file(s) written, "
               f"{len(report.unchanged)} unchanged, {len(report.pruned)} removed")
