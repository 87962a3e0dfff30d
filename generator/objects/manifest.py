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


def plain(obj: Any) -> Any:
    """A copy of `obj` with each Variable replaced by what it stands for under the profile."""
    if isinstance(obj, Variable):
        return obj.plain
    if isinstance(obj, dict):
        return {key: plain(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [plain(value) for value in obj]
    return obj


def variables(obj: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], Variable]]:
    """Where a builder marked a value a chart value sets, and the mark."""
    if isinstance(obj, Variable):
        return [(path, obj)]
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    return [found for key, value in items for found in variables(value, (*path, key))]


def marked_digest(obj: Any) -> str:
    """sha256 of a marked object, each Variable as the chart value it stands for (not its value): the digest of a
    job object's spec as a chart writes it (`mpigen/run-spec`), whatever the profile's values."""
    def default(value: Any) -> Any:
        if isinstance(value, Variable):
            return {"$value": value.name, "times": value.times, "plus": value.plus}
        raise TypeError(type(value).__name__)
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
