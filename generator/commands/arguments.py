"""What the commands take alike: the profiles paths, `-` for standard output, and no output beside the profiles."""

from __future__ import annotations

from pathlib import Path

import click

from mpigen.support.diagnostics import one_line

PATHS = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
STDOUT = "-"
"""A file argument that names standard output, where a stream is wanted (`plan --html -`); `./-` is a file."""


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
