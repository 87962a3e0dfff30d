"""The provider registry (generator/providers/): one description per `NetworkProvider`, the schema's
enum and defaults are its own, and no other module of the generator spells a provider's name, so what a
provider is and does stays in its module."""

from __future__ import annotations

import ast
import json
import re

from conftest import REPO

from mpigen.model import NetworkProvider
from mpigen.providers import DEFAULT_PROVIDER, PROVIDERS

NETWORK_SCHEMA = json.loads((REPO / "schemas" / "cluster.schema.json").read_text(encoding="utf-8"))[
    "properties"]["network"]["properties"]
PROVIDER_MODULES = REPO / "generator" / "providers"
# Strings that are not the provider but share its name: OpenMPI's TCP transport (`btl`) and libfabric's provider, and
# the namespace the SR-IOV network operator's own install uses (a controller's namespace, whatever the provider).
NOT_THE_PROVIDER = {("generator/resolve/nccl.py", ",tcp,self"), ("generator/resolve/nccl.py", "tcp"),
                    ("generator/vocabulary/reserved.py", "sriov-network-operator"),
                    # DRANET's repository, where its attributes are read: the project, not mpigen's provider
                    ("generator/vocabulary/dra.py", "google/dranet pkg/apis/attributes.go, pkg/inventory/db.go"),
                    # DRANET's page measuring NCCL over aligned and unaligned GPU-NIC pairs: the project, again
                    ("generator/vocabulary/fabric.py", "https://github.com/google/dranet/blob/"
                     "7b7661a153a6815194e957bd33147b538675e56e/site/content/docs/concepts/hardware-efficiency.md")}


def test_the_registry_describes_every_provider_in_the_order_of_the_enum():
    assert list(PROVIDERS) == list(NetworkProvider)
    assert all(provider.name is name for name, provider in PROVIDERS.items())


def test_the_schema_enum_and_defaults_are_the_registry_s():
    assert NETWORK_SCHEMA["provider"]["enum"] == [name.value for name in PROVIDERS]
    assert NETWORK_SCHEMA["provider"]["default"] == DEFAULT_PROVIDER.value
    for provider in PROVIDERS.values():
        for key, default in provider.settings.items():
            assert NETWORK_SCHEMA[key].get("default") == default, (provider.name, key)


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def _enum_values(tree: ast.AST) -> set[int]:
    return {id(child) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "NetworkProvider"
            for child in ast.walk(node)}


def test_no_module_outside_the_provider_modules_spells_a_provider_name():
    name = re.compile(r"(?<![\w-])(" + "|".join(re.escape(p.value) for p in NetworkProvider) + r")(?![\w-])")
    found = []
    for path in sorted((REPO / "generator").rglob("*.py")):
        if PROVIDER_MODULES in path.parents:
            continue
        where = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree) | (_enum_values(tree) if where == "generator/model/cluster.py" else set())
        found += [f"{where}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                  and name.search(node.value) and (where, node.value) not in NOT_THE_PROVIDER]
    assert found == []
