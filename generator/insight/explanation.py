"""What `mpigen explain` says about one job, as data that report.py writes as text or JSON: each value with its
origin and the origin's kind (a profile line, a default, or a rule), and where the job's ranks run."""

from __future__ import annotations

from dataclasses import dataclass

from mpigen.insight.ranks import RankBinding

PROFILE = "profile"
DEFAULT = "default"
RULE = "rule"


@dataclass(frozen=True)
class Fact:
    section: str
    name: str
    value: str
    origin: str
    """`path:line: key` of a profile, `default: ...`, or the rule the value follows."""
    origin_kind: str
    """PROFILE, DEFAULT or RULE."""


@dataclass(frozen=True)
class Explanation:
    job: str
    path: str
    """The job profile's path as given."""
    cluster: str
    pool: str
    namespace: str
    facts: tuple[Fact, ...]
    ranks: tuple[RankBinding, ...]
    """Every rank of a job of at most `bounds.RANKS_SHOWN`; of a bigger one, the first and the last half as many."""
    binding_rule: str
    rank_count: int
    """Every rank of the job: workers x slots per worker."""
    ranks_omitted: int
    """How many of them `ranks` leaves out (0: none), all between its first and its last half."""
    rank_pattern: str
    """The rule every rank follows, the left-out ones too."""


@dataclass(frozen=True)
class Said:
    """An origin's words and its kind: a profile line, a default, or a rule (never guessed from the words: a path
    may hold anything)."""

    text: str
    kind: str

    def __str__(self) -> str:
        return self.text

    def __add__(self, more: str) -> Said:
        return Said(self.text + more, self.kind)
