"""generator/commands/schema_export.py: `schema --write` replaces only mpigen's own schemas (of any release), never
writes through a link, and refuses before it writes anything."""

from __future__ import annotations

import json

import pytest
from conftest import REPO, snapshot

from mpigen.commands.schema_export import write_schemas
from mpigen.support.project import SERVED_URL
from mpigen.support.schema_files import exported_schemas, repository_schemas
from mpigen.write import WriteRefused


def test_the_export_is_every_kinds_schema_as_shipped() -> None:
    assert exported_schemas() == {name: (REPO / "schemas" / name).read_text(encoding="utf-8")
                                  for name in ("cluster.schema.json", "hardware.schema.json", "job.schema.json")}


def test_an_older_releases_schemas_are_replaced(tmp_path) -> None:
    old = {"$id": f"{SERVED_URL}/v0.1.9/schemas/job.schema.json"}
    (tmp_path / "job.schema.json").write_text(json.dumps(old), encoding="utf-8")
    assert sorted(p.name for p in write_schemas(tmp_path)) == sorted(repository_schemas())
    assert "config.schema.json" in repository_schemas()  # the config's, as init writes it
    assert (tmp_path / "job.schema.json").read_text(encoding="utf-8") == exported_schemas()["job.schema.json"]


@pytest.mark.parametrize("text", ["not json", "[]", '{"$id": "https://example.com/job.schema.json"}',
                                  json.dumps({"$id": f"{SERVED_URL}/v0.2.0/schemas/cluster.schema.json"}),
                                  json.dumps({"$id": f"{SERVED_URL}/v0.2.0/schemas/crds/job.schema.json"})])
def test_anything_else_at_a_schemas_name_is_refused_before_a_file_is_written(tmp_path, text) -> None:
    (tmp_path / "job.schema.json").write_text(text, encoding="utf-8")
    before = snapshot(tmp_path)
    with pytest.raises(WriteRefused, match=r"is not mpigen's job\.schema\.json; nothing was written"):
        write_schemas(tmp_path)
    assert snapshot(tmp_path) == before


def test_a_link_at_a_schemas_name_is_refused(tmp_path) -> None:
    (tmp_path / "elsewhere.json").write_text(exported_schemas()["job.schema.json"], encoding="utf-8")
    (tmp_path / "job.schema.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(WriteRefused, match=r"it is a symbolic link, not a schema mpigen wrote"):
        write_schemas(tmp_path)
    assert not (tmp_path / "cluster.schema.json").exists()
