"""generator/support/parallel.py: the work split between two processes gives what doing it all here gives, whatever
happens to the child."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from mpigen.support import parallel

needs_two_cores = pytest.mark.skipif(not parallel.available(), reason="needs Linux, two cores and one thread")


def squares_with_pids(items: Sequence[int]) -> list[tuple[int, int]]:
    return [(item * item, os.getpid()) for item in items]


@needs_two_cores
def test_the_results_are_in_order_and_half_come_from_a_child():
    items = list(range(200))
    results = parallel.split_map(squares_with_pids, items)
    assert [value for value, _ in results] == [item * item for item in items]
    pids = [pid for _, pid in results]
    assert pids[:100] == [os.getpid()] * 100 and len(set(pids[100:])) == 1 and pids[100] != os.getpid()


@needs_two_cores
def test_a_split_by_weight_gives_each_side_about_half_the_weight():
    items = [100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]  # one heavy item first: the child takes all the light ones
    results = parallel.split_map(squares_with_pids, items, weight=lambda item: item)
    assert [value for value, _ in results] == [item * item for item in items]
    assert [pid == os.getpid() for _, pid in results] == [True] + [False] * 11


def test_little_work_is_done_here():
    results = parallel.split_map(squares_with_pids, list(range(parallel.MINIMUM_WEIGHT - 1)))
    assert {pid for _, pid in results} == {os.getpid()}


@needs_two_cores
def test_a_child_that_dies_only_means_its_half_is_done_here():
    parent = os.getpid()

    def dying_in_the_child(items: Sequence[int]) -> list[tuple[int, int]]:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return squares_with_pids(items)

    results = parallel.split_map(dying_in_the_child, list(range(100)))
    assert results == [(item * item, parent) for item in range(100)]


@needs_two_cores
def test_an_error_is_raised_here_as_doing_it_all_here_would():
    def failing_on_99(items: Sequence[int]) -> list[int]:
        if 99 in items:
            raise ValueError("item 99")
        return list(items)

    with pytest.raises(ValueError, match="item 99"):  # 99 lies in the child's half: raised by the parent's retry
        parallel.split_map(failing_on_99, list(range(100)))
    assert not _children_left()


def _children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


def test_a_tally_hears_the_weight_done_and_the_results_are_the_same(monkeypatch):
    monkeypatch.setattr(parallel, "available", lambda: False)  # all of it here, in steps
    told: list[tuple[int, int]] = []
    items = list(range(120))
    results = parallel.split_map(squares_with_pids, items, weight=lambda item: 1 + item % 3,
                                 tally=lambda done, total: told.append((done, total)))
    assert results == squares_with_pids(items)
    total = sum(1 + item % 3 for item in items)
    assert len(told) >= parallel.STEPS // 2 and all(of == total for _, of in told)
    assert [done for done, _ in told] == sorted(done for done, _ in told) and told[-1] == (total, total)


@needs_two_cores
def test_a_tally_hears_the_childs_count_while_the_child_works(tmp_path):
    """The child's half is counted in memory both share and told by the parent as it waits: the child holds its
    results back (pickling them waits) until the parent has told the whole count, which it can only have read there."""
    heard = tmp_path / "heard"
    total = 200
    told: list[tuple[int, int]] = []

    def tell(done: int, of: int) -> None:
        told.append((done, of))
        if done == of:
            heard.touch()

    results = parallel.split_map(lambda items: [Waiting(item, heard) for item in items], list(range(total)), tally=tell)
    assert [result.item for result in results[:100]] + results[100:] == list(range(total))  # the child's, unpickled
    assert told.count((total, total)) >= 2  # once while the child waited, once at the end
    assert [done for done, _ in told] == sorted(done for done, _ in told)


class Waiting:
    """An item's result that, pickled in the child, waits (at most a minute) for `heard` to exist."""

    def __init__(self, item: int, heard: Path) -> None:
        self.item, self.heard = item, heard

    def __reduce__(self) -> tuple[type[int], tuple[int]]:
        deadline = time.monotonic() + 60
        while not self.heard.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return int, (self.item,)
