"""`mpigen validate` and `mpigen render`: the profiles checked, and compiled into charts (or the manifests they
render to), with the fast path of a stamped output folder and what an upgrade changes in it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mpigen.commands.arguments import (
    PATHS,
    charts_of,
    filter_options,
    profiles_of,
    refuse_output_beside_profiles,
    refuse_unknown,
    selection_of,
    setting,
)
from mpigen.commands.reporting import continuity_notes, exit_with_error, has_errors, report_result
from mpigen.commands.verbosity import say, stage_lines, verbosity_options
from mpigen.support.diagnostics import one_line
from mpigen.support.project import page_url

if TYPE_CHECKING:
    from mpigen.commands.pipeline import CompileResult
    from mpigen.commands.upgrade import Upgrade
    from mpigen.model import Selection


VALIDATE_FORMATS = ("json", "junit", "sarif", "text")
"""`mpigen validate --output`: text, or the keys of mpigen.validate.report.FORMATS (a test holds them equal)."""


@click.command()
@PATHS
@click.option("--output", "output", type=click.Choice(VALIDATE_FORMATS), default="text", show_default=True,
              help="json, sarif (code scanning) or junit (CI test reports) on stdout, instead of the text lines (a "
              "repository may set it: `validate: {output: ...}` in .mpigen.yaml).")
@click.option("--strict/--no-strict", default=False, help="Warnings fail too: exit 1 on any diagnostic (default: the "
              "repository config's `validate: {strict: ...}`, else not).")
@verbosity_options
@click.pass_context
def validate(ctx: click.Context, paths: tuple[Path, ...], output: str, strict: bool) -> None:
    """Check profiles: every error of every file, as path:line:col. PATHS: the repository config's profiles, else
    profiles/."""
    from mpigen.commands.pipeline import check_profiles

    strict, output = setting(ctx, "strict", strict), setting(ctx, "output", output)

    result = check_profiles(profiles_of(ctx, paths), progress=stage_lines())
    if output != "text":
        _report_validation(result, output, strict)
        return
    report_result(result)
    if has_errors(result.diagnostics):
        sys.exit(1)
    if strict and result.diagnostics:
        click.echo(f"{len(result.diagnostics)} warning(s) in {result.profile_count} profile file(s); --strict fails "
                   "on warnings", err=True)
        sys.exit(1)
    fleet = result.fleet
    assert fleet is not None  # a compile that reported no error
    say(f"{result.profile_count} profile(s) valid: {len(fleet.hardware)} hardware, "
        f"{len(fleet.clusters)} cluster(s), {len(fleet.jobs)} job(s)")


def _report_validation(result: CompileResult, output: str, strict: bool) -> None:
    """`validate --output json|sarif|junit`: the report alone on stdout; exit 1 where it fails."""
    from mpigen.validate.report import FORMATS, FleetCounts, ValidateReport

    fleet = result.fleet
    counts = FleetCounts(len(fleet.hardware), len(fleet.clusters), len(fleet.jobs)) if fleet is not None else None
    report = ValidateReport(tuple(result.diagnostics), tuple(dict.fromkeys(d.path for d in result.documents)),
                            result.profile_count, counts, strict)
    click.echo(FORMATS[output](report), nl=False)
    if report.failed:
        sys.exit(1)


@click.command()
@PATHS
@click.option("-o", "--output", "output", type=click.Path(path_type=Path, file_okay=False),
              help="Folder to write the charts into (default: the repository config's `charts`, else the clusters' "
              "gitops.path where they agree, else charts). Its job charts say what each run is called: a run "
              "whose profiles ask the same of it keeps its name and the spec it started with.")
@click.option("--manifests", is_flag=True,
              help="Print the manifests the charts render to with default values, write nothing; runs keep the "
              "names the job charts in OUTPUT give them, as explain, plan and diff name them.")
@filter_options
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 and list every file of OUTPUT that is missing, stale or extra.")
@click.option("--stamp/--no-stamp", default=False,
              help="Keep a stamp of this render in OUTPUT/.mpigen-cache (git ignores it), so that the next render "
              "or --check with nothing changed stops at once. Off by default (`render: {stamp: true}` in .mpigen.yaml "
              "turns it on, --no-stamp off again): OUTPUT holds only the charts.")
@verbosity_options
@click.pass_context
def render(ctx: click.Context, paths: tuple[Path, ...], output: Path | None, manifests: bool, clusters: tuple[str, ...],
           jobs: tuple[str, ...], check_only: bool, stamp: bool) -> None:
    """Compile profiles into Helm charts under OUTPUT/<cluster>/. PATHS: the repository config's profiles, else
    profiles/.

    --cluster and --job narrow --manifests only: a render into OUTPUT writes the whole fleet, since the folder is
    one transaction that owns every file it wrote and removes those the profiles no longer make, so rendering part
    of the fleet there would remove the rest."""
    given, named = paths, output is not None  # what the user typed: the command `--check` tells them to run
    paths = profiles_of(ctx, paths)
    selection = selection_of(clusters, jobs)
    if manifests and check_only:
        raise click.UsageError("--manifests prints the manifests and --check compares OUTPUT with the profiles: give "
                               "one of them")
    if manifests:
        _print_manifests(paths, charts_of(ctx, output, paths), selection)
        return
    if not selection.everything:
        raise click.UsageError("--cluster and --job narrow --manifests only: a render into a folder writes the whole "
                               "fleet (the folder's files are one transaction, and a partial render would remove the "
                               "others' charts); add --manifests to print part of the fleet")
    output = charts_of(ctx, output, paths)
    stamp = setting(ctx, "stamp", stamp)
    refuse_output_beside_profiles(paths, output)
    if (stamp or check_only) and _unchanged_since_stamped(paths, output, refresh=stamp and not check_only):
        return
    from mpigen.commands.freshness import render_key
    from mpigen.commands.pipeline import compile_profiles, delivery_path_warnings
    from mpigen.commands.upgrade import is_chart_yaml, upgrade_of
    from mpigen.package import output_files
    from mpigen.support.progress import stage
    from mpigen.write import StampRequest, WriteError, compare_tree, write_tree

    progress = stage_lines()
    result = compile_profiles(paths, committed_in=output, progress=progress)
    report_result(result)
    if has_errors(result.diagnostics):
        sys.exit(1)
    notes = [diagnostic.format() for diagnostic in result.diagnostics] + continuity_notes(result)
    assert result.fleet is not None  # a compile that reported no error
    for warning in delivery_path_warnings(result.fleet, output):
        notes.append(f"warning: {one_line(warning)}")
        say(notes[-1], err=True)
    files = output_files(result.charts)
    if check_only:
        try:
            with stage(progress, "compare", "file(s)", "comparing files") as comparing:
                diff = compare_tree(output, files, keep_found=is_chart_yaml, tally=comparing.tally)
                comparing.count = len(files)
        except WriteError as exc:
            exit_with_error(str(exc))
        for label, changed in (("missing", diff.missing), ("stale", diff.stale), ("extra", diff.extra),
                               ("pending", diff.pending)):
            for file in changed:
                click.echo(f"{label}: {one_line(str(output / file))}")
        if diff.pending:
            click.echo(f"{one_line(str((output / diff.pending[0]).parent))} holds a render that was committed and "
                       "not completed: the next render completes it (or refuses it), so the charts will change", err=True)
        upgrade = upgrade_of(diff.found, files)
        if upgrade is not None:
            _report_upgrade(upgrade, output, sum(1 for path in files if is_chart_yaml(path)))
        if not diff.clean:
            again = shlex.join(["mpigen", "render", *map(str, given), *(["-o", str(output)] if named else [])])
            click.echo(f"{one_line(str(output))} is not what the profiles compile to: run `{one_line(again)}` and "
                       "commit it", err=True)
            sys.exit(1)
        say(f"{one_line(str(output))} is up to date with the profiles")
        return
    request = None
    if stamp and result.fingerprint is not None:
        request = StampRequest(render_key(result.fingerprint, paths, output), len(result.charts), tuple(notes))
    try:
        with stage(progress, "write", "file(s) written", "writing files") as writing:
            report = write_tree(output, files, request, tally=writing.tally)
            writing.count = len(report.written)
    except WriteError as exc:
        exit_with_error(str(exc))
    say(f"{len(result.charts)} chart(s) in {one_line(str(output))}: {len(report.written)} file(s) written, "
               f"{len(report.unchanged)} unchanged, {len(report.pruned)} removed")


def _report_upgrade(upgrade: Upgrade, output: Path, charts: int) -> None:
    """After the stale files of `render --check`: which releases compiled the charts on disk, that their differences
    come with the change of release, and which runs the new charts rename (or that none is). Charts are named by
    their folder in OUTPUT."""
    click.echo(f"{one_line(str(output))} holds charts another mpigen release compiled (this is mpigen "
               f"{upgrade.release}):", err=True)
    for group in upgrade.compiled_by:
        which = f"every chart ({charts})" if len(group.charts) == charts else f"{len(group.charts)} chart(s)"
        named = "" if group.annotated else f" (they name no release: {group.release} wrote no mpigen/release)"
        newer = f", newer than {upgrade.release}: rendering with this release takes back what that one changed" \
            if group.newer else ""
        listed = ":" if len(group.charts) < charts else ""
        click.echo(f"  {which} compiled by mpigen {one_line(group.release)}{named}{newer}{listed}", err=True)
        if listed:
            for chart in group.charts:
                click.echo(f"    {one_line(chart)}", err=True)
    change = "change of release" if any(group.newer for group in upgrade.compiled_by) else "upgrade"
    click.echo(f"  what differs in them comes with the {change}, unless a profile changed too: "
               f"{page_url('CHANGELOG.md')} says what each release changes in compiled output", err=True)
    if not upgrade.renamed:
        click.echo("  no run is renamed", err=True)
        return
    click.echo(f"  {len(upgrade.renamed)} run(s) renamed (a GitOps sync deletes the running job and starts the new "
               "run):", err=True)
    for run in upgrade.renamed:
        click.echo(f"    {one_line(run.chart)}: {one_line(run.old)} -> {one_line(run.new)}", err=True)


def _print_manifests(paths: tuple[Path, ...], output: Path, selection: Selection) -> None:
    from mpigen.commands.pipeline import compile_profiles
    from mpigen.package.stream import manifest_stream

    result = compile_profiles(paths, committed_in=output, progress=stage_lines(), selection=selection)
    report_result(result)
    if has_errors(result.diagnostics):
        sys.exit(1)
    assert result.fleet is not None  # a compile that reported no error
    refuse_unknown(selection, (c.name for c in result.fleet.clusters), ((j.name, j.cluster.name) for j in result.fleet.jobs))
    continuity_notes(result)
    click.echo(manifest_stream(result.charts), nl=False)


def _unchanged_since_stamped(paths: tuple[Path, ...], output: Path, refresh: bool) -> bool:
    """The fast path: the output folder's stamp (generator/write/stamp.py, left by `render --stamp`) proves it is
    what this very render left, so its messages are repeated and nothing is compiled or written. Reads the
    profiles, never parses. `render --check` uses a stamp it finds and writes none (`refresh` is off)."""
    from mpigen.commands.freshness import code_identity, render_key
    from mpigen.load import fingerprint_paths
    from mpigen.write import CACHE_DIR, fresh_stamp

    if not refresh and not (output / CACHE_DIR).is_dir():
        return False  # `render --check` where no stamp was ever kept: nothing to read the profiles for
    code_identity()  # read now, before anything is compiled: the key of this render is of the code it ran
    fingerprint = fingerprint_paths(paths)
    if fingerprint is None:
        return False
    stamp = fresh_stamp(output, render_key(fingerprint, paths, output), refresh=refresh)
    if stamp is None:
        return False
    for note in stamp.notes:
        say(one_line(note), err=True)
    if refresh:
        say(f"{stamp.charts} chart(s) in {one_line(str(output))}: 0 file(s) written, {stamp.files} unchanged, "
            "0 removed")
    else:
        say(f"{one_line(str(output))} is up to date with the profiles")
    return True
