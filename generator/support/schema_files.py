"""Where the profile JSON Schemas live: inside the wheel (the package `mpigen.schemas`, read through importlib's
resources), or in the source tree's `schemas/`; and the address each one is published at, its `$id`."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from mpigen.support.project import file_url

KIND_SCHEMA_FILES = {"Hardware": "hardware.schema.json", "Cluster": "cluster.schema.json", "Job": "job.schema.json"}
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


@cache
def load_schema(kind: str) -> dict[str, Any]:
    return json.loads(schema_text(KIND_SCHEMA_FILES[kind]))

