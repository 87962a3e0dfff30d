"""The line a terminal sees while a long command works: what it is doing and how far it is ("mpigen: compiling
charts 340/1050"), on stderr, rewritten in place and cleared when each stage ends, so that what the command prints
afterwards is exactly what it prints without it. Shown only where stderr is a terminal, and only once the command
has run PROGRESS_AFTER seconds (a quick command shows nothing); redrawn at most every REDRAW_EVERY seconds, so
counting costs nothing a run would notice. Cleared with spaces, not an escape: any terminal rewinds a line."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

from mpigen.support.progress import Stage, StageDone

PROGRESS_AFTER_ENV = "MPIGEN_PROGRESS_AFTER"
"""Seconds a command runs before its progress line shows (default PROGRESS_AFTER); 0 shows it at once (tests)."""
PROGRESS_AFTER = 2.0
REDRAW_EVERY = 0.1
"""At most ten redraws a second: a terminal that scrolls a thousand a second slows the command it shows."""
PREFIX = "mpigen: "


def progress_after() -> float:
    """PROGRESS_AFTER_ENV's seconds where it holds a number of them, else PROGRESS_AFTER."""
    try:
        return max(0.0, float(os.environ.get(PROGRESS_AFTER_ENV, PROGRESS_AFTER)))
    except ValueError:
        return PROGRESS_AFTER


class ProgressLine:
    """One line on `stream` (a terminal), drawn once the command has run `after` seconds (by `clock`), as stages
    begin and advance, and cleared as they end (`Progress`, generator/support/progress.py)."""

    def __init__(self, stream: TextIO, after: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream, self._clock = stream, clock
        self._show_from = clock() + after
        self._drawn_at: float | None = None
        self._shown = 0
        """How many characters the line now holds: what a redraw or the clearing has to cover."""

    def began(self, stage: Stage) -> None:
        self._draw(stage, at_once=True)

    def advanced(self, stage: Stage) -> None:
        self._draw(stage, at_once=False)

    def ended(self, stage: Stage, done: StageDone | None) -> None:
        self.clear()

    def clear(self) -> None:
        if self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def _draw(self, stage: Stage, at_once: bool) -> None:
        now = self._clock()
        if now < self._show_from or (not at_once and self._drawn_at is not None and now - self._drawn_at < REDRAW_EVERY):
            return
        self._drawn_at = now
        text = f"{PREFIX}{stage.doing}" + (f" {stage.done}/{stage.total}" if stage.total else "")
        text = text[:max(self._columns() - 1, len(PREFIX))]  # a line that wraps cannot be rewound
        pad = self._shown - len(text)
        self._shown = max(self._shown, len(text))  # first: a signal inside the write still finds the line to clear
        self._write("\r" + text + " " * pad)

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self._stream.fileno()).columns or 80
        except (OSError, ValueError):
            return 80

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # a terminal gone: the command goes on without its line
            self._shown = 0
