"""How much of a long list `plan`, `explain` and the picture show: every bound in one place, so that what they print
and draw grows with what they show, never with a job's or a pool's size (a job may have 100,000 workers of
2,147,483,647 slots each, a pool 100,000 nodes). What is left out is always said, with how much.
"""

from __future__ import annotations

from collections.abc import Sequence

NAMES_SHOWN = 8
"""Job names in one list: the jobs a waiting job waits for, the jobs of a pool in a note."""
RANKS_SHOWN = 128
"""Ranks `explain` lists; past that, the first and the last RANKS_SHOWN // 2 of them."""


def head_and_tail(count: int, shown: int) -> tuple[range, range]:
    """The indexes of a list of `count` to show: all of them (and an empty tail) where there are at most `shown`,
    else the first and the last `shown // 2`."""
    if count <= shown:
        return range(count), range(count, count)
    half = shown // 2
    return range(half), range(count - half, count)


def names_text(names: Sequence[str], omitted: int = 0, shown: int = NAMES_SHOWN) -> str:
    """`a, b, c`; past `shown` names (or with `omitted` more not given), `a, b, c and 12 more`."""
    more = omitted + max(len(names) - shown, 0)
    listed = ", ".join(names[:shown])
    return f"{listed} and {more} more" if more else listed
