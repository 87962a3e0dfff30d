"""The registry of network providers: how a cluster's rails reach pods. One module per provider, each defining its builders
and `PROVIDER`, the `Provider` description (generator/providers/base.py) that holds every fact of it the
other stages read: its resource prefix, the NIC facts and `network` settings it reads, whether rails go
through Multus or the nodes' network, the infra chart's NOTES line, and the builders:

- `infra(cluster, chart) -> list[Manifest]`: the cluster-wide objects (device plugin config, networks);
- `pod_network(job, mpijob) -> PodNetwork`: what a worker pod of the job needs for its rails.

Adding a provider is adding its module here, named after it (`host-network`: host_network.py), and its name
to `NetworkProvider` (generator/model/cluster.py) and to the cluster schema's `network.provider`; nothing else names
it (tests/unit/providers/test_providers_registry.py holds the schema's enum and defaults to the registry, and keeps provider
names out of the other modules).
"""

from __future__ import annotations

import importlib
from typing import Any

from mpigen.model import Cluster, Job, NetworkProvider
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest
from mpigen.providers.base import PodNetwork, Provider


def _load(name: NetworkProvider) -> Provider:
    provider: Provider = importlib.import_module(f"{__package__}.{name.value.replace('-', '_')}").PROVIDER
    assert provider.name is name, f"the module of {name.value} describes {provider.name.value}"
    return provider


PROVIDERS: dict[NetworkProvider, Provider] = {name: _load(name) for name in NetworkProvider}
"""Every provider by name, in the order of `NetworkProvider`."""

DEFAULT_PROVIDER = NetworkProvider.SRIOV_DEVICE_PLUGIN
"""The provider of a cluster profile that names none (the schema's default)."""


def provider_of(network: dict[str, Any]) -> Provider | None:
    """The provider a cluster profile's `network` block names (the default where it names none); None for a name
    the schema refuses."""
    return PROVIDERS.get(network.get("provider", DEFAULT_PROVIDER))


def setting_defaults() -> dict[str, Any]:
    """The defaults of the `network` settings only some providers read."""
    return {key: value for provider in PROVIDERS.values() for key, value in provider.settings.items()
            if value is not None}


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    return PROVIDERS[cluster.network.provider].infra(cluster, chart)


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PROVIDERS[job.cluster.network.provider].pod_network(job, mpijob)


