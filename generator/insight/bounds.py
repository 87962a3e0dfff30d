"""How much of a long list `plan`, `explain` and the picture show: every bound in one place, so that what they print
and draw grows with what they show, never with a job's or a pool's size (a job may have 100,000 workers of
2,147,483,647 slots each, a pool 100,000 nodes). What is left out is always said, with how much.
"""

from __future__ import annotations

from collections.abc import Iterable

from mpigen.support.diagnostics import NAMES_SHOWN, names_text

__all__ = ["NAMES_SHOWN", "NODES_DRAWN", "NODE_RANGES_SHOWN", "RANKS_SHOWN", "WORKERS_DRAWN", "head_and_tail",
           "names_text", "numbers_text"]

RANKS_SHOWN = 128
"""Ranks `explain` lists; past that, the first and the last RANKS_SHOWN // 2 of them."""
NODES_DRAWN = 64
"""Nodes the picture draws of one pool (eight rows of eight); one box stands for the rest."""
BOXES_DRAWN = 8192
"""Boxes the picture draws on one page: a node counts one, each of its GPUs and NICs one, each rail of its pool one.
Pools are drawn in order until they are spent; the pool that would pass it is drawn in part, the pools after it in
each cluster are one box together. A pool of 64 nodes of 64 GPUs is 4,160 boxes: without this bound 200 such pools
(an 8.6 KB cluster profile) drew a 175 MB page."""
WORKERS_DRAWN = 8
"""Lines naming the workers on one node of a CPU pool; the last says how many more where there are."""
NODE_RANGES_SHOWN = 8
"""Runs of consecutive nodes a job's legend line names (`0-4999, 5010`)."""


def head_and_tail(count: int, shown: int) -> tuple[range, range]:
    """The indexes of a list of `count` to show: all of them (and an empty tail) where there are at most `shown`,
    else the first and the last `shown // 2`."""
    if count <= shown:
        return range(count), range(count, count)
    half = shown // 2
    return range(half), range(count - half, count)


def numbers_text(numbers: Iterable[int], shown: int = NODE_RANGES_SHOWN) -> str:
    """Distinct numbers in order: one by one where there are at most `shown` (`0, 1, 3`), else as runs
    (`0-4999, 5010`), the first `shown` runs and then `and N more`."""
    distinct = sorted(set(numbers))
    if len(distinct) <= shown:
        return ", ".join(map(str, distinct))
    runs: list[tuple[int, int]] = []
    for number in distinct:
        if runs and runs[-1][1] == number - 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    text = ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in runs[:shown])
    more = sum(b - a + 1 for a, b in runs[shown:])
    return f"{text} and {more} more" if more else text
