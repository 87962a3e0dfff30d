"""The two sides compared unit by unit: a chart's objects only with the same chart's (of the same cluster), a
bootstrap file's only with the same file's."""

from __future__ import annotations

from dataclasses import dataclass

from mpigen.diff.objects import ObjectChange, diff_objects, diff_text
from mpigen.diff.sides import Side, Unit


@dataclass(frozen=True)
class UnitChanges:
    """The changed objects of one chart or one bootstrap file of one cluster."""

    cluster: str
    path: str
    bootstrap: bool
    changes: tuple[ObjectChange, ...]


def compare_unit(before: Unit | None, after: Unit | None) -> list[ObjectChange]:
    """A chart's objects, or a bootstrap file's (as text where either side could not be read as objects)."""
    unit = after or before
    assert unit is not None
    if unit.bootstrap and any(side is not None and side.objects is None for side in (before, after)):
        change = diff_text(unit.path, before.text if before else None, after.text if after else None)
        return [change] if change else []
    return diff_objects((before.objects or ()) if before else (), (after.objects or ()) if after else ())


def compare(old: Side, new: Side) -> list[UnitChanges]:
    """Every unit that changed, in cluster and path order."""
    found: list[UnitChanges] = []
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key), new.get(key)
        changes = compare_unit(before, after)
        if changes:
            unit = after or before
            assert unit is not None
            found.append(UnitChanges(unit.cluster, unit.path, unit.bootstrap, tuple(changes)))
    return found
