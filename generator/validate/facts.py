"""Hardware facts that clusters and jobs rely on, checked where they rely on them.

A hardware profile may leave a fact out when it is not known (the built-ins leave out everything that is
not published). That is fine until a rail or a job needs the fact; then the error points at the rail or
job, names the missing fact, and says where to set it and how to read it on a node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpigen.load import ProfileFile
from mpigen.load.catalogue import is_builtin
from mpigen.model import derive
from mpigen.providers import provider_of
from mpigen.support.diagnostics import Diagnostic, raises
from mpigen.support.profile_rules import FACTS

# Where each fact can be read on a node (the NIC facts each provider reads are its `nic_facts`).
HOW_TO_READ = {"hca": "ibdev2netdev", "pfName": "ibdev2netdev", "vendorId": "lspci -nn", "deviceId": "lspci -nn",
               "vfDeviceId": "lspci -nn", "linkType": "ibv_devinfo", "coresPerSocket": "lscpu"}


@raises(FACTS)
def check_rail_facts(document: ProfileFile, cluster: dict[str, Any], carriers: list[tuple[dict[str, Any], dict[str, Any]]],
                     hardware: Mapping[str, ProfileFile]) -> list[Diagnostic]:
    """Each rail's NIC, on every hardware that carries it, must state what the cluster's provider reads.

    `carriers` are the cluster's (pool, hardware data) pairs; `hardware` the hardware documents by name, to
    say where a missing fact belongs.
    """
    found: list[Diagnostic] = []
    provider = provider_of(cluster.get("network", {}))
    if provider is None:
        return found
    for i, rail in enumerate(cluster.get("rails", [])):
        seen: set[str] = set()
        for _, data in carriers:
            nic = next((n for n in data.get("nics", []) if n["name"] == rail["nic"]), None)
            if nic is None or data["name"] in seen:
                continue
            seen.add(data["name"])
            # Every fact the provider reads, whatever the rail says: a rail's `hostInterface` stands for `pfName` only
            # where the provider reads pfName as the interface alone (not a fact it lists), which network.py asks for.
            missing = [fact for fact in provider.nic_facts if nic.get(fact) is None]
            if missing:
                found.append(Diagnostic(
                    document.location("rails", i, "nic"),
                    f"rail '{rail['name']}' runs over NIC '{rail['nic']}' of hardware '{data['name']}', whose "
                    f"{_and(missing)} {'is' if len(missing) == 1 else 'are'} not known",
                    f"set {'it' if len(missing) == 1 else 'them'} {_where(hardware.get(data['name']), data['name'], nic)} "
                    f"({_how(missing)})"))
    return found


@raises(FACTS)
def check_core_facts(document: ProfileFile, job: dict[str, Any], pool: dict[str, Any], data: dict[str, Any],
                     hardware: ProfileFile | None) -> list[Diagnostic]:
    """A job that asks for CPUs, or runs on nodes without GPUs, is sized by the node's cores."""
    if "coresPerSocket" in data["cpu"]:
        return []
    cpu = job.get("resources", {}).get("cpu")
    if cpu is not None:
        where, what = document.location("resources", "cpu"), f"a worker asks for {cpu} CPUs"
    elif not derive.gpu_count(data):
        where, what = document.location("pool"), f"pool '{pool['name']}' has no GPUs, so its workers are sized by cores"
    else:
        return []
    return [Diagnostic(where, f"{what}, but hardware '{data['name']}' does not say how many cores a node has "
                       "(its cpu.coresPerSocket is not known)",
                       f"set it {_where(hardware, data['name'], None)} ({_how(['coresPerSocket'])})"
                       + ("; or leave `resources.cpu` out" if cpu is not None else ""))]


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _where(hardware: ProfileFile | None, name: str, nic: dict[str, Any] | None) -> str:
    """Where to write a missing fact: a built-in is extended, a profile of the user's edited."""
    if hardware is None or is_builtin(hardware):
        return f"in a hardware profile that extends {name}"
    return f"on NIC '{nic['name']}' in {hardware.path}" if nic else f"in {hardware.path}"


def _how(facts: list[str]) -> str:
    """`read it on a node with lspci -nn`, or per tool when the facts come from several."""
    tools: dict[str, list[str]] = {}
    for fact in facts:
        tools.setdefault(HOW_TO_READ[fact], []).append(fact)
    if len(tools) == 1:
        return f"read {'it' if len(facts) == 1 else 'them'} on a node with {next(iter(tools))}"
    return "read them on a node: " + ", ".join(f"{_and(named)} with {tool}" for tool, named in tools.items())
