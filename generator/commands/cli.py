"""Command line: a thin layer that runs the pipeline and reports its results.

The `mpigen` command starts in generator/__main__.py, which takes charge of Ctrl-C and SIGTERM before this
module (and click, jinja2, jsonschema) is imported. Each command imports the stages it runs when it runs:
`mpigen --help` loads click and nothing of the pipeline, `mpigen validate` nothing of check.

This module is the command group; the commands live beside it, a module for each group of them: compile_commands.py
(validate, render), insight_commands.py (plan, explain), init_command.py, chart_commands.py (check, diff),
schema_command.py, verify_command.py."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from mpigen import __version__
from mpigen.commands.arguments import config_of, config_option
from mpigen.commands.chart_commands import check, diff
from mpigen.commands.compile_commands import render, validate
from mpigen.commands.import_command import import_
from mpigen.commands.init_command import init
from mpigen.commands.insight_commands import explain, plan
from mpigen.commands.schema_command import schema
from mpigen.commands.verbosity import verbosity_options
from mpigen.commands.verify_command import verify
from mpigen.support.diagnostics import printable


@contextmanager
def _escaped_usage_errors() -> Iterator[None]:
    """click's own messages quote what was typed (`Path '...' does not exist`, `no such option`): escaped like every
    other text a command prints from its input, so a path holding a terminal escape reaches the terminal as `\\x1b`."""
    try:
        yield
    except click.ClickException as exc:
        exc.message = printable(exc.message)  # type: ignore[misc]  # Final in click; changed in place, it keeps its class
        raise


class _Commands(click.Group):
    """The command group, its subcommands' argument errors escaped (they are parsed in `invoke`, the group's own in
    `make_context`)."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _escaped_usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _escaped_usage_errors():
            return super().invoke(ctx)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mpigen")
@config_option
@verbosity_options
@click.pass_context
def main(ctx: click.Context, config_path: object) -> None:
    """Compile hardware, cluster and MPI job profiles into Helm charts.

    With no paths, validate, render, plan, explain, check and diff read the profiles and charts the repository's
    .mpigen.yaml names (found here, or inside a git work tree in a folder above up to its root), else profiles/ and
    charts/."""
    if config_path is not None:
        config_of(ctx)  # a config named by --config or MPIGEN_CONFIG is read by every command: one that is wrong ends it


main.add_command(validate)
main.add_command(render)
main.add_command(plan)
main.add_command(explain)
main.add_command(init)
main.add_command(import_)
main.add_command(check)
main.add_command(diff)
main.add_command(schema)
main.add_command(verify)
