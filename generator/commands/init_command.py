"""`mpigen init`: a starting fleet written into a new folder."""

from __future__ import annotations

from pathlib import Path

import click

from mpigen.commands.arguments import STDOUT
from mpigen.commands.reporting import exit_with_error
from mpigen.commands.verbosity import say, verbosity_options
from mpigen.support.diagnostics import one_line

BUILTIN_HARDWARE = ("cpu-node", "dgx-1", "dgx-1-32gb", "dgx-2", "dgx-a100", "dgx-h100", "gb200-nvl72")
"""`mpigen init --hardware`: mpigen.load.catalogue.builtin_names() (a test holds them equal), named here so that
reading the options imports nothing of the pipeline."""


@click.command()
@click.argument("folder", type=click.Path())
@click.option("--hardware", type=click.Choice(BUILTIN_HARDWARE), default="dgx-1", show_default=True,
              help="The built-in hardware of the nodes.")
@click.option("--gitops", type=click.Choice(("argocd", "flux", "none")), default="argocd", show_default=True,
              help="The GitOps tool that syncs the charts.")
@verbosity_options
def init(folder: str, hardware: str, gitops: str) -> None:
    """Write a starting fleet into FOLDER that validates and renders as it is; its comments say what to read.

    FOLDER becomes a repository: the profiles in FOLDER/profiles/, and FOLDER/.mpigen.yaml, so that every command
    run in it needs no paths (`cd FOLDER && mpigen render` writes FOLDER/charts/)."""
    import shlex

    from mpigen.commands.scaffold import ScaffoldError, starting_repository, write_new
    from mpigen.write import WriteError

    if folder == STDOUT:
        raise click.UsageError("init writes a folder of files, not a stream: give the folder's name (./- for one "
                               "named -)")
    try:
        written = write_new(Path(folder), starting_repository(hardware, gitops))
    except ScaffoldError as exc:
        raise click.UsageError(str(exc)) from exc
    except WriteError as exc:
        exit_with_error(str(exc))
    for path in written:
        say(f"wrote {one_line(str(path))}")
    here = _is_current_folder(Path(folder))
    enter = "" if here else f"`cd {one_line(shlex.quote(folder))}` and "
    say(f"next: replace the guesses its comments mark, then {enter}run `mpigen validate`, `mpigen render` (into "
        "charts/) and `mpigen check`")


def _is_current_folder(folder: Path) -> bool:
    try:
        return folder.resolve() == Path.cwd().resolve()
    except OSError:
        return False
