"""The profile schemas: valid draft 2020-12, helpful in editors, strict, and shipped in the wheel."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from conftest import PROFILES, REPO
from jsonschema import Draft202012Validator

from mpigen.load import load_paths
from mpigen.support.schema_files import CONFIG_SCHEMA_FILE, KIND_SCHEMA_FILES, load_schema, load_schema_file
from mpigen.validate.schema import QUANTITY_UNITS, to_plain
from mpigen.vocabulary import kubernetes

KINDS = sorted(KIND_SCHEMA_FILES)


def subschemas(schema: dict, path: str = ""):
    yield path, schema
    for key, sub in schema.get("properties", {}).items():
        yield from subschemas(sub, f"{path}.{key}")
    for key in ("items", "additionalProperties", "propertyNames"):
        if isinstance(schema.get(key), dict):
            yield from subschemas(schema[key], f"{path}[{key}]")


@pytest.mark.parametrize("kind", KINDS)
def test_schema_is_valid_draft_2020_12(kind):
    schema = load_schema(kind)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("kind", KINDS)
def test_every_property_has_title_and_description(kind):
    """Editors (yaml-language-server) show these as help on hover and completion."""
    missing = [path for path, sub in subschemas(load_schema(kind)) if not (sub.get("title") and sub.get("description"))]
    assert not missing, f"{kind}: without title/description: {missing}"


@pytest.mark.parametrize("kind", KINDS)
def test_every_object_rejects_unknown_keys(kind):
    loose = [path or "(root)" for path, sub in subschemas(load_schema(kind))
             if "properties" in sub and sub.get("additionalProperties") is not False]
    assert not loose, f"{kind}: objects accepting unknown keys: {loose}"


def test_example_profiles_validate_against_their_schema():
    documents = load_paths([PROFILES]).documents
    assert {d.kind for d in documents} == set(KINDS)
    for document in documents:
        errors = list(Draft202012Validator(load_schema(document.kind)).iter_errors(to_plain(document.data)))
        assert not errors, (document.path, [e.message for e in errors])


def test_example_profiles_point_editors_at_the_schema():
    for document in load_paths([PROFILES]).documents:
        first = Path(document.path).read_text(encoding="utf-8").splitlines()[0]
        expected = f"../../schemas/{KIND_SCHEMA_FILES[document.kind]}"
        assert first == f"# yaml-language-server: $schema={expected}", document.path
        assert (Path(document.path).parent / expected).resolve().is_file()


def test_wheel_ships_the_schemas(built_wheel):
    names = set(zipfile.ZipFile(built_wheel).namelist())
    for file in (*KIND_SCHEMA_FILES.values(), CONFIG_SCHEMA_FILE):
        assert f"mpigen/schemas/{file}" in names
        shipped = json.loads(zipfile.ZipFile(built_wheel).read(f"mpigen/schemas/{file}"))
        assert shipped == json.loads((REPO / "schemas" / file).read_text(encoding="utf-8"))


def test_every_quantity_of_the_schemas_says_what_kubernetes_counts_it_in():
    """A quantity field with no unit would be checked for nothing Kubernetes rounds (validate.schema.QUANTITY_UNITS)."""
    keys = {path.rpartition(".")[2] for kind in KINDS for path, sub in subschemas(load_schema(kind))
            if sub.get("pattern") == kubernetes.PROFILE_QUANTITY_PATTERN}
    assert keys == set(QUANTITY_UNITS) == {"cpu", "memory", "shmSize"}
    assert QUANTITY_UNITS["cpu"] is kubernetes.MILLICORES


def test_a_nodes_memory_is_at_most_what_kubernetes_counts_in_bytes():
    assert load_schema("Hardware")["properties"]["memoryGiB"]["maximum"] == kubernetes.MAX_COUNT // 2**30 == 2**33 - 1


def test_the_repository_configs_schema_is_as_strict_and_helpful_as_the_profiles():
    """schemas/config.schema.json (`.mpigen.yaml`): draft 2020-12, help on every key, no unknown key."""
    schema = load_schema_file(CONFIG_SCHEMA_FILE)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert not [path for path, sub in subschemas(schema) if not (sub.get("title") and sub.get("description"))]
    assert not [path for path, sub in subschemas(schema) if "properties" in sub and sub.get("additionalProperties")
                is not False]
    from mpigen.check.report import FORMATS

    assert schema["properties"]["check"]["properties"]["output"]["enum"] == sorted(FORMATS)


def test_schema_errors_as_data() -> None:
    """Where plain data breaks the job schema, with the keyword and what it expects (an import leaves those out)."""
    from mpigen.validate.schema import schema_errors

    job = {"apiVersion": "mpigen/v1alpha1", "kind": "Job", "name": "a", "cluster": "c", "pool": "p", "image": "i",
           "runPolicy": {"cleanPodPolicy": False}}
    assert schema_errors(KIND_SCHEMA_FILES["Job"], job) == [
        (("runPolicy", "cleanPodPolicy"), "enum", ["None", "Running", "All"])]
    assert schema_errors(KIND_SCHEMA_FILES["Job"], {**job, "runPolicy": {}}) == []
