"""Command line: a thin layer that runs the pipeline and reports its results.

The `mpigen` command starts in generator/__main__.py, which takes charge of Ctrl-C and SIGTERM before this
module (and click, jinja2, jsonschema) is imported. Each command imports the stages it runs when it runs:
`mpigen --help` loads click and nothing of the pipeline, `mpigen validate` nothing of check."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from generator import __version__
from generator.support.diagnostics import Diagnostic, Severity, one_line, printable

if TYPE_CHECKING:
    from generator.commands.pipeline import CompileResult
    from generator.commands.upgrade import Upgrade
    from generator.insight.plan import FleetPlan
    from generator.package import Chart

CHECK_FORMATS = ("json", "junit", "sarif", "text")
"""`mpigen check --output`: the keys of generator.check.report.FORMATS (a test holds them equal), named here so
that reading the options imports nothing of check."""

BUILTIN_HARDWARE = ("cpu-node", "dgx-1", "dgx-1-32gb", "dgx-2", "dgx-a100", "dgx-h100")
"""`mpigen init --hardware`: generator.load.catalogue.builtin_names() (a test holds them equal), named here so that
reading the options imports nothing of the pipeline."""

PATHS = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
STDOUT = "-"
"""A file argument that names standard output, where a stream is wanted (`plan --html -`); `./-` is a file."""


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


def _refuse_output_beside_profiles(paths: tuple[Path, ...], output: Path, what: str = "the output folder") -> None:
    """What a command writes (the charts' folder, a picture) may not be, hold, or sit inside a profiles path: it
    would be read back as profiles by the next run, or overwrite one."""
    from generator.write.target import input_relation

    found = input_relation(output, paths)
    if found is None:
        return
    path, relation = found
    if what == "the output folder":
        raise click.UsageError(f"the output folder {one_line(str(output))} {relation} the profiles path "
                               f"{one_line(str(path))}: the charts "
                               "would be read back as profiles; write them beside the profiles, e.g. -o charts")
    raise click.UsageError(f"{what} {one_line(str(output))} {relation} the profiles path {one_line(str(path))}: it "
                           "would overwrite a profile or be read back as one; write it beside the profiles")


def _error(message: str) -> None:
    click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(1)


@contextmanager
def _escaped_usage_errors() -> Iterator[None]:
    """click's own messages quote what was typed (`Path '...' does not exist`, `no such option`): escaped like every
    other text a command prints from its input, so a path holding a terminal escape reaches the terminal as `\\x1b`."""
    try:
        yield
    except click.ClickException as exc:
        exc.message = printable(exc.message)
        raise


class _Commands(click.Group):
    """The command group, its subcommands' argument errors escaped (they are parsed in `invoke`, the group's own in
    `make_context`)."""

    def make_context(self, *args, **kwargs) -> click.Context:  # type: ignore[no-untyped-def]
        with _escaped_usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        with _escaped_usage_errors():
            return super().invoke(ctx)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mpigen")
def main() -> None:
    """Compile hardware, cluster and MPI job profiles into Helm charts."""


@main.command()
@PATHS
def validate(paths: tuple[Path, ...]) -> None:
    """Check profiles: every error of every file, as path:line:col."""
    from generator.commands.pipeline import check_profiles

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
              help="Folder to write the charts into (e.g. charts). Its job charts say what each run is called: a run "
              "whose profiles ask the same of it keeps its name and the spec it started with.")
@click.option("--manifests", is_flag=True,
              help="Print the manifests the charts render to with default values, write nothing (with -o, runs keep "
              "the names the charts there give them).")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 and list every file of OUTPUT that is missing, stale or extra.")
@click.option("--stamp", is_flag=True,
              help="Keep a stamp of this render in OUTPUT/.mpigen-cache (git ignores it), so that the next render "
              "or --check with nothing changed stops at once. Off by default: OUTPUT holds only the charts.")
def render(paths: tuple[Path, ...], output: Path | None, manifests: bool, check_only: bool, stamp: bool) -> None:
    """Compile profiles into Helm charts under OUTPUT/<cluster>/."""
    if output is None and not manifests:
        raise click.UsageError("give -o CHARTS to write charts, or --manifests to print what they render to")
    if manifests:
        _print_manifests(paths, output)
        return
    assert output is not None
    _refuse_output_beside_profiles(paths, output)
    if (stamp or check_only) and _unchanged_since_stamped(paths, output, refresh=stamp and not check_only):
        return
    from generator.commands.freshness import render_key
    from generator.commands.pipeline import compile_profiles, delivery_path_warnings
    from generator.commands.upgrade import is_chart_yaml, upgrade_of
    from generator.package import output_files
    from generator.write import StampRequest, WriteError, compare_tree, write_tree

    result = compile_profiles(paths, committed_in=output)
    _report(result)
    if _fail(result.diagnostics):
        sys.exit(1)
    notes = [diagnostic.format() for diagnostic in result.diagnostics] + _continuity_notes(result)
    for warning in delivery_path_warnings(result.fleet, output):
        notes.append(f"warning: {one_line(warning)}")
        click.echo(notes[-1], err=True)
    files = output_files(result.charts)
    if check_only:
        try:
            diff = compare_tree(output, files, keep_found=is_chart_yaml)
        except WriteError as exc:
            _error(str(exc))
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
            click.echo(f"{one_line(str(output))} is not what the profiles compile to: run `make render` and commit it",
                       err=True)
            sys.exit(1)
        click.echo(f"{one_line(str(output))} is up to date with the profiles")
        return
    request = None
    if stamp and result.fingerprint is not None:
        request = StampRequest(render_key(result.fingerprint, paths, output), len(result.charts), tuple(notes))
    try:
        report = write_tree(output, files, request)
    except WriteError as exc:
        _error(str(exc))
    click.echo(f"{len(result.charts)} chart(s) in {one_line(str(output))}: {len(report.written)} file(s) written, "
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
    click.echo(f"  what differs in them comes with the {change}, unless a profile changed too: CHANGELOG.md says what "
               "each release changes in compiled output", err=True)
    if not upgrade.renamed:
        click.echo("  no run is renamed", err=True)
        return
    click.echo(f"  {len(upgrade.renamed)} run(s) renamed (a GitOps sync deletes the running job and starts the new "
               "run):", err=True)
    for run in upgrade.renamed:
        click.echo(f"    {one_line(run.chart)}: {one_line(run.old)} -> {one_line(run.new)}", err=True)


def _print_manifests(paths: tuple[Path, ...], output: Path | None) -> None:
    from generator.commands.pipeline import compile_profiles
    from generator.package.stream import manifest_stream

    result = compile_profiles(paths, committed_in=output)
    _report(result)
    if _fail(result.diagnostics):
        sys.exit(1)
    _continuity_notes(result)
    click.echo(manifest_stream(result.charts), nl=False)


def _continuity_notes(result: CompileResult) -> list[str]:
    """Print (to stderr) and return the warnings about the committed charts and the runs that keep their spec."""
    notes = [f"warning: {one_line(problem)}" for problem in result.notes]
    if result.held:
        releases = sorted({held.release for held in result.held})
        notes.append(f"note: {len(result.held)} run(s) keep the spec they started with (compiled by mpigen "
                     f"{', '.join(releases)}): each one's next run gets this release's; `mpigen diff` shows what")
    for note in notes:
        click.echo(note, err=True)
    return notes


def _unchanged_since_stamped(paths: tuple[Path, ...], output: Path, refresh: bool) -> bool:
    """The fast path: the output folder's stamp (generator/write/stamp.py, left by `render --stamp`) proves it is
    what this very render left, so its messages are repeated and nothing is compiled or written. Reads the
    profiles, never parses. `render --check` uses a stamp it finds and writes none (`refresh` is off)."""
    from generator.commands.freshness import code_identity, render_key
    from generator.load import fingerprint_paths
    from generator.write import CACHE_DIR, fresh_stamp

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
        click.echo(one_line(note), err=True)
    if refresh:
        click.echo(f"{stamp.charts} chart(s) in {one_line(str(output))}: 0 file(s) written, {stamp.files} unchanged, "
                   "0 removed")
    else:
        click.echo(f"{one_line(str(output))} is up to date with the profiles")
    return True


@main.command()
@PATHS
@click.option("--output", "output", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Exit 1 when some job can never run where it is.")
@click.option("--html", "html", type=click.Path(allow_dash=True), metavar="FILE",
              help="Also draw the fleet into FILE: one self-contained page (no scripts, nothing fetched); "
              "- writes it to standard output instead of the plan.")
@click.option("--svg", "svg", type=click.Path(allow_dash=True), metavar="FILE",
              help="Also draw the fleet into FILE as one SVG picture; - writes it to standard output instead of "
              "the plan.")
@click.option("--charts", "charts", type=click.Path(path_type=Path, file_okay=False), default=Path("charts"),
              show_default=True, help="The charts folder whose job charts say what each run is called (where it "
              "exists): the names `mpigen render -o` keeps.")
@click.pass_context
def plan(ctx: click.Context, paths: tuple[Path, ...], output: str, strict: bool, html: str | None,
         svg: str | None, charts: Path) -> None:
    """Capacity and fit per cluster and pool: what the nodes offer, what the jobs ask, who waits for whom.

    Reads the profiles only. A job that can never run where it is (more than its pool or queue can ever hold) is
    reported with its file:line instead of stopping the plan; --strict makes that exit 1."""
    pictures = [(target, page) for target, page in ((html, "html"), (svg, "svg")) if target is not None]
    _refuse_two_streams(ctx, html, svg)
    for target, page in pictures:
        if target != STDOUT:
            _refuse_output_beside_profiles(paths, Path(target), f"the picture --{page}")
    from generator.commands.pipeline import check_profiles
    from generator.insight.plan import plan_fleet
    from generator.insight.report import plan_json, plan_text

    result = check_profiles(paths, set_aside_unfit=True, committed_in=charts)
    _report(result)
    if _fail(result.diagnostics):
        sys.exit(1)
    _continuity_notes(result)
    fleet_plan = plan_fleet(result.fleet, result.documents, result.unfit)
    for target, page in sorted(pictures, key=lambda picture: picture[0] == STDOUT):  # a refused file: no stream
        _write_picture(target, page, result, fleet_plan, paths)
    if STDOUT not in (html, svg):
        click.echo(plan_json(fleet_plan) if output == "json" else printable(plan_text(fleet_plan)), nl=False)
    if strict and fleet_plan.never:
        click.echo(f"{len(fleet_plan.never)} job(s) can never run where they are (--strict)", err=True)
        sys.exit(1)


def _refuse_two_streams(ctx: click.Context, html: str | None, svg: str | None) -> None:
    """Standard output carries one thing: the plan, or a picture asked for as `-`."""
    if html is not None and html == svg:
        raise click.UsageError(f"--html and --svg both write {one_line(html)}: give each its own file")
    if STDOUT in (html, svg) and ctx.get_parameter_source("output") is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError(f"--{'html' if html == STDOUT else 'svg'} - writes the picture to standard output "
                               "instead of the plan: leave out --output, or write the picture into a file")


def _write_picture(target: str, page: str, result: CompileResult, fleet_plan: FleetPlan,
                   paths: tuple[Path, ...]) -> None:
    """The picture into its file by the rule every written file follows (generator/write/target.py), or whole onto
    standard output for `-`."""
    from generator.insight.picture import fleet_html, fleet_svg
    from generator.write import WriteError
    from generator.write.target import write_file

    draw = fleet_html if page == "html" else fleet_svg
    data = draw(result.fleet, fleet_plan).encode("utf-8")
    if target == STDOUT:
        click.echo(data, nl=False)
        return
    try:
        write_file(target, data, inputs=paths)
    except WriteError as exc:
        _error(str(exc))
    click.echo(f"wrote {one_line(target)}", err=True)


@main.command()
@click.argument("job")
@click.option("-p", "--profiles", "paths", multiple=True, type=click.Path(path_type=Path), default=("profiles",),
              show_default=True, help="The profiles the job is compiled with (repeat for several paths).")
@click.option("--output", "output", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("--charts", "charts", type=click.Path(path_type=Path, file_okay=False), default=Path("charts"),
              show_default=True, help="The charts folder whose job charts say what each run is called (where it "
              "exists): the names `mpigen render -o` keeps.")
def explain(job: str, paths: tuple[Path, ...], output: str, charts: Path) -> None:
    """Every value mpigen derives for JOB (a job's name, or the path of its profile), and where it comes from."""
    from generator.commands.pipeline import check_profiles
    from generator.insight.explain import explain_job
    from generator.insight.report import explain_json, explain_text

    as_file = Path(job)
    if as_file.is_file() and not any(_holds(path, as_file) for path in paths):
        paths = (*paths, as_file)
    result = check_profiles(paths, committed_in=charts)
    _report(result)
    if _fail(result.diagnostics):
        sys.exit(1)
    _continuity_notes(result)
    if as_file.is_file():
        sources = {d.source for d in result.documents if d.kind == "Job" and _same_file(d.path, as_file)}
        chosen = [j for j in result.fleet.jobs if j.source in sources]
    else:
        chosen = [j for j in result.fleet.jobs if j.name == job]
    if not chosen:
        from generator.support.diagnostics import did_you_mean

        hint = did_you_mean(job, [j.name for j in result.fleet.jobs])
        _error(f"no job '{job}' in {', '.join(str(p) for p in paths)}" + (f"; {hint}" if hint else ""))
    if len(chosen) > 1:
        _error(f"{len(chosen)} jobs are named '{job}' (on clusters "
               f"{', '.join(j.cluster.name for j in chosen)}): give the path of its profile instead")
    explanation = explain_job(chosen[0], result.documents)
    click.echo(explain_json(explanation) if output == "json" else printable(explain_text(explanation)), nl=False)


def _holds(folder: Path, file: Path) -> bool:
    try:
        return file.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


def _same_file(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


@main.command()
@click.argument("folder", type=click.Path())
@click.option("--hardware", type=click.Choice(BUILTIN_HARDWARE), default="dgx-1", show_default=True,
              help="The built-in hardware of the nodes.")
@click.option("--gitops", type=click.Choice(("argocd", "flux", "none")), default="argocd", show_default=True,
              help="The GitOps tool that syncs the charts.")
def init(folder: str, hardware: str, gitops: str) -> None:
    """Write a starting fleet into FOLDER that validates and renders as it is; its comments say what to read."""
    from generator.commands.scaffold import ScaffoldError, starting_fleet, write_new
    from generator.write import WriteError

    if folder == STDOUT:
        raise click.UsageError("init writes a folder of files, not a stream: give the folder's name (./- for one "
                               "named -)")
    try:
        written = write_new(Path(folder), starting_fleet(hardware, gitops))
    except ScaffoldError as exc:
        raise click.UsageError(str(exc)) from exc
    except WriteError as exc:
        _error(str(exc))
    for path in written:
        click.echo(f"wrote {one_line(str(path))}")
    click.echo(f"next: replace the guesses its comments mark, then `mpigen validate {one_line(folder)}` and "
               f"`mpigen render {one_line(folder)} -o charts`")


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@click.option("--helm", "helm", metavar="PATH", help="Helm binary to lint and render with (default: helm on PATH).")
@click.option("--no-helm", is_flag=True, help="Render charts mpigen compiled with mpigen itself, even if helm is there.")
@click.option("--kube-version", metavar="1.N", help="Kubernetes version to validate built-in kinds for "
              "(default: the chart's cluster profile, else the newest bundled).")
@click.option("--crds", "crds", multiple=True, type=click.Path(path_type=Path, exists=True), metavar="DIR",
              help="CRD YAML files or folders adding schemas; other objects there (e.g. NADs) count as existing.")
@click.option("--context", "context", multiple=True, type=click.Path(path_type=Path, exists=True), metavar="PATH",
              help="Charts or manifests that exist beside the checked ones (e.g. the infra chart with the NADs): "
              "rendered and counted as existing, not judged.")
@click.option("--cluster", "clusters", multiple=True, metavar="NAME=PATH",
              help="The manifests under PATH are objects of cluster NAME: rules compare objects of one cluster only "
              "(charts mpigen compiled say their own cluster).")
@click.option("--strict", is_flag=True, help="A kind with no schema is an error, not a warning.")
@click.option("--output", "output", type=click.Choice(CHECK_FORMATS), default="text", show_default=True)
def check(paths: tuple[Path, ...], helm: str | None, no_helm: bool, kube_version: str | None,
          crds: tuple[Path, ...], context: tuple[Path, ...], clusters: tuple[str, ...], strict: bool,
          output: str) -> None:
    """Check charts and manifests as the cluster will judge them: exit 0 clean, 1 findings, 2 usage."""
    from generator.check import CheckOptions, CheckUsageError, run_check
    from generator.check.report import FORMATS
    from generator.vocabulary.kubernetes import dns1035_label_problems

    if kube_version is not None and not re.fullmatch(r"v?1\.[0-9]+(\.[0-9]+)?", kube_version):
        raise click.BadParameter("write it like 1.31 or 1.31.4", param_hint="--kube-version")
    groups = []
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
    options = CheckOptions(helm=helm, use_helm=not no_helm, kube_version=kube_version.lstrip("v") if kube_version
                           else None, crds=crds, context=context, strict=strict, clusters=tuple(groups))
    try:
        report = run_check(list(paths), options)
    except CheckUsageError as exc:
        raise click.UsageError(one_line(str(exc))) from exc
    for note in report.notes:
        click.echo(one_line(note), err=True)
    click.echo(FORMATS[output](report), nl=False)
    if report.errors:
        sys.exit(1)


@main.command()
@PATHS
@click.option("-o", "--output", "output", type=click.Path(path_type=Path, file_okay=False), default=Path("charts"),
              show_default=True, help="The charts folder to compare with.")
@click.option("--against", "revision", metavar="REF", help="Compare with the charts as committed at this git revision "
              "(e.g. origin/main) instead of as they are on disk.")
@click.option("--helm", "helm", metavar="PATH", help="Helm for charts mpigen did not compile (default: helm on PATH).")
@click.option("--format", "output_format", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="json: the actions, notes, changes and problems as one JSON document (-o names the charts folder).")
@click.option("--exit-code", is_flag=True, help="Exit 1 when anything differs.")
def diff(paths: tuple[Path, ...], output: Path, revision: str | None, helm: str | None, output_format: str,
         exit_code: bool) -> None:
    """Show, per cluster and chart, object by object, how the profiles' manifests differ from the charts and their
    GitOps bootstrap files; changes that need a person come first, as action lines."""
    from generator.check.helm import find_helm
    from generator.commands.pipeline import compile_profiles
    from generator.diff import DiffError, as_json, as_text, diff_against

    _refuse_output_beside_profiles(paths, output)

    def compile_with(committed: Path) -> tuple[list[Chart], list[str]]:
        result = compile_profiles(paths, committed_in=committed)
        _report(result)
        if _fail(result.diagnostics):
            sys.exit(1)
        return result.charts, result.notes

    try:
        report = diff_against(output, compile_with, revision, find_helm(helm))
    except DiffError as exc:
        raise click.UsageError(one_line(str(exc))) from exc
    for problem in report.problems:
        click.echo(f"warning: {one_line(problem)}", err=True)
    click.echo(as_json(report) if output_format == "json" else as_text(report), nl=False)
    click.echo(report.summary(), err=True)
    if exit_code and report.units:
        sys.exit(1)
