"""What a cluster profile must hold together: unique names, the namespaces and prefix it names, the hardware
of its pools, and rails over NICs that hardware has. The network provider's own rules are in network.py."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile, to_plain
from mpigen.model import derive, names
from mpigen.providers import provider_of
from mpigen.support.diagnostics import Diagnostic, did_you_mean, raises
from mpigen.support.profile_rules import CLUSTER
from mpigen.validate.devices import check_cluster_dra
from mpigen.validate.facts import check_rail_facts
from mpigen.validate.fields import check_label_keys, check_release_name, duplicates
from mpigen.validate.gitops import GITOPS_OBJECTS, GITOPS_TOOLS, check_cluster_gitops
from mpigen.validate.index import Index, resolve_hardware
from mpigen.validate.network import Carriers, check_ipam, check_provider, check_rail_carriers
from mpigen.validate.scheduling import check_cluster_scheduling
from mpigen.vocabulary import kubernetes, reserved


@raises(CLUSTER)
def check_cluster(document: ProfileFile, index: Index) -> list[Diagnostic]:
    data = to_plain(document.data)
    rails = data.get("rails", [])
    found = _check_names(document, data)
    carriers, problems = _pool_hardware(document, data["nodePools"], index)
    found += problems
    if carriers is not None:
        found += _check_rail_nics(document, rails, carriers)
    usable = carriers if carriers is not None else []
    found += check_ipam(document, rails, usable)
    found += check_provider(document, data, usable)
    found += check_rail_facts(document, data, usable, index.hardware)
    found += check_cluster_gitops(document, data.get("gitops"))
    found += check_cluster_scheduling(document, data, carriers)
    found += _check_launcher_pool(document, data, carriers)
    found += check_cluster_dra(document, data, usable)
    return found


def _check_names(document: ProfileFile, data: dict[str, Any]) -> list[Diagnostic]:
    """Names the cluster gives: each once, within Kubernetes' limits, and those it refers to its own."""
    pools, rails = data["nodePools"], data.get("rails", [])
    found = list(duplicates(document, pools, "name", ("nodePools",), "node pool"))
    found += duplicates(document, data["namespaces"], "", ("namespaces",), "namespace")
    existing = data.get("existingNamespaces", [])
    found += _check_reserved_namespaces(document, data)
    for i, namespace in enumerate(existing):
        if namespace not in data["namespaces"]:
            found.append(Diagnostic(document.location("existingNamespaces", i), f"`existingNamespaces` names "
                                    f"'{namespace}', which is not in `namespaces`",
                                    did_you_mean(namespace, data["namespaces"]) or "add it to `namespaces` too"))
    found += duplicates(document, rails, "name", ("rails",), "rail")
    found += duplicates(document, rails, "nic", ("rails",), "rail NIC")
    resources = [r.get("resourceName", names.default_rail_resource_name(r["name"])) for r in rails]
    found += duplicates(document, resources, "", ("rails",), "rail resource name")
    found += check_release_name(document, names.infra_chart_name(data["name"]), "infra chart release")
    for namespace in data.get("podSecurity", {}):
        if namespace not in data["namespaces"]:
            found.append(Diagnostic(document.location("podSecurity", namespace, at_key=True),
                                    f"`podSecurity` names namespace '{namespace}', which is not in `namespaces`",
                                    did_you_mean(namespace, data["namespaces"])))
    prefix = data.get("network", {}).get("resourcePrefix", "")
    if kubernetes.in_kubernetes_domain(prefix) or prefix.startswith("requests."):
        found.append(Diagnostic(document.location("network", "resourcePrefix"),
                                f"'{prefix}' cannot prefix an extended resource: Kubernetes reserves it",
                                "use the device plugin's own domain, e.g. nvidia.com"))
    for i, pool in enumerate(pools):
        found += check_label_keys(document, pool.get("nodeLabels", {}), ("nodePools", i, "nodeLabels"))
        found += _check_taints(document, pool.get("taints", []), ("nodePools", i, "taints"))
    return found


def _check_taints(document: ProfileFile, taints: list[dict[str, str]], path: tuple[str | int, ...]) -> list[Diagnostic]:
    """Keys within Kubernetes' limits, and one taint per key and effect, as a Node holds them (the API server
    refuses a Node with two taints of one key and effect)."""
    found = list(duplicates(document, [f"{t['key']}:{t['effect']}" for t in taints], "", path, "taint"))
    for i, taint in enumerate(taints):
        prefix, _, name = taint["key"].rpartition("/")
        if len(prefix) > 253 or len(name) > 63:
            found.append(Diagnostic(document.location(*path, i, "key"), f"taint key '{taint['key']}' is too long",
                                    "Kubernetes allows a prefix of 253 and a name of 63 characters"))
    return found


def _check_launcher_pool(document: ProfileFile, data: dict[str, Any], carriers: Carriers | None) -> list[Diagnostic]:
    """`launcherPool` names a pool whose node labels pick its nodes: they become the launchers' node selector."""
    name = data.get("launcherPool")
    if name is None:
        return []
    pools = [pool["name"] for pool in data["nodePools"]]
    if name not in pools:
        return [Diagnostic(document.location("launcherPool"), f"`launcherPool` names node pool '{name}', which the "
                           "cluster does not have", did_you_mean(name, pools))]
    for pool, hardware in carriers or ():
        if pool["name"] == name and not derive.pool_node_labels(pool, hardware):
            return [Diagnostic(document.location("launcherPool"), f"pool '{name}' has no node labels, so the "
                               "launchers would get no node selector and could run on any node",
                               f"give pool '{name}' `nodeLabels` that only its nodes carry")]
    return []


# The `network` settings that name the namespace a component of the cluster's network runs in.
NAMESPACE_SETTINGS = {"operatorNamespace": "SR-IOV network operator", "devicePluginNamespace": "device plugin"}


def component_namespaces(data: dict[str, Any]) -> dict[str, str]:
    """The namespaces the cluster profile says its own components run in, each with who and the setting saying so:
    its GitOps tool's (`gitops.namespace`, or the tool's default) and its network provider's."""
    found: dict[str, str] = {}
    gitops = data.get("gitops")
    if gitops is not None:
        found[derive.gitops_namespace(gitops)] = (f"this cluster's {GITOPS_TOOLS[gitops['tool']]} (its `gitops.namespace`, "
                                                  f"where its {GITOPS_OBJECTS[gitops['tool']]}s live)")
    network = data.get("network", {})
    provider = provider_of(network)
    for key, what in NAMESPACE_SETTINGS.items():
        if provider is not None and key in provider.settings:
            found.setdefault(str(network.get(key, provider.settings[key])), f"this cluster's {what} (`network.{key}`)")
    return found


def _check_reserved_namespaces(document: ProfileFile, data: dict[str, Any]) -> list[Diagnostic]:
    """The infra chart creates, owns and labels each namespace of the cluster with the Pod Security level its jobs
    need, but those the profile says exist already (their NOTES tell the admin to loosen the label). Kubernetes' own
    namespaces exist, so a Helm or Flux install fails ("exists and cannot be imported into the current release");
    `default` may be named as existing, Kubernetes' system namespaces never (vocabulary/reserved.py says what each
    is for: kube-system holds the cluster's privileged system pods, which a Pod Security label there would refuse).
    Another `kube-*` namespace may be named as existing (`kube-openmpi`), but the infra chart creates none: Kubernetes
    keeps the prefix for its system namespaces. Nor is a controller's namespace, named by the profile (its GitOps
    tool's, its network operator's or device plugin's) or the upstream default of one (vocabulary/reserved.py): a job
    there could read the controller's Secrets by `secretKeyRef` (Argo CD's `argocd-secret`, Flux's Git credentials),
    and its label would refuse the controller's own pods."""
    found = []
    existing = data.get("existingNamespaces", [])
    components = component_namespaces(data)
    fix = "run the jobs in a namespace of their own (e.g. ml-training)"
    for i, namespace in enumerate(data["namespaces"]):
        owner = components.get(namespace) or reserved.reserved_namespace_owner(namespace)
        if namespace in reserved.SYSTEM_NAMESPACES:
            found.append(Diagnostic(document.location("namespaces", i), f"namespace '{namespace}' is Kubernetes' own "
                                    f"and no place for jobs: {reserved.SYSTEM_NAMESPACES[namespace]}", fix))
        elif owner is not None:
            labelled = ("the infra chart's NOTES would have you loosen its Pod Security label for the jobs"
                        if namespace in existing else "the infra chart would create it and set its Pod Security label "
                        "for the jobs")
            found.append(Diagnostic(document.location("namespaces", i), f"namespace '{namespace}' belongs to {owner}: "
                                    "a job there could read the controller's Secrets by `secretKeyRef`, and "
                                    f"{labelled}, which its own pods may not pass", fix))
        elif namespace.startswith(reserved.SYSTEM_NAMESPACE_PREFIX) and namespace not in existing:
            found.append(Diagnostic(document.location("namespaces", i), f"namespace '{namespace}' would be created by "
                                    "the infra chart, but Kubernetes keeps the prefix `kube-` for its own system "
                                    "namespaces (its documentation: avoid creating namespaces so named)",
                                    f"{fix}, or list it in `existingNamespaces` too if it exists already"))
        elif namespace == "default" and namespace not in existing:
            found.append(Diagnostic(document.location("namespaces", i), f"namespace '{namespace}' is Kubernetes' own: "
                                    "the infra chart creates and labels every namespace of `namespaces`, so an install "
                                    "would fail on it (it exists already)", f"{fix}, or list it in `existingNamespaces` "
                                    "too"))
    return found


def _pool_hardware(document: ProfileFile, pools: list[dict[str, Any]],
                   index: Index) -> tuple[Carriers | None, list[Diagnostic]]:
    """Each pool with its hardware; None if a pool's hardware is unknown (reported here, or broken already)."""
    found: list[Diagnostic] = []
    carriers: Carriers = []
    resolvable = True
    for i, pool in enumerate(pools):
        hardware, problems = resolve_hardware(document, ("nodePools", i, "hardware"), pool["hardware"], index)
        found += problems
        if hardware is None:
            resolvable = False
        else:
            carriers.append((pool, hardware))
    return (carriers if resolvable else None), found


def _check_rail_nics(document: ProfileFile, rails: list[dict[str, Any]], carriers: Carriers) -> list[Diagnostic]:
    """Every rail runs over a NIC some pool's hardware has, the same kind of link on each."""
    found: list[Diagnostic] = []
    all_nics: set[str] = set()
    for _, hardware in carriers:
        all_nics.update(derive.nic_names(hardware))
    for i, rail in enumerate(rails):
        if rail["nic"] not in all_nics:
            found.append(Diagnostic(document.location("rails", i, "nic"),
                                    f"rail '{rail['name']}' uses NIC '{rail['nic']}', which no node "
                                    "pool's hardware has", did_you_mean(rail["nic"], all_nics) if all_nics else
                                    "the hardware of this cluster's pools has no NICs at all: add it to `nics` "
                                    "of the hardware profile, or remove the rail"))
            continue
        found += check_rail_carriers(document, i, rail, carriers)
    return found
