"""`mpigen plan` and `mpigen explain`: the fleet's capacity and fit (and its picture), and where each value of
one job comes from."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mpigen.commands.arguments import (
    PATHS,
    PROFILES_OPTION_FORMS,
    STDOUT,
    charts_of,
    default_profiles_or_none,
    filter_options,
    profiles_of,
    refuse_output_beside_profiles,
    refuse_unknown,
    selection_of,
    setting,
)
from mpigen.commands.completion import complete_clusters, complete_jobs, complete_pools
from mpigen.commands.reporting import compiled_or_exit, continuity_notes, exit_with_error, has_errors, report_result
from mpigen.commands.verbosity import say, stage_lines, verbosity_options
from mpigen.support.diagnostics import Severity, one_line, printable

if TYPE_CHECKING:
    from mpigen.commands.pipeline import CompileResult
    from mpigen.insight.plan import FleetPlan
    from mpigen.model import Fleet, Selection
    from mpigen.support.progress import Progress


@click.command()
@PATHS
@click.option("--output", "output", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="The plan's format (a repository may set it: `plan: {output: ...}` in .mpigen.yaml).")
@click.option("--strict/--no-strict", default=False, help="Exit 1 when some job can never run where it is (default: "
              "the repository config's `plan: {strict: ...}`, else not).")
@click.option("--html", "html", type=click.Path(allow_dash=True), metavar="FILE",
              help="Also draw the fleet into FILE: one self-contained page (no scripts, nothing fetched); "
              "- writes it to standard output instead of the plan.")
@click.option("--svg", "svg", type=click.Path(allow_dash=True), metavar="FILE",
              help="Also draw the fleet into FILE as one SVG picture; - writes it to standard output instead of "
              "the plan.")
@click.option("--charts", "charts", type=click.Path(path_type=Path, file_okay=False),
              help="The charts folder whose job charts say what each run is called (where it exists): the names "
              "`mpigen render` keeps (default: the folder render writes).")
@click.option("--context", "context", multiple=True, type=click.Path(path_type=Path, exists=True), metavar="PATH",
              help="Objects exported from the cluster (`kubectl get nodes -o yaml`; a file or folder, repeatable): "
              "each pool's capacity is counted on the live nodes its selector picks that hold its workers, not on "
              "the `nodes` its profile claims.")
@filter_options
@click.option("--pool", "pools", multiple=True, metavar="NAME", shell_complete=complete_pools,
              help="Only this node pool (repeat for more; with --cluster, of those clusters).")
@verbosity_options
@click.pass_context
def plan(ctx: click.Context, paths: tuple[Path, ...], output: str, strict: bool, html: str | None,
         svg: str | None, charts: Path | None, context: tuple[Path, ...], clusters: tuple[str, ...],
         jobs: tuple[str, ...], pools: tuple[str, ...]) -> None:
    """Capacity and fit per cluster and pool: what the nodes offer, what the jobs ask, who waits for whom.

    Reads the profiles only (PATHS: the repository config's profiles, else profiles/). A job that can never run
    where it is (more than its pool or queue can ever hold) is reported with its file:line instead of stopping the
    plan; --strict makes that exit 1. --cluster keeps those clusters, --pool those pools; --job the pools those jobs
    run in, each whole (who waits for whom there depends on every job of it); a picture draws the clusters kept,
    whole. With --context, the nodes exported from the cluster are counted instead of the profiles' claims."""
    paths = profiles_of(ctx, paths)
    output, strict = setting(ctx, "output", output), setting(ctx, "strict", strict)
    pictures = [(target, page) for target, page in ((html, "html"), (svg, "svg")) if target is not None]
    _refuse_two_streams(ctx, html, svg)
    for target, page in pictures:
        if target != STDOUT:
            refuse_output_beside_profiles(paths, Path(target), f"the picture --{page}")
    from mpigen.commands.pipeline import check_profiles
    from mpigen.insight.plan import narrowed, plan_fleet
    from mpigen.insight.report import plan_json, plan_text
    from mpigen.model import Selection
    from mpigen.support.progress import stage

    progress = stage_lines()
    result = check_profiles(paths, set_aside_unfit=True, committed_in=charts_of(ctx, charts, paths), progress=progress)
    report_result(result)
    if has_errors(result.diagnostics):
        sys.exit(1)
    assert result.fleet is not None  # a compile that reported no error
    selection = selection_of(clusters, jobs)
    unfit = [(d.data.get("name"), d.data.get("cluster")) for d, _ in result.unfit]
    refuse_unknown(selection, (c.name for c in result.fleet.clusters),
                   [*((j.name, j.cluster.name) for j in result.fleet.jobs), *unfit])
    _refuse_unknown_pools(pools, [(p.name, c.name) for c in result.fleet.clusters for p in c.pools], selection)
    continuity_notes(result)
    nodes = None
    if context:
        from mpigen.inventory.exports import exported_nodes

        nodes, problems = exported_nodes(list(context))
        refused = [problem for problem in problems if problem.severity is Severity.ERROR]
        if refused:
            exit_with_error(f"{refused[0].format()}; --context takes objects as `kubectl get -o yaml` exports them")
        for problem in problems:  # what was skipped (not an object), said as check says it
            say(problem.format(), err=True)
    with stage(progress, "plan", "cluster(s)", "planning") as planning:
        fleet_plan = drawn_plan = plan_fleet(result.fleet, result.documents, result.unfit, nodes)
        planning.count = len(fleet_plan.clusters)
    if not selection.everything or pools:
        fleet_plan = narrowed(fleet_plan, selection, frozenset(pools))
        kept = frozenset(cluster.name for cluster in fleet_plan.clusters)
        drawn_plan = narrowed(drawn_plan, Selection(clusters=kept))  # a picture draws each cluster's nodes whole
        result.fleet = _of_clusters(result.fleet, kept)
    for target, page in sorted(pictures, key=lambda picture: picture[0] == STDOUT):  # a refused file: no stream
        _write_picture(target, page, result, drawn_plan, paths, progress)
    if STDOUT not in (html, svg):
        click.echo(plan_json(fleet_plan) if output == "json" else printable(plan_text(fleet_plan)), nl=False)
    if strict and fleet_plan.never:
        click.echo(f"{len(fleet_plan.never)} job(s) can never run where they are (--strict)", err=True)
        sys.exit(1)


def _refuse_unknown_pools(pools: tuple[str, ...], known: list[tuple[str, str]], selection: Selection) -> None:
    """A usage error for a --pool no chosen cluster has, with the closest pool names."""
    from mpigen.support.diagnostics import did_you_mean

    there = {pool for pool, cluster in known if selection.has_cluster(cluster)}
    problems = [f"--pool {one_line(pool)}: no such pool; {did_you_mean(pool, there, n=3)}"
                for pool in sorted(set(pools) - there)]
    if problems:
        raise click.UsageError("; ".join(problems))


def _of_clusters(fleet: Fleet, names: frozenset[str]) -> Fleet:
    """The fleet of the clusters `names` only: what a narrowed plan's picture draws."""
    return replace(fleet, clusters=tuple(c for c in fleet.clusters if c.name in names),
                   jobs=tuple(j for j in fleet.jobs if j.cluster.name in names))


def _refuse_two_streams(ctx: click.Context, html: str | None, svg: str | None) -> None:
    """Standard output carries one thing: the plan, or a picture asked for as `-`."""
    if html is not None and html == svg:
        raise click.UsageError(f"--html and --svg both write {one_line(html)}: give each its own file")
    if STDOUT in (html, svg) and ctx.get_parameter_source("output") is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError(f"--{'html' if html == STDOUT else 'svg'} - writes the picture to standard output "
                               "instead of the plan: leave out --output, or write the picture into a file")


def _write_picture(target: str, page: str, result: CompileResult, fleet_plan: FleetPlan,
                   paths: tuple[Path, ...], progress: Progress | None) -> None:
    """The picture into its file by the rule every written file follows (generator/write/target.py), or whole onto
    standard output for `-`."""
    from mpigen.insight.picture import fleet_html, fleet_svg
    from mpigen.support.progress import stage
    from mpigen.write import WriteError
    from mpigen.write.target import write_file

    draw = fleet_html if page == "html" else fleet_svg
    assert result.fleet is not None  # a compile that reported no error
    with stage(progress, "draw", "picture(s)", f"drawing the {page} picture") as drawing:
        data = draw(result.fleet, fleet_plan).encode("utf-8")
        drawing.count = 1
    if target == STDOUT:
        click.echo(data, nl=False)
        return
    try:
        write_file(target, data, inputs=paths)
    except WriteError as exc:
        exit_with_error(str(exc))
    say(f"wrote {one_line(target)}", err=True)


@click.command()
@click.argument("job", shell_complete=complete_jobs)
@click.option("-p", "--profiles", "paths", multiple=True, type=click.Path(path_type=Path),
              help="The profiles the job is compiled with (repeat for several paths; default: the repository "
              "config's profiles, else profiles).")
@click.option("--cluster", "cluster", metavar="NAME", shell_complete=complete_clusters,
              help="The cluster of the job, where jobs of several clusters share its name.")
@click.option("--output", "output", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("--charts", "charts", type=click.Path(path_type=Path, file_okay=False),
              help="The charts folder whose job charts say what each run is called (where it exists): the names "
              "`mpigen render` keeps (default: the folder render writes).")
@verbosity_options
@click.pass_context
def explain(ctx: click.Context, job: str, paths: tuple[Path, ...], cluster: str | None, output: str,
            charts: Path | None) -> None:
    """Every value mpigen derives for JOB (a job's name, or the path of its profile), and where it comes from."""
    from mpigen.insight.explain import explain_job
    from mpigen.insight.report import explain_json, explain_text

    as_file = Path(job)
    if as_file.is_file() and not paths:
        paths = _default_holding(ctx, as_file)
    elif as_file.is_file() and not any(_holds(path, as_file) for path in paths):
        paths = (*paths, as_file)
    paths = profiles_of(ctx, paths)
    result = compiled_or_exit(paths, cluster, charts_of(ctx, charts, paths))
    assert result.fleet is not None  # compiled_or_exit exits on an error
    everyone = (*result.fleet.jobs, *result.fleet.acceptance)  # an acceptance job by its name (no file holds it)
    if as_file.is_file():
        sources = {d.source for d in result.documents if d.kind == "Job" and _same_file(d.path, as_file)}
        chosen = [j for j in result.fleet.jobs if j.source in sources]
    else:
        chosen = [j for j in everyone if j.name == job and cluster in (None, j.cluster.name)]
    if not chosen:
        from mpigen.support.diagnostics import did_you_mean

        hint = did_you_mean(job, [j.name for j in everyone if cluster in (None, j.cluster.name)], n=3)
        on = f" on cluster {cluster}" if cluster else ""
        exit_with_error(f"no job '{job}'{on} in {', '.join(str(p) for p in paths)}" + (f"; {hint}" if hint else ""))
    if len(chosen) > 1:
        exit_with_error(f"{len(chosen)} jobs are named '{job}' (on clusters "
                        f"{', '.join(j.cluster.name for j in chosen)}): give --cluster, or the path of its profile")
    explanation = explain_job(chosen[0], result.documents)
    click.echo(explain_json(explanation) if output == "json" else printable(explain_text(explanation)), nl=False)


def _default_holding(ctx: click.Context, file: Path) -> tuple[Path, ...]:
    """The default profiles with the job's file among them: `explain jobs/x.yaml` compiles the fleet it is part
    of."""
    paths = default_profiles_or_none(ctx, PROFILES_OPTION_FORMS["explain"])
    if paths is None:
        return (file,)
    return paths if any(_holds(path, file) for path in paths) else (*paths, file)


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
