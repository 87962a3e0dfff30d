"""What the commands print of a compile: its diagnostics and totals, the notes on committed runs, and an error
that ends the command (exit 1)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import click

from mpigen.commands.verbosity import say
from mpigen.support.diagnostics import Diagnostic, Severity, one_line

if TYPE_CHECKING:
    from pathlib import Path

    from mpigen.commands.pipeline import CompileResult


def report_result(result: CompileResult) -> None:
    for diagnostic in result.diagnostics:
        if diagnostic.severity is Severity.ERROR:
            click.echo(diagnostic.format(), err=True)
        else:
            say(diagnostic.format(), err=True)  # a warning: left out under --quiet
    errors = sum(1 for d in result.diagnostics if d.severity is Severity.ERROR)
    warnings = len(result.diagnostics) - errors
    if errors:
        click.echo(f"{errors} error(s), {warnings} warning(s) in {result.profile_count} profile file(s); "
                   "nothing was written", err=True)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)


def exit_with_error(message: str) -> NoReturn:
    click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(1)


def continuity_notes(result: CompileResult) -> list[str]:
    """Print (to stderr) and return the warnings about the committed charts and the runs that keep their spec."""
    notes = [f"warning: {one_line(problem)}" for problem in result.notes]
    if result.held:
        releases = sorted({held.release for held in result.held})
        notes.append(f"note: {len(result.held)} run(s) keep the spec they started with (compiled by mpigen "
                     f"{', '.join(releases)}): each one's next run gets this release's; `mpigen diff` shows what")
    for note in notes:
        say(note, err=True)
    return notes


def compiled_or_exit(paths: tuple[Path, ...], cluster: str | None, committed_in: Path | None = None) -> CompileResult:
    """The profiles compiled for a command about one job (explain, verify): its diagnostics reported, exit 1 on an
    error, a usage error for a --cluster no profile names, the notes on committed runs said."""
    from mpigen.commands.arguments import refuse_unknown, selection_of
    from mpigen.commands.pipeline import check_profiles
    from mpigen.commands.verbosity import stage_lines

    result = check_profiles(paths, committed_in=committed_in, progress=stage_lines())
    report_result(result)
    if has_errors(result.diagnostics):
        sys.exit(1)
    assert result.fleet is not None  # a compile that reported no error
    if cluster is not None:
        refuse_unknown(selection_of((cluster,), ()), (c.name for c in result.fleet.clusters), ())
    continuity_notes(result)
    return result
