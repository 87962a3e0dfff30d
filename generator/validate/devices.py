"""Devices allocated through Dynamic Resource Allocation: what a cluster's `dra` needs (Kubernetes 1.34, Kueue 0.18,
the dranet provider's rails), what the drivers can align, and a job's GPU-NIC split against what its hardware puts
together (generator/model/devices.py)."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import admission, derive
from mpigen.model.devices import NIC_NUMA_NODE, ClaimedRail, NicGroup, NicSide, SplitProblem, nic_groups, pair_devices
from mpigen.providers import PROVIDERS, provider_of
from mpigen.support.diagnostics import Diagnostic, Severity, raises
from mpigen.support.profile_rules import CLUSTER, JOB
from mpigen.validate.network import Carriers
from mpigen.vocabulary import dra
from mpigen.vocabulary.kueue_releases import named, release_name


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def hardware_groups(hardware: dict[str, Any]) -> dict[str, NicGroup]:
    """`nic_groups` of a hardware profile's data."""
    gpu = hardware.get("gpu", {})
    return nic_groups(int(gpu.get("count", 0)), gpu.get("nicDistance"),
                      [NicSide(n["name"], tuple(n.get("gpus", ())), n.get("numaNode")) for n in hardware.get("nics", [])])


@raises(CLUSTER)
def check_cluster_dra(document: ProfileFile, data: dict[str, Any], carriers: Carriers) -> list[Diagnostic]:
    """A cluster's `dra` against its Kubernetes, its scheduler and its network provider; multi-node NVLink without
    ComputeDomains; claims the drivers cannot align."""
    config = data.get("dra")
    provider = provider_of(data.get("network", {}))
    found: list[Diagnostic] = []
    if config is None:
        if provider is not None and provider.dra_devices:
            found.append(Diagnostic(document.location("network", "provider"),
                                    f"provider '{provider.name.value}' hands out NICs through Dynamic Resource "
                                    "Allocation, and the cluster does not allocate through it",
                                    "add `dra: {}` to the cluster (Kubernetes 1.34 or later)"))
        for i, (pool, hardware) in enumerate(carriers):
            if derive.multi_node_nvlink(hardware):
                found.append(_no_compute_domain(document, ("nodePools", i, "hardware"), pool, hardware,
                                                "add `dra: {}` to the cluster so that each job joins a ComputeDomain"))
        return found
    version = data.get("kubernetesVersion", "")
    if version and _version(version) < dra.FIRST_KUBERNETES:
        first = ".".join(map(str, dra.FIRST_KUBERNETES))
        found.append(Diagnostic(document.location("kubernetesVersion"),
                                f"`dra` needs Kubernetes {first} or later, which serves {dra.API_VERSION}; the cluster "
                                f"runs {version}",
                                f"raise `kubernetesVersion` to {first} or later, or remove `dra`"))
    found += _check_class_names(document, config)
    if admission.scheduler_of(data) == admission.KUEUE:
        release = named(data.get("scheduling", {}).get("kueueVersion"))
        if release.minor < dra.KUEUE_FIRST_MINOR:
            found.append(Diagnostic(document.location("scheduling", "kueueVersion"),
                                    f"Kueue {release_name(release.minor)} does not count devices claimed through a "
                                    f"ResourceClaimTemplate unless a feature gate turns on its alpha deviceClassMappings "
                                    f"(on by default from {release_name(dra.KUEUE_FIRST_MINOR)}), so its quotas would not "
                                    "hold the GPUs",
                                    f"upgrade Kueue to {release_name(dra.KUEUE_FIRST_MINOR)} or later, or remove `dra`"))
    if admission.scheduler_of(data) == admission.VOLCANO and data.get("scheduling", {}).get("queues"):
        found.append(Diagnostic(document.location("dra", at_key=True),
                                "Volcano's queues count what pods request, and a device claimed through DRA is no "
                                "request (volcano-sh/volcano #4400): the capability of the cluster's queues holds none "
                                "of the devices its workers claim (GPUs, and NICs where they are claimed too) and does "
                                "not limit them",
                                "to limit each queue's GPUs, use Kueue (`scheduling.scheduler: kueue`), which counts "
                                "claimed devices", Severity.WARNING))
    if provider is not None and not provider.dra_devices and data.get("rails"):
        found.append(Diagnostic(document.location("dra", at_key=True),
                                f"GPUs are claimed through DRA and the rails through '{provider.name.value}': the "
                                "scheduler cannot put a worker's NICs under the PCIe root of its GPUs",
                                f"use `network.provider: {_nic_claiming_provider()}` to claim the NICs beside the "
                                "GPUs", Severity.WARNING))
    for i, (pool, hardware) in enumerate(carriers):
        if derive.multi_node_nvlink(hardware) and config.get("computeDomains") is False:
            found.append(_no_compute_domain(document, ("dra", "computeDomains"), pool, hardware,
                                            "remove `computeDomains: false` once the driver's ComputeDomains run"))
        if provider is not None and provider.dra_devices:
            found += _check_alignment(document, data, i, pool, hardware)
    return found


def _check_class_names(document: ProfileFile, config: dict[str, Any]) -> list[Diagnostic]:
    """The NIC DeviceClass the infra chart writes must not take the name of the GPU class, nor of one NVIDIA's driver
    installs: it would replace that class (GPU requests would select NICs), and Kueue refuses a Configuration that maps
    one DeviceClass to two resources (pkg/config/validation.go, validateDeviceClassMappings)."""
    gpu = config.get("gpuDeviceClass", dra.GPU_DEVICE_CLASS)
    nic = config.get("nicDeviceClass", dra.NIC_DEVICE_CLASS)
    if nic == gpu or nic in dra.DRIVER_CLASSES:
        said = "the GPU DeviceClass" if nic == gpu else "a DeviceClass NVIDIA's GPU DRA driver installs"
        return [Diagnostic(document.location("dra", "nicDeviceClass" if "nicDeviceClass" in config else "gpuDeviceClass"),
                           f"the NIC DeviceClass '{nic}' is {said}: the infra chart would replace it with DRANET's "
                           "selectors, and Kueue cannot map one class to two resources",
                           "give `dra.nicDeviceClass` a name of its own")]
    if gpu in dra.DRIVER_CLASSES and gpu != dra.GPU_DEVICE_CLASS:
        return [Diagnostic(document.location("dra", "gpuDeviceClass"),
                           f"'{gpu}' is not a class of whole GPUs: NVIDIA's GPU DRA driver installs it for "
                           f"{'MIG devices' if gpu == dra.MIG_DEVICE_CLASS else 'ComputeDomains'}",
                           f"use {dra.GPU_DEVICE_CLASS}, or the name of your own class of whole GPUs")]
    return []


def _nic_claiming_provider() -> str:
    """The provider that claims the rails' NICs beside the GPUs."""
    return next(name.value for name, provider in PROVIDERS.items() if provider.dra_devices)


def _no_compute_domain(document: ProfileFile, path: tuple[str | int, ...], pool: dict[str, Any],
                       hardware: dict[str, Any], fix: str) -> Diagnostic:
    return Diagnostic(document.location(*path),
                      f"pool '{pool['name']}': hardware '{hardware['name']}' joins {hardware['gpu']['nvlinkDomainGpus']} "
                      "GPUs over NVLink across nodes, but its jobs get no ComputeDomain: without its IMEX channel NCCL "
                      "cannot use NVLink between nodes and falls back to the network", fix, Severity.WARNING)


def _check_alignment(document: ProfileFile, data: dict[str, Any], i: int, pool: dict[str, Any],
                     hardware: dict[str, Any]) -> list[Diagnostic]:
    """Claims the hardware gives nothing to align by: the GPUs and NICs are then paired by count only, and the
    scheduler may put a worker's GPU and NIC under different PCIe roots. Only where the pool has GPUs to pair."""
    if not derive.gpu_count(hardware):
        return []
    railed = {rail["nic"] for rail in data.get("rails", [])}
    groups = hardware_groups(hardware)
    numa = sorted(name for name, group in groups.items() if name in railed and not group.said
                  and group.basis == NIC_NUMA_NODE)
    unknown = sorted(name for name, group in groups.items() if name in railed and not group.said and name not in numa)
    fix = ("say which GPUs sit beside each NIC (`nics[].gpus`) or the GPU-NIC distance (`gpu.nicDistance`), read with "
           "`nvidia-smi topo -m`")
    found = []
    if numa:
        found.append(Diagnostic(document.location("nodePools", i, "hardware"),
                                f"pool '{pool['name']}': hardware '{hardware['name']}' says only the NUMA node of NICs "
                                f"{', '.join(numa)}, and NVIDIA's GPU DRA driver and DRANET publish no {dra.NUMA_NODE} "
                                f"({dra.DRIVERS[dra.GPU_DRIVER].source}; {dra.DRIVERS[dra.NIC_DRIVER].source}), so the "
                                "claims pair them with GPUs by count only and the scheduler may put a worker's GPU and "
                                "NIC under different PCIe roots", fix, Severity.WARNING))
    if unknown:
        found.append(Diagnostic(document.location("nodePools", i, "hardware"),
                                f"pool '{pool['name']}': hardware '{hardware['name']}' says nothing of where NICs "
                                f"{', '.join(unknown)} sit, so the claims pair them with GPUs by count only and the "
                                "scheduler may put a worker's GPU and NIC under different PCIe roots", fix,
                                Severity.WARNING))
    return found


@raises(JOB)
def check_job_devices(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], hardware: dict[str, Any],
                      shape: derive.Layout) -> list[Diagnostic]:
    """On a cluster that claims NICs beside GPUs: each rail's NIC takes the same number of the worker's GPUs, and no
    more than the hardware puts beside it."""
    if "dra" not in cluster:
        return []
    topology = job.get("scheduling", {}).get("topology")
    if topology is not None and admission.scheduler_of(cluster) == admission.KUEUE:
        # kubernetes-sigs/kueue site/content/en/docs/concepts/dynamic_resource_allocation.md, Limitations: "No DRA +
        # Topology Aware Scheduling"; its TAS sizes a pod by its spec's requests (tas_flavorassigner.go).
        return [Diagnostic(document.location("scheduling", "topology", at_key=True),
                           "Kueue's topology-aware scheduling does not count devices claimed through DRA: it sizes a "
                           "worker by its pod's requests, which hold no GPU or NIC here, so it may put several workers "
                           "on one node, whose claims cannot all be met, and the job never runs",
                           "remove `scheduling.topology` (the scheduler then places the claims; a ComputeDomain job's "
                           "workers share one NVLink clique by pod affinity)")]
    provider = provider_of(cluster.get("network", {}))
    if provider is None or not provider.dra_devices:
        return []
    names = job.get("rails", [r["name"] for r in derive.pool_rails(cluster, hardware)])
    rails = [ClaimedRail(r["name"], r["nic"], None) for r in cluster.get("rails", []) if r["name"] in names]
    groups = hardware_groups(hardware)
    if any(rail.nic not in groups for rail in rails):
        return []  # a rail over a NIC the hardware lacks is reported at the rail
    found = pair_devices(shape.gpus_per_worker, rails, groups, nics_claimed=True)
    if not isinstance(found, SplitProblem):
        return []
    where = document.location("rails") if "rails" in job else document.location(
        "gpusPerWorker" if "gpusPerWorker" in job else "totalGpus" if "totalGpus" in job else "pool")
    return [Diagnostic(where, found.message, found.fix)]
