"""What the commands take alike: the profiles paths (the repository config's when none are given), the charts
folder, `-` for standard output, no output beside the profiles, and the `--cluster`/`--job` filters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mpigen.commands.completion import complete_clusters, complete_jobs
from mpigen.support.diagnostics import one_line
from mpigen.vocabulary.repository import CONFIG_ENV, CONFIG_FILE, HELM_ENV

if TYPE_CHECKING:
    from mpigen.commands.repository import ConfigError, RepositoryConfig
    from mpigen.model import Selection

PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
"""Profiles files and folders; none: the repository config's `profiles`, else `profiles` (`profiles_of`)."""
STDOUT = "-"
"""A file argument that names standard output, where a stream is wanted (`plan --html -`); `./-` is a file."""
CONFIG_PATH = "config_path"
"""The group's `--config` parameter (also read by completion, from the root context's params)."""
HELM_DEFAULTS = f"default: ${HELM_ENV}, else the repository config's `helm`, else helm on PATH"
"""Which Helm check and diff run when `--helm` is not given, in the order they are looked for (help texts and
docs say it so)."""
_CONFIG = "mpigen.config"
PROFILES_OPTION_FORMS = {"explain": "explain JOB -p", "verify": "verify LOG --job NAME -p"}
"""How a command that takes its profiles with `-p` is shown given them, in the message of a missing default."""
_Command = TypeVar("_Command", bound=Callable[..., Any])


def config_of(ctx: click.Context) -> RepositoryConfig:
    """The repository config this command runs with, read once (a found one that is not used said so, on stderr);
    one that is wrong ends the command (exit 1)."""
    from mpigen.commands.reporting import exit_with_error
    from mpigen.commands.repository import ConfigError, NoCurrentFolder, load_config
    from mpigen.commands.verbosity import say

    if _CONFIG not in ctx.meta:
        named = ctx.find_root().params.get(CONFIG_PATH)
        try:
            ctx.meta[_CONFIG] = load_config(named)
        except ConfigError as exc:
            refuse_config(ctx, exc)
        except NoCurrentFolder as exc:
            exit_with_error(str(exc))
        for note in ctx.meta[_CONFIG].notes:
            say(f"warning: {one_line(note)}", err=True)
    config: RepositoryConfig = ctx.meta[_CONFIG]
    return config


def refuse_config(ctx: click.Context, error: ConfigError) -> None:
    """A config that cannot be used ends the command before anything is written: each problem at its line, exit 1."""
    for diagnostic in error.diagnostics:
        click.echo(diagnostic.format(), err=True)
    click.echo(f"{len(error.diagnostics)} error(s) in the config file; nothing was written", err=True)
    ctx.exit(1)


def profiles_of(ctx: click.Context, paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """The profiles given, else the config's, else `profiles`; a usage error saying what to give where none is."""
    from mpigen.commands.repository import ConfigError, NoDefault, default_profiles

    if paths:
        return paths
    try:
        command = ctx.info_name or "validate"
        return default_profiles(config_of(ctx), PROFILES_OPTION_FORMS.get(command, command))
    except NoDefault as exc:
        raise click.UsageError(str(exc)) from None
    except ConfigError as exc:
        refuse_config(ctx, exc)
        raise  # not reached: the context exits


def default_profiles_or_none(ctx: click.Context, command: str) -> tuple[Path, ...] | None:
    """The profiles a command would read when given none, or None where there are none to read (check, which needs
    only their charts folder; explain of a job's file); a config naming profiles that do not exist ends it (exit 1)."""
    from mpigen.commands.repository import ConfigError, NoDefault, default_profiles

    try:
        return default_profiles(config_of(ctx), command)
    except NoDefault:
        return None
    except ConfigError as exc:
        refuse_config(ctx, exc)
        raise  # not reached: the context exits


def charts_of(ctx: click.Context, given: Path | None, profiles: tuple[Path, ...]) -> Path:
    """The charts folder given, else the config's, else the clusters' agreed `gitops.path`, else `charts`; a usage
    error where the clusters' paths differ."""
    from mpigen.commands.repository import NoDefault, default_charts

    if given is not None:
        return given
    try:
        return default_charts(config_of(ctx), profiles)
    except NoDefault as exc:
        raise click.UsageError(str(exc)) from None


def setting(ctx: click.Context, name: str, value: Any) -> Any:
    """An option's value: as given on the command line, else the config's for this command (`check: {strict:
    true}`), else the option's own default."""
    if ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None):
        return value
    configured = config_of(ctx).setting(ctx.info_name or "", name)
    return value if configured is None else configured


def config_option(command: _Command) -> _Command:
    return click.option("--config", CONFIG_PATH, type=click.Path(path_type=Path, dir_okay=False), envvar=CONFIG_ENV,
                        metavar="PATH", help=f"The repository config (default: {CONFIG_FILE} here, or inside a git "
                        f"work tree in a folder above up to its root; env {CONFIG_ENV}).")(command)


def filter_options(command: _Command) -> _Command:
    """`--cluster NAME` and `--job NAME`, each repeatable, each completed from the profiles."""
    command = click.option("--job", "jobs", multiple=True, metavar="NAME", shell_complete=complete_jobs,
                           help="Only this job (repeat for more).")(command)
    return click.option("--cluster", "clusters", multiple=True, metavar="NAME", shell_complete=complete_clusters,
                        help="Only this cluster (repeat for more).")(command)


def selection_of(clusters: tuple[str, ...], jobs: tuple[str, ...]) -> Selection:
    from mpigen.model import Selection

    return Selection(frozenset(clusters), frozenset(jobs))


def refuse_unknown(selection: Selection, clusters: Any, jobs: Any) -> None:
    """A usage error naming each filter that names nothing there, with the closest names there are."""
    problems = selection.unknown(clusters, jobs)
    if problems:
        raise click.UsageError("; ".join(problems))


def refuse_output_beside_profiles(paths: tuple[Path, ...], output: Path, what: str = "the output folder") -> None:
    """What a command writes (the charts' folder, a picture) may not be, hold, or sit inside a profiles path: it
    would be read back as profiles by the next run, or overwrite one."""
    from mpigen.write.target import input_relation

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
