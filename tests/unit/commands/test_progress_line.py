"""generator/commands/progress_line.py: the terminal's progress line, drawn on a stream and a clock of the test's own:
nothing before its time, at most REDRAW_EVERY seconds apart, each redraw covering the last, cleared to blanks, never
wider than the terminal. The real command on a real terminal: tests/acceptance/test_cli_progress.py."""

from __future__ import annotations

import io

import pytest

from mpigen.commands import progress_line
from mpigen.commands.progress_line import PROGRESS_AFTER, REDRAW_EVERY, ProgressLine, progress_after
from mpigen.support.progress import Stage, StageDone


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def line(after: float = 0.0) -> tuple[ProgressLine, io.StringIO, Clock]:
    stream, clock = io.StringIO(), Clock()
    return ProgressLine(stream, after, clock), stream, clock


def stage(doing: str = "compiling charts") -> Stage:
    return Stage("package", "chart(s)", doing, None)


def test_a_stage_is_drawn_with_its_count_redrawn_over_itself_and_cleared():
    shown, stream, clock = line()
    running = stage()
    shown.began(running)
    running.done, running.total = 340, 1050
    clock.now += 2 * REDRAW_EVERY
    shown.advanced(running)
    shown.ended(running, StageDone("package", 1.0, 1050, "chart(s)"))
    drawn = "mpigen: compiling charts 340/1050"
    assert stream.getvalue() == "\rmpigen: compiling charts" + f"\r{drawn}" + "\r" + " " * len(drawn) + "\r"


def test_a_shorter_line_covers_the_longer_one_before_it():
    shown, stream, _ = line()
    shown.began(stage("checking documents"))
    shown.began(stage("rules"))
    assert stream.getvalue() == "\rmpigen: checking documents" + "\rmpigen: rules" + " " * len("checking documents"[5:])


def test_nothing_is_drawn_before_its_time_or_more_often_than_ten_times_a_second():
    shown, stream, clock = line(after=PROGRESS_AFTER)
    running = stage()
    shown.began(running)
    running.total = 1000
    for _ in range(20):  # within the first two seconds: nothing
        clock.now += 0.05
        running.done += 1
        shown.advanced(running)
    assert stream.getvalue() == ""
    clock.now += 1.0
    draws = 0
    for _ in range(100):  # a count every 10 ms for a second: at most a draw per REDRAW_EVERY
        clock.now += 0.01
        running.done += 1
        before = stream.getvalue()
        shown.advanced(running)
        draws += stream.getvalue() != before
    assert 1 <= draws <= 11
    longest = max(len(drawn) for drawn in stream.getvalue().split("\r"))
    shown.ended(running, None)  # cut short: cleared all the same
    assert stream.getvalue().endswith("\r" + " " * longest + "\r")


def test_ending_a_stage_that_never_showed_writes_nothing():
    shown, stream, _ = line(after=60)
    running = stage()
    shown.began(running)
    shown.ended(running, None)
    assert stream.getvalue() == ""


def test_a_line_is_cut_to_the_terminal_width(monkeypatch):
    monkeypatch.setattr(ProgressLine, "_columns", lambda self: 20)
    shown, stream, _ = line()
    shown.began(stage("validating a great many profiles"))
    assert stream.getvalue() == "\r" + "mpigen: validating a great many profiles"[:19]


@pytest.mark.parametrize(("given", "seconds"), [(None, PROGRESS_AFTER), ("0", 0.0), ("0.5", 0.5), ("-3", 0.0),
                                                ("soon", PROGRESS_AFTER)])
def test_the_wait_before_the_line_comes_from_the_environment(monkeypatch, given, seconds):
    if given is None:
        monkeypatch.delenv(progress_line.PROGRESS_AFTER_ENV, raising=False)
    else:
        monkeypatch.setenv(progress_line.PROGRESS_AFTER_ENV, given)
    assert progress_after() == seconds
