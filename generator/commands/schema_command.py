"""`mpigen schema`: the profile schemas mpigen validates with, for an editor (the `yaml-language-server: $schema=`
line of each profile points at them)."""

from __future__ import annotations

from pathlib import Path

import click

from mpigen.commands.reporting import exit_with_error
from mpigen.commands.verbosity import say, verbosity_options
from mpigen.support.diagnostics import one_line
from mpigen.vocabulary.repository import CONFIG_FILE, EDITOR_SCHEMAS

SCHEMA_KINDS = ("cluster", "hardware", "job")
"""The profile kinds, as `mpigen schema KIND` takes them: mpigen.support.schema_files.KIND_SCHEMA_FILES in lower
case (a test holds them equal), named here so that reading the options imports nothing of the pipeline."""
CONFIG_KIND = "config"
"""`mpigen schema config`: the repository config's (`.mpigen.yaml`)."""


@click.command()
@click.argument("kind", required=False, metavar="[KIND]",
                type=click.Choice((*SCHEMA_KINDS, CONFIG_KIND), case_sensitive=False))
@click.option("--write", "folder", type=click.Path(path_type=Path), metavar="DIR",
              help=f"Write every profile kind's schema and the {CONFIG_FILE} one into DIR (made if missing); replaces "
              "only mpigen's own schemas.")
@verbosity_options
def schema(kind: str | None, folder: Path | None) -> None:
    """Print the JSON Schema of a profile KIND (cluster, hardware or job) or of the repository config (config), or
    write them all into a folder with --write DIR."""
    from mpigen.support.schema_files import CONFIG_SCHEMA_FILE, KIND_SCHEMA_FILES, schema_text

    if (kind is None) == (folder is None):
        raise click.UsageError("give a KIND to print its schema, or --write DIR to write them all (e.g. "
                               f"`mpigen schema --write {EDITOR_SCHEMAS}`)")
    if kind is not None:
        name = CONFIG_SCHEMA_FILE if kind.lower() == CONFIG_KIND else KIND_SCHEMA_FILES[kind.capitalize()]
        click.echo(schema_text(name), nl=False)
        return
    from mpigen.commands.schema_export import write_schemas
    from mpigen.write import WriteError

    assert folder is not None
    try:
        written = write_schemas(folder)
    except WriteError as exc:
        exit_with_error(str(exc))
    for path in written:
        say(f"wrote {one_line(str(path))}")
