"""A Cluster profile as the model's Cluster: its network with the provider's defaults, rails, node pools,
GitOps tool and gang scheduling."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile, to_plain
from mpigen.model import (
    Backend,
    Cluster,
    GitOps,
    GitOpsApplications,
    GitOpsTool,
    Hardware,
    InfinibandGuids,
    Ipam,
    Network,
    NodePool,
    Rail,
    SourceRef,
    Taint,
    admission,
    claimed,
    defaults,
    derive,
    names,
)
from mpigen.providers import DEFAULT_PROVIDER, PROVIDERS, setting_defaults
from mpigen.resolve.hardware import label_pairs
from mpigen.resolve.scheduling import cluster_scheduling
from mpigen.vocabulary.gitops import GIT_REPOSITORY

DEFAULT_NETWORK = {"provider": DEFAULT_PROVIDER.value, "cniVersion": "0.3.1", **setting_defaults()}


def resolved_cluster(document: ProfileFile, hardware: dict[str, Hardware],
                     hardware_data: dict[str, dict[str, Any]]) -> Cluster:
    data = to_plain(document.data)
    network = {**DEFAULT_NETWORK, **data.get("network", {})}
    provider = PROVIDERS[network["provider"]]
    prefix = network.get("resourcePrefix", provider.resource_prefix)
    rails = []
    for r in data.get("rails", []):
        resource_name = r.get("resourceName", names.default_rail_resource_name(r["name"]))
        ipam = Ipam(range=r["ipam"]["range"], exclude=tuple(r["ipam"].get("exclude", ()))) if "ipam" in r else None
        rails.append(Rail(name=r["name"], nic_name=r["nic"], resource_name=resource_name,
                          resource=names.rail_resource(prefix, resource_name), ipam=ipam,
                          host_interface=r.get("hostInterface"), vlan=r.get("vlan"), vlan_qos=r.get("vlanQoS")))
    offers = {name: admission.pool_offer(data, hardware_data[name], prefix, provider.exclusive_devices,
                                         provider.dra_devices) for name in {p["hardware"] for p in data["nodePools"]}}
    pools = tuple(NodePool(name=p["name"], hardware=hardware[p["hardware"]], nodes=p["nodes"],
                           node_labels=label_pairs(p.get("nodeLabels")),
                           offer=offers[p["hardware"]].resources, claimed=offers[p["hardware"]].claimed,
                           taints=tuple(Taint(t["key"], t["effect"], t.get("value")) for t in p.get("taints", ())))
                  for p in data["nodePools"])
    return Cluster(
        name=data["name"],
        source=document.source,
        kubernetes_version=data["kubernetesVersion"],
        namespaces=tuple(data["namespaces"]),
        existing_namespaces=tuple(data.get("existingNamespaces", ())),
        network=Network(provider=provider.name, resource_prefix=prefix,
                        device_plugin_namespace=network["devicePluginNamespace"],
                        cni_version=network["cniVersion"], operator_namespace=network["operatorNamespace"],
                        num_vfs=network.get("numVfs"), ssh_port=network["sshPort"],
                        infiniband_guids=InfinibandGuids(network["infinibandGuids"])),
        pools=pools,
        rails=tuple(rails),
        gitops=_gitops(data["gitops"]) if "gitops" in data else None,
        cpu_manager_policy=data.get("cpuManagerPolicy"),
        pod_security=tuple(sorted(data.get("podSecurity", {}).items())),
        scheduling=cluster_scheduling(data, pools),
        job_backend=Backend(data.get("jobBackend", defaults.JOB_BACKEND)),
        launcher_pool=data.get("launcherPool"),
        dra=claimed.dra_of(data),
    )


def _gitops(data: dict[str, Any]) -> GitOps:
    tool = GitOpsTool(data["tool"])
    given = {**defaults.GITOPS, **data, "namespace": derive.gitops_namespace(data)}
    source = data.get("sourceRef")
    return GitOps(tool=tool, repo_url=given.get("repoURL"), revision=given["revision"], path=given["path"],
                  destination=given["destination"], project=given["project"], namespace=given["namespace"],
                  source_ref=None if source is None else SourceRef(
                      kind=source.get("kind", GIT_REPOSITORY), name=source["name"],
                      namespace=source.get("namespace", given["namespace"])),
                  secret_ref=data.get("secretRef"),
                  applications=GitOpsApplications(given["applications"]), values_path=data.get("valuesPath"))
