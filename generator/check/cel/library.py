"""The Kubernetes CEL library functions mpigen evaluates, those that take and return plain values: lists (isSorted, sum,
min, max; indexOf and lastIndexOf are written but not declared: the bindings refuse a second declaration of the
strings extension's functions of those names, so a rule calling them is unsupported, environment.py), regex (find,
findAll) and sets (sets.contains, sets.equivalent, sets.intersects). The libraries whose functions return an opaque
type (url, quantity, ip, cidr, format, semver) cannot be returned through the bindings; a rule using them is
unsupported (environment.OPAQUE_FUNCTIONS).

Upstream semantics, from kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/cel/library/ lists.go @
2293553202fa21e3918086dc66cb4154ac7caac9 (min/max: "%s called on empty list"; indexOf -1 when absent; sum of an empty
list 0), regex.go and sets.go @ 00c30b354df7afc15258ecdbdd629555d200de5a (find: the first match or ''; findAll(n): at
most n matches, all when n < 0). Regular expressions are RE2 upstream; here Python's `re`, which agrees on the syntax
CRD rules use (classes, anchors, repetition) but not on every corner (backreferences, which RE2 refuses).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class Overloading:
    """One overload as the bindings declare it: its id, parameter and return type names (environment._declaration
    maps them), whether it is a member function, and the implementation."""

    id: str
    parameters: tuple[str, ...]
    returns: str
    member: bool
    impl: Callable[..., Any]


class NoSuchOverload(TypeError):
    """The arguments are of no type the function takes (cel-go's "no such overload")."""


def _kind(value: Any) -> str:
    """The comparable type class of a value: CEL compares ints and doubles with each other, nothing else across."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (str, bytes)):
        return type(value).__name__
    raise NoSuchOverload("no such overload")


def _comparable(items: list[Any]) -> list[Any]:
    if len({_kind(item) for item in items}) > 1:
        raise NoSuchOverload("no such overload")
    return items


def cel_equal(left: Any, right: Any) -> bool:
    """CEL's equality of plain values: a bool never equals a number, numbers of either type compare by value."""
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(cel_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(cel_equal(value, right[key]) for key, value in left.items())
    return bool(left == right)


def is_sorted(items: list[Any]) -> bool:
    items = _comparable(items)
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def total(items: list[Any]) -> Any:
    if any(isinstance(item, bool) or not isinstance(item, (int, float)) for item in items):
        raise NoSuchOverload("no such overload")
    return sum(items, 0)


def least(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min called on empty list")
    return min(_comparable(items))


def greatest(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max called on empty list")
    return max(_comparable(items))


def index_of(items: list[Any], wanted: Any) -> int:
    return next((i for i, item in enumerate(items) if cel_equal(item, wanted)), -1)


def last_index_of(items: list[Any], wanted: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if cel_equal(items[i], wanted)), -1)


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def find(text: str, pattern: str) -> str:
    match = _regex(pattern).search(text)
    return match.group(0) if match else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [match.group(0) for match in _regex(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


def sets_contains(items: list[Any], wanted: list[Any]) -> bool:
    return all(index_of(items, item) >= 0 for item in wanted)


def sets_equivalent(left: list[Any], right: list[Any]) -> bool:
    return sets_contains(left, right) and sets_contains(right, left)


def sets_intersects(left: list[Any], right: list[Any]) -> bool:
    return any(index_of(left, item) >= 0 for item in right)


def _member(id_: str, parameters: tuple[str, ...], returns: str, impl: Callable[..., Any]) -> Overloading:
    return Overloading(id_, parameters, returns, True, impl)


LIBRARY: dict[str, tuple[Overloading, ...]] = {
    "isSorted": (_member("list_dyn_is_sorted_bool", ("list",), "bool", is_sorted),),
    "sum": (_member("list_dyn_sum_dyn", ("list",), "dyn", total),),
    "min": (_member("list_dyn_min_dyn", ("list",), "dyn", least),),
    "max": (_member("list_dyn_max_dyn", ("list",), "dyn", greatest),),
    "find": (_member("string_find_string", ("string", "string"), "string", find),),
    "findAll": (_member("string_find_all_string", ("string", "string"), "list_string", find_all),
                _member("string_find_all_string_int", ("string", "string", "int"), "list_string", find_all)),
    "sets.contains": (Overloading("list_sets_contains_list", ("list", "list"), "bool", False, sets_contains),),
    "sets.equivalent": (Overloading("list_sets_equivalent_list", ("list", "list"), "bool", False, sets_equivalent),),
    "sets.intersects": (Overloading("list_sets_intersects_list", ("list", "list"), "bool", False, sets_intersects),),
}
"""Function name -> its overloads, as environment.py declares them to the bindings."""
