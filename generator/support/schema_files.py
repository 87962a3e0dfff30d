"""Where the profile JSON Schemas live: inside the wheel, or in the source tree's `schemas/`."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

KIND_SCHEMA_FILES = {"Hardware": "hardware.schema.json", "Cluster": "cluster.schema.json", "Job": "job.schema.json"}
CONFIG_SCHEMA_FILE = "config.schema.json"
"""The repository config's (`.mpigen.yaml`, generator/commands/repository.py): no profile kind."""


def schema_dir() -> Path:
    packaged = Path(__file__).parent.parent / "schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "schemas"


def load_schema(kind: str) -> dict[str, Any]:
    return load_schema_file(KIND_SCHEMA_FILES[kind])


@cache
def load_schema_file(name: str) -> dict[str, Any]:
    return json.loads((schema_dir() / name).read_text(encoding="utf-8"))
