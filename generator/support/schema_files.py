"""Where the profile JSON Schemas live: inside the wheel (the package `mpigen.schemas`, read through importlib's
resources), or in the source tree's `schemas/`; and the address each one is published at, its `$id`."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from mpigen.support.project import file_url

KIND_SCHEMA_FILES = {"Hardware": "hardware.schema.json", "Cluster": "cluster.schema.json", "Job": "job.schema.json"}
CONFIG_SCHEMA_FILE = "config.schema.json"
"""The repository config's (`.mpigen.yaml`, generator/commands/repository.py): no profile kind."""
SCHEMAS_FOLDER = "schemas"
"""The folder of the schemas in the repository, and in the package."""


def schema_dir() -> Path:
    packaged = Path(str(resources.files("mpigen").joinpath(SCHEMAS_FOLDER)))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / SCHEMAS_FOLDER


def schema_id(name: str) -> str:
    """The `$id` of the schema file `name` (relative to schemas/, e.g. `job.schema.json` or `crds/...json`): its
    address in the repository at this release, where an editor can fetch it."""
    return file_url(f"{SCHEMAS_FOLDER}/{name}")


def schema_text(name: str) -> str:
    """The text of the schema file `name` (relative to schemas/) as mpigen ships it."""
    return (schema_dir() / name).read_text(encoding="utf-8")


def load_schema(kind: str) -> dict[str, Any]:
    return load_schema_file(KIND_SCHEMA_FILES[kind])


@cache
def load_schema_file(name: str) -> dict[str, Any]:
    return json.loads(schema_text(name))


def _file_refs(node: Any) -> set[str]:
    """The schema files a schema `$ref`s beside it (`other.schema.json#/...`); a local `#/...` names none."""
    if isinstance(node, dict):
        own = node.get("$ref")
        found = {own.partition("#")[0]} if isinstance(own, str) and own.partition("#")[0] else set()
        return found.union(*(_file_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_file_refs(value) for value in node))
    return set()


def exported_schemas() -> dict[str, str]:
    """The text of every profile kind's schema, and of every schema of mpigen's they `$ref`, by file name: what an
    editor needs beside the profiles (`mpigen schema --write`, `mpigen init`). A `$ref` to a file that is not one of
    mpigen's (another address) is left to the editor to fetch."""
    prefix = schema_id("")
    wanted = list(KIND_SCHEMA_FILES.values())
    texts: dict[str, str] = {}
    while wanted:
        name = wanted.pop()
        if name in texts:
            continue
        texts[name] = schema_text(name)
        for ref in _file_refs(json.loads(texts[name])):
            address = urljoin(schema_id(name), ref)
            if address.startswith(prefix):
                wanted.append(address.removeprefix(prefix))
    return dict(sorted(texts.items()))


def repository_schemas() -> dict[str, str]:
    """exported_schemas() and the repository config's, by file name: what a repository's editors read beside its
    profiles and its `.mpigen.yaml` (`mpigen init` writes them, `mpigen schema --write` refreshes them)."""
    return dict(sorted({**exported_schemas(), CONFIG_SCHEMA_FILE: schema_text(CONFIG_SCHEMA_FILE)}.items()))
