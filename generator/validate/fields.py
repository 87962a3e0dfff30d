"""Checks of single fields that several profile kinds share: repeated list entries, label keys, release names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import names
from mpigen.support.diagnostics import Diagnostic, raises
from mpigen.support.profile_rules import DUPLICATES, NAMES


def field_name(path: Sequence[str | int]) -> str:
    """A profile field as every message names it: `` `nodePools[0].taints` ``; the root is "the profile"."""
    if not path:
        return "the profile"
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return f"`{text}`"


@raises(DUPLICATES)
def duplicates(document: ProfileFile, items: list[Any], key: str, list_path: tuple[str | int, ...],
                what: str) -> Iterable[Diagnostic]:
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        value = item[key] if key else item
        path = (*list_path, i, key) if key else (*list_path, i)
        if value in seen:
            first, here = document.location(*list_path, seen[value], *((key,) if key else ())), document.location(*path)
            # In a profile merged through `extends`, the first may stand in another file.
            at = f"line {first.line}" if first.path == here.path else f"{first.path}:{first.line}"
            yield Diagnostic(here, f"{what} '{value}' appears twice", f"the first is at {at}; remove or rename one")
        else:
            seen[value] = i


@raises(NAMES)
def check_label_keys(document: ProfileFile, labels: dict[str, str], path: tuple[str | int, ...],
                     what: str = "label") -> list[Diagnostic]:
    found = []
    for key in labels:
        prefix, _, name = key.rpartition("/")
        if len(prefix) > 253 or len(name) > 63:
            found.append(Diagnostic(document.location(*path, key, at_key=True), f"{what} key '{key}' is too long",
                                    "Kubernetes allows a prefix of 253 and a name of 63 characters"))
    return found


@raises(NAMES)
def check_release_name(document: ProfileFile, release: str, what: str) -> list[Diagnostic]:
    if len(release) <= names.HELM_RELEASE_MAX:
        return []
    room = names.HELM_RELEASE_MAX - (len(release) - len(document.data["name"]))
    return [Diagnostic(document.location("name"),
                       f"{what} '{release}' is {len(release)} characters; Helm release names may have "
                       f"{names.HELM_RELEASE_MAX}", f"shorten the name to at most {room} characters")]
