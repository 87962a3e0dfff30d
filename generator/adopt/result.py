"""What an import hands the command: profile texts to write and lines to say, as data (nothing here writes or prints)."""

from __future__ import annotations

from dataclasses import dataclass


class AdoptionError(Exception):
    """Input an import cannot turn into profiles: one line, naming the file (and line, where known), what is wrong
    and how to fix it. Nothing is written."""


@dataclass(frozen=True)
class ProfileText:
    """One profile to write: its kind (`Hardware`, `Cluster`, `Job`), its name, and its YAML text, comments included.
    Where it goes under the profiles folder follows from kind and name (the layout `mpigen init` writes)."""

    kind: str
    name: str
    text: str


@dataclass(frozen=True)
class Adoption:
    """The profiles an import wrote from its input, and what it has to say about it: objects skipped (and why), facts
    the input did not hold (left as marked guesses), what mpigen will do differently from an adopted job."""

    profiles: tuple[ProfileText, ...] = ()
    notes: tuple[str, ...] = ()
