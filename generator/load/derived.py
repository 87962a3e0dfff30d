"""Profiles that no file holds but a loaded one implies: a cluster's fabric acceptance jobs (model/acceptance.py),
as Job documents located at the `acceptance` key that asks for them, so validate points there and resolve reads
them like any job profile."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap

from mpigen.load.document import ProfileFile, position
from mpigen.load.plain import to_plain
from mpigen.model.acceptance import AcceptanceProfile, acceptance_profiles
from mpigen.providers import provider_of


def acceptance_documents(cluster: ProfileFile, hardware: dict[str, dict[str, Any]]) -> list[
        tuple[ProfileFile, AcceptanceProfile]]:
    """Each acceptance job of a schema-valid cluster profile, as a Job document of the cluster's file; `hardware`: the
    plain hardware profiles by name."""
    data = to_plain(cluster.data)
    provider = provider_of(data.get("network", {}))
    if provider is None:
        return []
    asking = {pool["name"]: ("nodePools", index, "acceptance") for index, pool in enumerate(data.get("nodePools", []))
              if isinstance(pool.get("acceptance"), dict)}
    found = []
    claimed = provider.dra_devices and "dra" in data
    for profile in acceptance_profiles(data, hardware, provider.exclusive_devices, claimed):
        keys = asking.get(profile.acceptance.pool, ("acceptance",))
        line, column = position(cluster.data, keys, at_key=True)
        tree = CommentedMap(profile.data)
        tree._yaml_set_line_col(line - 1, column - 1)
        found.append((ProfileFile(cluster.path, cluster.source, tree, cluster.lines), profile))
    return found
