"""The objects of a job's devices under Dynamic Resource Allocation: the ResourceClaimTemplate its workers claim their
GPUs and NICs from, aligned as generator/model/devices.py pairs them, and the ComputeDomain whose IMEX channel each
worker joins on multi-node NVLink; and what a worker pod says to use them."""

from __future__ import annotations

import json
from typing import Any

from mpigen.model import Job, names
from mpigen.model.devices import DevicePair, WorkerDevices
from mpigen.model.names import rail_interface
from mpigen.objects.labels import ChartRef, metadata
from mpigen.vocabulary import dra
from mpigen.vocabulary.gitops import ARGOCD_SYNC_OPTIONS, SKIP_DRY_RUN_ON_MISSING_RESOURCE


def nic_selector(pair: DevicePair) -> str:
    """The rail's NIC, by its interface on the node (DRANET's `ifName`): the NIC the hardware profile names."""
    return f'device.attributes["{dra.NIC_DRIVER}"].{dra.NIC_INTERFACE_ATTRIBUTE} == {json.dumps(pair.interface)}'


def claim_requests(devices: WorkerDevices) -> list[dict[str, Any]]:
    """One GPU request and one NIC request per pair, each counted exactly."""
    requests: list[dict[str, Any]] = []
    for pair in devices.pairs:
        if pair.gpus:
            requests.append({"name": pair.gpu_request,
                             "exactly": {"deviceClassName": devices.gpu_class, "count": pair.gpus}})
        if pair.nic is not None and devices.nic_class is not None:
            exactly: dict[str, Any] = {"deviceClassName": devices.nic_class, "count": 1}
            if pair.interface:
                exactly["selectors"] = [{"cel": {"expression": nic_selector(pair)}}]
            requests.append({"name": pair.nic_request, "exactly": exactly})
    return requests


def claim_constraints(devices: WorkerDevices) -> list[dict[str, Any]]:
    """Each pair's GPUs and NIC under one PCIe root (or NUMA node), where the hardware says where they sit."""
    return [{"requests": [pair.gpu_request, pair.nic_request], "matchAttribute": attribute}
            for pair in devices.pairs
            if pair.gpus and pair.nic is not None and devices.nic_class is not None
            and (attribute := pair.alignment.attribute) is not None]


def claim_config(devices: WorkerDevices) -> list[dict[str, Any]]:
    """DRANET's opaque config: each rail's interface inside the pod gets the rail's name, which NCCL is told."""
    if devices.nic_class is None:
        return []
    return [{"requests": [pair.nic_request],
             "opaque": {"driver": dra.NIC_DRIVER, "parameters": {"interface": {"name": rail_interface(pair.rail)}}}}
            for pair in devices.pairs if pair.rail is not None and pair.nic is not None]


def build_device_claim_template(job: Job, chart: ChartRef, run: str) -> dict[str, Any]:
    """The ResourceClaimTemplate every worker of the run claims its devices from (one ResourceClaim per pod)."""
    devices = _devices(job)
    claim: dict[str, Any] = {"requests": claim_requests(devices)}
    constraints = claim_constraints(devices)
    if constraints:
        claim["constraints"] = constraints
    config = claim_config(devices)
    if config:
        claim["config"] = config
    return {
        "apiVersion": dra.API_VERSION,
        "kind": dra.RESOURCE_CLAIM_TEMPLATE,
        "metadata": metadata(names.device_claim_template_name(run), chart, job.namespace),
        "spec": {"spec": {"devices": claim}},
    }


def build_compute_domain(job: Job, chart: ChartRef, run: str) -> dict[str, Any]:
    """The run's ComputeDomain: its controller starts an IMEX daemon on each node a worker lands on and makes the
    channel's ResourceClaimTemplate. `numNodes: 0`, as the driver recommends (its IMEXDaemonsWithDNSNames default):
    the launcher waits for the workers before any rank shares GPU memory."""
    return {
        "apiVersion": dra.COMPUTE_DOMAIN_API_VERSION,
        "kind": dra.COMPUTE_DOMAIN_KIND,
        # A custom resource: Argo CD may sync it before the GPU DRA driver's CRD exists (as every other of mpigen's).
        "metadata": metadata(names.compute_domain_name(run), chart, job.namespace,
                             annotations={ARGOCD_SYNC_OPTIONS: SKIP_DRY_RUN_ON_MISSING_RESOURCE}),
        "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": names.channel_template_name(run)}}},
    }


def pod_claims(job: Job, run: str) -> list[dict[str, str]]:
    """A worker pod's `spec.resourceClaims`: its devices, and its ComputeDomain's channel."""
    devices = job.devices
    if devices is None:
        return []
    claims = []
    if devices.pairs:
        claims.append({"name": names.DEVICES_CLAIM, "resourceClaimTemplateName": names.device_claim_template_name(run)})
    if devices.channel:
        claims.append({"name": names.CHANNEL_CLAIM, "resourceClaimTemplateName": names.channel_template_name(run)})
    return claims


def container_claims(job: Job) -> list[dict[str, str]]:
    """The worker container's `resources.claims`: every claim of its pod."""
    return [{"name": claim["name"]} for claim in pod_claims(job, "")]


def _devices(job: Job) -> WorkerDevices:
    if job.devices is None:
        raise AssertionError("a job without DRA devices has no ResourceClaimTemplate")
    return job.devices
