"""generator/support/progress.py: a stage tells what hears it that it began, how far it is, and how it ended (None
when an error cut it short, so a terminal's line is cleared all the same); without a listener nothing is counted."""

from __future__ import annotations

import pytest

from mpigen.support.progress import TALLY_EVERY, Stage, StageDone, stage, tallied


class Heard:
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def began(self, running: Stage) -> None:
        self.events.append(("began", running.doing))

    def advanced(self, running: Stage) -> None:
        self.events.append(("advanced", (running.done, running.total)))

    def ended(self, running: Stage, done: StageDone | None) -> None:
        self.events.append(("ended", None if done is None else (done.stage, done.count, done.what)))


def test_a_stage_tells_its_beginning_its_counts_and_its_end():
    heard = Heard()
    with stage(heard, "package", "chart(s)", "compiling charts") as packaging:
        assert packaging.tally is not None
        packaging.tally(3, 10)
        packaging.tally(10, 10)
        packaging.count = 10
    assert heard.events == [("began", "compiling charts"), ("advanced", (3, 10)), ("advanced", (10, 10)),
                            ("ended", ("package", 10, "chart(s)"))]


def test_a_stage_an_error_cuts_short_is_told_as_ended_with_none():
    heard = Heard()
    with pytest.raises(KeyboardInterrupt), stage(heard, "write", "file(s) written", "writing files"):
        raise KeyboardInterrupt
    assert heard.events == [("began", "writing files"), ("ended", None)]


def test_without_a_listener_nothing_is_counted():
    with stage(None, "load", "profile file(s)", "loading profiles") as loading:
        assert loading.tally is None


def test_tallied_counts_every_so_many_items_and_once_at_the_end():
    told: list[tuple[int, int]] = []
    total = 2 * TALLY_EVERY + 5
    taken = list(tallied(range(total), total, lambda done, of: told.append((done, of))))
    assert taken == list(range(total))
    assert told == [(TALLY_EVERY, total), (2 * TALLY_EVERY, total), (total, total)]
    assert list(tallied(iter("abc"), 3, None)) == ["a", "b", "c"]
