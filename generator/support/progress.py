"""Progress of a long command, as results: each stage says when it begins, how far it is (items done of how many)
and what it did and how long it took when it ends, to a `Progress` the command line gives (the stage lines of
`mpigen -v`, the line a terminal sees rewritten in place), which alone decides what is printed. Nothing below the
command line prints."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar

Item = TypeVar("Item")


@dataclass(frozen=True)
class StageDone:
    """One stage of a command, finished."""

    stage: str
    """What ran: load, validate, resolve, package, write, render, ..."""
    seconds: float
    count: int
    what: str
    """What `count` counts: "profile file(s)", "chart(s)", ..."""


Tally = Callable[[int, int], None]
"""Told `done` of `total` items so far by work that goes item by item (generator/support/parallel.py, the writes
of an output folder): called in this process only, as results come back, never from a child."""


TALLY_EVERY = 32
"""`tallied` tells its tally once every this many items by default: cheap beside writing a file, and often enough."""


def tallied(items: Iterable[Item], total: int, tally: Tally | None, every: int = TALLY_EVERY) -> Iterator[Item]:
    """Each of `items` (`total` of them), `tally` told how many are done (handled by the loop that takes them) every
    `every` items and once all are."""
    if tally is None:
        yield from items
        return
    for done, item in enumerate(items, 1):
        yield item
        if done % every == 0:
            tally(done, total)
    tally(total, total)


class Stage:
    """A stage under way: `count` and `what` are filled in as it learns them, `done` of `total` as its work
    tells (`tally`)."""

    def __init__(self, name: str, what: str, doing: str, progress: Progress | None) -> None:
        self.name, self.what, self.doing, self.count = name, what, doing, 0
        self.done, self.total = 0, 0
        self._progress = progress

    @property
    def tally(self) -> Tally | None:
        """What the stage's work calls as items are done; None where nobody listens (work then goes in one go)."""
        return self._advance if self._progress is not None else None

    def _advance(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if self._progress is not None:
            self._progress.advanced(self)


class Progress(Protocol):
    """Hears how a command goes, stage by stage; what it shows of that is the command line's to choose."""

    def began(self, stage: Stage) -> None:
        """`stage` has begun (`stage.doing` says what it does: "compiling charts")."""

    def advanced(self, stage: Stage) -> None:
        """`stage.done` of `stage.total` items are done: called as often as items finish, so keep it cheap."""

    def ended(self, stage: Stage, done: StageDone | None) -> None:
        """`stage` is over: what it did and how long it took, or None where an error or a signal cut it short."""


@contextmanager
def stage(progress: Progress | None, name: str, what: str, doing: str) -> Iterator[Stage]:
    """Time the block, telling `progress` (where there is one) that it began and, once it ends, what it did; a
    stage cut short by an exception is told as ended with None. `doing` says what it does while under way."""
    started = time.perf_counter()
    running = Stage(name, what, doing, progress)
    if progress is None:
        yield running
        return
    finished = False
    try:  # a signal may land inside `began` (its line drawn, half drawn): `ended` still clears it
        progress.began(running)
        yield running
        finished = True
    finally:
        progress.ended(running, StageDone(name, time.perf_counter() - started, running.count, running.what)
                       if finished else None)
