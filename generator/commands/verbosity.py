"""How much a command says: `-q/--quiet` errors only; `-v/--verbose` also each stage that ran, how long it took and
how many files it handled. Either goes before the command (`mpigen -v render`) or after it (`mpigen render -v`), as
click users write both. What a command prints as its product (the manifests, a plan, a check report) is printed
whatever the level; the level governs what is said about the work, always on stderr. Unless quiet, a long command
on a terminal also shows how far it is (progress_line.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from mpigen.commands.progress_line import ProgressLine, progress_after
from mpigen.support.diagnostics import one_line
from mpigen.support.progress import Progress, Stage, StageDone

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
    """What hears the stages of the command: under --verbose it prints each stage as it ends, and where stderr is a
    terminal (and not --quiet) it keeps the progress line; None where nothing is to be said (the stages then are
    neither timed nor counted)."""
    verbose = level() >= VERBOSE
    line = ProgressLine(sys.stderr, progress_after()) if level() > QUIET and _is_terminal(sys.stderr) else None
    if line is None and not verbose:
        return None
    return _Told(line, verbose)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no stream, or one closed
        return False


class _Told:
    """The progress line (if any) and, under --verbose, a line per stage as it ends, printed once the progress line is
    cleared."""

    def __init__(self, line: ProgressLine | None, verbose: bool) -> None:
        self._line, self._verbose = line, verbose

    def began(self, stage: Stage) -> None:
        if self._line is not None:
            self._line.began(stage)

    def advanced(self, stage: Stage) -> None:
        if self._line is not None:
            self._line.advanced(stage)

    def ended(self, stage: Stage, done: StageDone | None) -> None:
        if self._line is not None:
            self._line.ended(stage, done)
        if self._verbose and done is not None:
            click.echo(f"mpigen: {one_line(done.stage)}: {done.count} {one_line(done.what)} in {done.seconds:.2f} s",
                       err=True)
