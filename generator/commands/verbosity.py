"""How much a command says: `-q/--quiet` errors only; `-v/--verbose` also each stage that ran, how long it took and
how many files it handled. Either goes before the command (`mpigen -v render`) or after it (`mpigen render -v`), as
click users write both. What a command prints as its product (the manifests, a plan, a check report) is printed
whatever the level; the level governs what is said about the work, always on stderr."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from mpigen.support.diagnostics import one_line
from mpigen.support.progress import Progress, StageDone

QUIET, NORMAL, VERBOSE = 0, 1, 2
_KEY = "mpigen.verbosity"
_Command = TypeVar("_Command", bound=Callable[..., Any])


def _set(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """Record the level in the context chain's shared `meta`, where the group's and the command's options meet."""
    if value and not ctx.resilient_parsing:
        wanted = QUIET if param.name == "quiet" else VERBOSE
        if ctx.meta.get(_KEY, wanted) != wanted:
            raise click.UsageError("--quiet and --verbose ask for opposite things: give one of them")
        ctx.meta[_KEY] = wanted
    return value


def verbosity_options(command: _Command) -> _Command:
    """`-q/--quiet` and `-v/--verbose`, on the group and on each command."""
    command = click.option("-v", "--verbose", "verbose", is_flag=True, expose_value=False, callback=_set,
                           help="Also say, on stderr, which stage ran, how long it took and how many files it "
                           "handled (also before the command: mpigen -v render).")(command)
    return click.option("-q", "--quiet", "quiet", is_flag=True, expose_value=False, callback=_set,
                        help="Say nothing but errors: no summary, notes or warnings (the exit code still tells).")(command)


def level() -> int:
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_KEY, NORMAL) if ctx is not None else NORMAL


def say(message: str, err: bool = False) -> None:
    """A line about the work (a summary, a note, a warning): left out under --quiet."""
    if level() > QUIET:
        click.echo(message, err=err)


def stage_lines() -> Progress | None:
    """Under --verbose, what prints each stage as it ends (to stderr); else None, and the stages are not timed."""
    if level() < VERBOSE:
        return None

    def tell(done: StageDone) -> None:
        click.echo(f"mpigen: {one_line(done.stage)}: {done.count} {one_line(done.what)} in {done.seconds:.2f} s",
                   err=True)

    return tell
