"""Shell completion of job, cluster and pool names, read from the profiles the command would read (those already
on the command line, else the repository config's, else `profiles`) at a glance (generator/load/glance.py). A
completion never prints an error: profiles or a config that cannot be read complete nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.shell_completion import CompletionItem

if TYPE_CHECKING:
    from mpigen.load.glance import FleetGlance


def _given_profiles(ctx: click.Context) -> tuple[Path, ...]:
    """The profiles paths typed so far. Where the word being completed is an option's value (`--cluster `), click
    stops parsing at that option and leaves the PATHS typed before it unparsed, in `ctx.args`."""
    if ctx.info_name == "check":
        return ()  # check's paths are charts
    given = ctx.params.get("paths") or ()
    if not given and any(isinstance(p, click.Argument) and p.name == "paths" for p in ctx.command.params):
        given = tuple(arg for arg in ctx.args if not arg.startswith("-"))
    return tuple(Path(path) for path in given)


def _fleet(ctx: click.Context, kinds: frozenset[str]) -> FleetGlance | None:
    from mpigen.commands.arguments import CONFIG_PATH
    from mpigen.commands.repository import default_profiles, load_config
    from mpigen.load.glance import glance

    paths = _given_profiles(ctx) or default_profiles(load_config(ctx.find_root().params.get(CONFIG_PATH)),
                                                     ctx.info_name or "")
    return glance(paths, kinds)


def _names(pick: Callable[[FleetGlance, click.Context], list[str]],
           kinds: frozenset[str]) -> Callable[..., list[CompletionItem]]:
    """A click `shell_complete` giving the names `pick` takes from the fleet (its profiles of `kinds`, the only ones
    parsed) that start with what was typed."""
    def complete(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        try:
            fleet = _fleet(ctx, kinds)
            names = pick(fleet, ctx) if fleet is not None else []
        except Exception:  # a completion says nothing of what it cannot read: the command itself will
            return []
        return [CompletionItem(name) for name in sorted(set(names)) if name.startswith(incomplete)]

    return complete


def _chosen_clusters(ctx: click.Context) -> set[str]:
    return {value for value in ctx.params.get("clusters") or () if "=" not in value}


def _clusters(fleet: FleetGlance, _ctx: click.Context) -> list[str]:
    return [cluster.name for cluster in fleet.clusters]


def _jobs(fleet: FleetGlance, ctx: click.Context) -> list[str]:
    """Job names, those of the clusters already chosen with --cluster where some are."""
    chosen = _chosen_clusters(ctx)
    return [job.name for job in fleet.jobs if not chosen or job.cluster in chosen]


def _pools(fleet: FleetGlance, ctx: click.Context) -> list[str]:
    chosen = _chosen_clusters(ctx)
    return [pool for cluster in fleet.clusters if not chosen or cluster.name in chosen for pool in cluster.pools]


_CLUSTERS = frozenset({"Cluster"})
complete_clusters = _names(_clusters, _CLUSTERS)
complete_jobs = _names(_jobs, frozenset({"Job"}))
complete_pools = _names(_pools, _CLUSTERS)
