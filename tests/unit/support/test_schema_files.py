"""Every schema mpigen ships is published at an address of this release, which is its `$id`: an editor that reads
the `$id` fetches the schema of the mpigen that compiles, and no two schemas claim one address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

from mpigen import __version__
from mpigen.support.project import RELEASE_TAG, file_url, page_url
from mpigen.support.schema_files import KIND_SCHEMA_FILES, load_schema, schema_dir, schema_id

SCHEMAS = sorted((REPO / "schemas").rglob("*.json"))


def test_the_schemas_are_read_from_the_source_tree_here() -> None:
    assert schema_dir() == REPO / "schemas"
    assert load_schema("Job")["title"] == "mpigen job profile"


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.relative_to(REPO).as_posix() for p in SCHEMAS])
def test_each_schema_is_identified_by_its_address_at_this_release(path: Path) -> None:
    relative = path.relative_to(REPO / "schemas").as_posix()
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$id"] == schema_id(relative), f"set its $id to {schema_id(relative)!r} (the release changed?)"
    assert schema["$id"].startswith("https://") and f"/v{__version__}/schemas/" in schema["$id"]
    assert schema["$id"].endswith(f"/{path.relative_to(REPO).as_posix()}")


def test_no_two_schemas_share_an_id() -> None:
    ids = [json.loads(path.read_text(encoding="utf-8"))["$id"] for path in SCHEMAS]
    assert len(ids) == len(set(ids)) == len(SCHEMAS) > len(KIND_SCHEMA_FILES)


def test_addresses_are_pinned_to_the_release_tag() -> None:
    assert f"v{__version__}" == RELEASE_TAG
    assert file_url("schemas/job.schema.json").endswith(f"/{RELEASE_TAG}/schemas/job.schema.json")
    assert page_url("docs/gitops.md", "Argo CD: health of the job objects") \
        .endswith(f"/blob/{RELEASE_TAG}/docs/gitops.md#argo-cd-health-of-the-job-objects")
