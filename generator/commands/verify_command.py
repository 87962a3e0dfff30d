"""`mpigen verify LOG... --job NAME`: judge the logs of a fabric acceptance job against the floors derived from its
hardware. The profiles are compiled as `mpigen explain` compiles them; the job is looked up among the clusters'
acceptance jobs (model/acceptance.py), which `mpigen render` writes into `<cluster>/acceptance/<job>`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mpigen.commands.arguments import profiles_of
from mpigen.commands.completion import complete_clusters
from mpigen.commands.reporting import compiled_or_exit, exit_with_error
from mpigen.commands.verbosity import verbosity_options
from mpigen.support.diagnostics import did_you_mean, printable

if TYPE_CHECKING:
    from mpigen.model import Fleet, Job

OUTPUTS = ("text", "json", "junit")


@click.command()
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--job", "job", required=True, metavar="NAME",
              help="The acceptance job the logs are of (`accept-<pool>-<test>`, as its chart folder is named).")
@click.option("--cluster", "cluster", metavar="NAME", shell_complete=complete_clusters,
              help="The cluster of the job, where several clusters have an acceptance job of that name.")
@click.option("-p", "--profiles", "paths", multiple=True, type=click.Path(path_type=Path),
              help="The profiles the job is compiled from (repeat for several paths; default: the repository "
              "config's profiles, else profiles).")
@click.option("--output", "output", type=click.Choice(OUTPUTS), default="text", show_default=True,
              help="The verdict's format: text, json, or junit (one testsuite per log, one testcase per judgement).")
@verbosity_options
@click.pass_context
def verify(ctx: click.Context, logs: tuple[str, ...], job: str, cluster: str | None, paths: tuple[Path, ...],
           output: str) -> None:
    """Judge the logs of a fabric acceptance job: nccl-tests' table whole, #wrong 0, the ranks on the job's
    workers, bus bandwidth at the largest sizes at the floor its hardware gives; perftest's ib_write_bw at its rail's
    floor, on the rail's device, and ib_read_lat's figures reported.

    LOG: the launcher's log as `kubectl logs` gives it (a file, or - for standard input). Exit 1 on a miss or a log
    that holds nothing to judge."""
    from mpigen.verify import LogError, read_log, verify_logs
    from mpigen.verify.logtext import STDIN
    from mpigen.verify.report import verdict_json, verdict_junit, verdict_text

    if logs.count(STDIN) > 1:
        raise click.UsageError("standard input (-) can be read once: give it as one LOG")
    paths = profiles_of(ctx, paths)
    result = compiled_or_exit(paths, cluster)
    assert result.fleet is not None  # compiled_or_exit exits on an error
    chosen = _acceptance_job(result.fleet, job, cluster, paths)
    try:
        verdict = verify_logs(chosen, [read_log(log, sys.stdin.buffer) for log in logs])
    except LogError as exc:
        exit_with_error(str(exc))
    text = {"text": verdict_text, "json": verdict_json, "junit": verdict_junit}[output](verdict)
    click.echo(printable(text), nl=False)
    if not verdict.passed:
        sys.exit(1)


def _acceptance_job(fleet: Fleet, name: str, cluster: str | None, paths: tuple[Path, ...]) -> Job:
    """The acceptance job named so (on `cluster`); else an error that says what the name is, or the closest names."""
    on = f" on cluster {cluster}" if cluster else ""
    chosen = [job for job in fleet.acceptance if job.name == name and cluster in (None, job.cluster.name)]
    if len(chosen) > 1:
        exit_with_error(f"{len(chosen)} acceptance jobs are named '{name}' (on clusters "
                        f"{', '.join(job.cluster.name for job in chosen)}): give --cluster")
    if chosen:
        return chosen[0]
    real = [job for job in fleet.jobs if job.name == name and cluster in (None, job.cluster.name)]
    if real:
        pools = {(job.cluster.name, job.pool.name) for job in real}
        theirs = [job.name for job in fleet.acceptance if (job.cluster.name, job.pool.name) in pools]
        exit_with_error(f"'{name}' is a job of the fleet, not an acceptance job; "
                        + (f"its acceptance jobs are {', '.join(theirs)}" if theirs else
                           f"its pool{on} has none: the cluster's or the pool's `acceptance` asks for them"))
    hint = did_you_mean(name, [job.name for job in fleet.acceptance if cluster in (None, job.cluster.name)], n=3)
    exit_with_error(f"no acceptance job '{name}'{on} in {', '.join(str(p) for p in paths)}" + (f"; {hint}" if hint else
                    "; a cluster or pool asks for them with `acceptance`"))
