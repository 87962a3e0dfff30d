"""`mpigen import` of a cluster's exported objects: Nodes and the network operators' objects -> one Cluster
profile and a Hardware profile per pool (adopt/pools.py groups, adopt/profiles.py writes the text).

Whatever is not read is said in a note: unknown kinds (skipped), Secrets (skipped, never read further, their values
never repeated), MPIJobs (left to job adoption). A partial export (a Node without status, a SriovNetworkNodeState
without interfaces) or one without Nodes is an AdoptionError: a profile from half the facts would look whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from mpigen.adopt.node_facts import NodeFacts
from mpigen.adopt.pools import Pool, group_pools, one_provider, wanted, with_network
from mpigen.adopt.profiles import GUESS, cluster_text, hardware_text
from mpigen.adopt.result import Adoption, AdoptionError
from mpigen.inventory.nodes import NODE_KIND, read_node
from mpigen.inventory.operators import (
    NIC_CLUSTER_POLICY_KIND,
    SRIOV_POLICY_KIND,
    SRIOV_STATE_KIND,
    PfState,
    read_attachment,
    read_node_state,
    read_plugin_resources,
)
from mpigen.load.problems import yaml_problem
from mpigen.readback.documents import read_manifest_file
from mpigen.readback.findings import RenderedObject
from mpigen.readback.inputs import MAX_MANIFEST_FILE_BYTES, InputError, read_text
from mpigen.vocabulary.kubernetes import dns1035_label_problems
from mpigen.vocabulary.multus import NAD_KIND
from mpigen.vocabulary.reserved import reserved_namespace_owner

EXPORT_COMMAND = ("kubectl get nodes,namespaces,configmaps,networkattachmentdefinitions,sriovnetworknodestates,"
                  "sriovnetworknodepolicies,nicclusterpolicies,clusterpolicies -A -o yaml > cluster.yaml")
"""The one command that exports everything import reads (a kind the cluster has no CRD for: leave it out)."""
READ_KINDS = frozenset({NODE_KIND, "Namespace", "ConfigMap", NAD_KIND, SRIOV_STATE_KIND, SRIOV_POLICY_KIND,
                        NIC_CLUSTER_POLICY_KIND, "ClusterPolicy"})
DEFAULT_NAMESPACE = "default"
MPIJOB_GROUP = "kubeflow.org/"


def read_export(paths: Sequence[Path]) -> list[RenderedObject]:
    """The objects of exported files, read as kubectl reads them (Lists expanded, JSON by its suffix); AdoptionError,
    `file:line:col: what; how to fix it` where one is not valid YAML or JSON."""
    documents: list[RenderedObject] = []
    for path in paths:
        read, findings = read_manifest_file(path)
        if findings:
            raise AdoptionError(f"{_where(path) or findings[0].format()}; export it again with `kubectl get ... -o yaml`")
        documents += read
    return documents


def _where(path: Path) -> str | None:
    """`file:line:col: what is wrong` of a YAML file the parser refuses, where it says where."""
    try:
        list(YAML(typ="safe", pure=True).load_all(read_text(path, MAX_MANIFEST_FILE_BYTES)))
    except MarkedYAMLError as exc:
        mark, what, fix = yaml_problem(exc)
        if mark is not None:
            return f"{path.as_posix()}:{mark.line + 1}:{mark.column + 1}: {what}; {fix}"
    except (YAMLError, InputError):
        return None
    return None


def is_mpijob(document: RenderedObject) -> bool:
    """An MPIJob of any kubeflow.org version: job adoption reads it (and refuses the versions it cannot)."""
    return document.kind == "MPIJob" and document.api_version.startswith(MPIJOB_GROUP)


def adopt_cluster(documents: Sequence[RenderedObject], cluster: str, selectors: Sequence[Mapping[str, str]] = (),
                  facts: Mapping[str, NodeFacts] | None = None) -> tuple[Adoption, tuple[RenderedObject, ...]]:
    """The profiles of the exported cluster and the notes on the import, with the MPIJobs found (for job adoption).
    `selectors`: import only the nodes one of them picks (`--nodes`); `facts`: the tools' output by node
    (`--node-facts`), given to that node's pool."""
    problems = dns1035_label_problems(cluster)
    if problems:
        raise AdoptionError(f"--cluster {cluster}: {problems[0]}")
    nodes, states, resources, attachments, namespaces, kubelets = [], {}, [], [], [], {}
    skipped: Counter[str] = Counter()
    secrets, mpijobs = 0, []
    for document in documents:
        obj, kind = document.obj, document.kind
        if kind == "Secret":
            secrets += 1
        elif is_mpijob(document):
            mpijobs.append(document)
        elif kind == NODE_KIND:
            node = read_node(obj, document.source)
            if node is None or not isinstance(obj.get("status"), dict):
                raise AdoptionError(f"{document.source}: Node {document.name or '?'} has no name or no .status: a "
                                    "partial export; export the nodes whole with `kubectl get nodes -o yaml`")
            nodes.append(node)
            info = obj["status"].get("nodeInfo")
            if isinstance(info, dict) and isinstance(info.get("kubeletVersion"), str):
                kubelets[node.name] = info["kubeletVersion"]
        elif kind == SRIOV_STATE_KIND:
            read = read_node_state(obj)
            if read is None:
                raise AdoptionError(f"{document.source}: SriovNetworkNodeState {document.name or '?'} has no "
                                    ".status.interfaces: the operator has not reported this node yet; export it "
                                    "again once `kubectl get sriovnetworknodestates -A` shows syncStatus Succeeded")
            states[document.name] = read
        elif kind == "Namespace":
            # Not Kubernetes' own nor a controller's, which validate refuses for jobs; another `kube-*` one (a site's
            # `kube-openmpi`) is a namespace like any other (vocabulary/reserved.py).
            if document.name and document.name != DEFAULT_NAMESPACE and reserved_namespace_owner(document.name) is None:
                namespaces.append(document.name)
        elif kind in READ_KINDS:
            resources += read_plugin_resources(obj)
            if (attachment := read_attachment(obj)) is not None:
                attachments.append(attachment)
        else:
            skipped[f"{document.api_version}/{kind}" if document.api_version else kind or "(no kind)"] += 1
    if not nodes:
        raise AdoptionError(f"no Node in the input: export them with `{EXPORT_COMMAND}` (at least `kubectl get "
                            "nodes -o yaml`)")
    picked = wanted(nodes, selectors)
    if not picked:
        raise AdoptionError("no exported Node carries the labels --nodes names; `kubectl get nodes --show-labels` "
                            "shows the labels they have")
    pools = [with_network(pool, resources, _states(states), attachments) for pool in group_pools(picked)]
    provider, prefix = one_provider(pools)
    facts = facts or {}
    unknown = sorted(set(facts) - {node.name for node in picked})
    if unknown:
        raise AdoptionError(f"--node-facts names {', '.join(unknown)}, which is no imported Node; give a node of the "
                            "export (`kubectl get nodes`)")
    profiles, notes, guesses = [], [], {}
    for pool in pools:
        text, count = hardware_text(pool, next((facts[n.name] for n in pool.nodes if n.name in facts), None))
        profiles.append(text)
        guesses[f"hardware/{pool.name}.yaml"] = count
    text, count = cluster_text(cluster, pools, provider, prefix, sorted(kubelets.items()), sorted(set(namespaces)))
    profiles.append(text)
    guesses[f"clusters/{cluster}.yaml"] = count
    notes += _notes(pools, skipped, secrets, guesses, len(nodes) - len(picked))
    notes += [f"pool {pool.name}: the NICs of {', '.join(odd)} differ from {pool.first.name}'s, whose facts the "
              f"profile holds: compare `kubectl get sriovnetworknodestates -A -o yaml`"
              for pool in pools if (odd := _disagreeing(pool, states))]
    return Adoption(tuple(profiles), tuple(notes)), tuple(mpijobs)


def _shape(states: tuple[PfState, ...] | None) -> tuple[tuple[object, ...], ...] | None:
    """What a node's PFs are, leaving out the node and its PCI addresses (which may differ between alike nodes)."""
    if states is None:
        return None
    return tuple((pf.name, pf.vendor, pf.device_id, pf.vf_device_id, pf.driver, pf.link_type, pf.speed_gbps, pf.num_vfs)
                 for pf in states)


def _disagreeing(pool: Pool, states: Mapping[str, tuple[PfState, ...]]) -> list[str]:
    first = _shape(states.get(pool.first.name))
    return [node.name for node in pool.nodes[1:] if _shape(states.get(node.name)) != first]


def _states(states: Mapping[str, tuple[PfState, ...]]) -> Mapping[str, tuple[PfState, ...]]:
    return dict(sorted(states.items()))


def _notes(pools: Sequence[Pool], skipped: Counter[str], secrets: int, guesses: Mapping[str, int],
           left_out: int) -> list[str]:
    notes = [f"pool {pool.name}: {len(pool.nodes)} node(s), {pool.provider}, {len(pool.rdma)} rail(s)" for pool in pools]
    notes += [f"pool {pool.name}: node {node.name} is {node.state} now: counted in the pool, the taints of its state "
              "not declared" for pool in pools for node in pool.nodes if node.state]
    if left_out:
        notes.append(f"{left_out} node(s) left out: --nodes does not pick them")
    for kind, count in sorted(skipped.items()):
        notes.append(f"skipped {count} object(s) of kind {kind}: import does not read them")
    if secrets:
        notes.append(f"skipped {secrets} Secret(s): never copied into a profile")
    for path, count in sorted(guesses.items()):
        if count:
            notes.append(f"{path}: {count} guess(es) left, each marked `# {GUESS}` with what to read")
    return notes
