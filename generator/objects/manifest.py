"""One Kubernetes object of a chart and the template file it lives in, and the values in it a chart value sets."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Manifest:
    template: str
    obj: dict[str, Any]


@dataclass(frozen=True)
class Variable:
    """A value of a built object that follows a chart value: `name` is the chart value, `value` what it is
    under the profile. With `times`, the object holds the value times `times` as a string (mpirun's rank
    count: the workers times the slots of each); with `plus`, the value plus `plus`. The packager turns each
    into a template action; every other use of an object takes it `plain`."""

    name: str
    value: Any
    times: int | None = None
    plus: int | None = None
    """The object holds the value plus `plus`, as a number (a gang's minimum: the workers and the launcher)."""

    def scaled(self, times: int) -> Variable:
        return Variable(self.name, self.value, times)

    def added(self, plus: int) -> Variable:
        return Variable(self.name, self.value, plus=plus) if plus else Variable(self.name, self.value)

    @property
    def plain(self) -> Any:
        if self.plus is not None:
            return self.value + self.plus
        return self.value if self.times is None else str(self.value * self.times)


_LEAVES = frozenset((str, int, float, bool, type(None)))
"""Types that hold no Variable: most of an object's nodes, returned at once (a fleet's objects hold millions)."""


def plain(obj: Any) -> Any:
    """A copy of `obj` with each Variable replaced by what it stands for under the profile."""
    if obj.__class__ in _LEAVES:
        return obj
    if isinstance(obj, Variable):
        return obj.plain
    if isinstance(obj, dict):
        return {key: plain(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [plain(value) for value in obj]
    return obj


def variables(obj: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], Variable]]:
    """Where a builder marked a value a chart value sets, and the mark, in the order of the object's text."""
    found: list[tuple[tuple[str | int, ...], Variable]] = []
    _gather_variables(obj, path, found)
    return found


def _gather_variables(obj: Any, path: tuple[str | int, ...], found: list[tuple[tuple[str | int, ...], Variable]]
                      ) -> None:
    if obj.__class__ in _LEAVES:
        return
    if isinstance(obj, Variable):
        found.append((path, obj))
    elif isinstance(obj, dict):
        for key, value in obj.items():
            _gather_variables(value, (*path, key), found)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            _gather_variables(value, (*path, index), found)


def marked_digest(obj: Any) -> str:
    """sha256 of a marked object, each Variable as the chart value it stands for (not its value): the digest of a
    job object's spec as a chart writes it (`mpigen/run-spec`), whatever the profile's values."""
    def default(value: Any) -> Any:
        if isinstance(value, Variable):
            return {"$value": value.name, "times": value.times, "plus": value.plus}
        raise TypeError(type(value).__name__)
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
