"""How much of a long list `plan`, `explain` and the picture show: every bound in one place, so that what they print
and draw grows with what they show, never with a job's or a pool's size (a job may have 100,000 workers of
2,147,483,647 slots each, a pool 100,000 nodes). What is left out is always said, with how much.
"""

from __future__ import annotations

from collections.abc import Sequence

NAMES_SHOWN = 8
"""Job names in one list: the jobs a waiting job waits for, the jobs of a pool in a note."""


def names_text(names: Sequence[str], omitted: int = 0, shown: int = NAMES_SHOWN) -> str:
    """`a, b, c`; past `shown` names (or with `omitted` more not given), `a, b, c and 12 more`."""
    more = omitted + max(len(names) - shown, 0)
    listed = ", ".join(names[:shown])
    return f"{listed} and {more} more" if more else listed
