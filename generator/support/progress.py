"""Progress of a long command, as results: each stage says what it did and how long it took to a callback the
command line gives (`mpigen -v`), which alone decides what is printed. Nothing below the command line prints."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class StageDone:
    """One stage of a command, finished."""

    stage: str
    """What ran: load, validate, resolve, package, write, render, ..."""
    seconds: float
    count: int
    what: str
    """What `count` counts: "profile file(s)", "chart(s)", ..."""


Progress = Callable[[StageDone], None]


class Stage:
    """A stage under way: `count` and `what` are filled in as it learns them."""

    def __init__(self, name: str, what: str) -> None:
        self.name, self.what, self.count = name, what, 0


@contextmanager
def stage(progress: Progress | None, name: str, what: str) -> Iterator[Stage]:
    """Time the block and, once it ends without an error, give `progress` what it did (nothing without one)."""
    started = time.perf_counter()
    running = Stage(name, what)
    yield running
    if progress is not None:
        progress(StageDone(name, time.perf_counter() - started, running.count, running.what))
