"""Network providers: how a cluster's rails reach pods, below the stages, which all read them (validate the
settings each provider reads, resolve its defaults, manifests its objects, check its rules). The registry is
registry.py; each provider is one module named after it; base.py describes what a provider is."""

from __future__ import annotations

from mpigen.providers.base import WORKER_OF_LABEL, PodNetwork, Provider
from mpigen.providers.registry import DEFAULT_PROVIDER, PROVIDERS, infra, pod_network, provider_of, setting_defaults

__all__ = ["DEFAULT_PROVIDER", "PROVIDERS", "WORKER_OF_LABEL", "PodNetwork", "Provider", "infra", "pod_network",
           "provider_of", "setting_defaults"]
