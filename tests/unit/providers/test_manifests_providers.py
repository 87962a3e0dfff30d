"""Network providers (generator/providers/): for every provider, and every MPI implementation, the example fleet
compiles, renders with real Helm, and passes `mpigen check --strict` with the upstream CRDs of the objects it writes
(sriov-network-operator's, Argo CD's and Flux's); the whole provider x MPI x hardware cross is the matrix's.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import PROFILES, Renders, SchemaSets, cached_check, invoke_mpigen

from mpigen.commands.pipeline import CompileResult, compile_profiles

DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
RAILS = DGX_LAB[DGX_LAB.index("rails:\n"):DGX_LAB.index("acceptance:")]  # (and cpuManagerPolicy), not acceptance
assert RAILS.count("  - name: rail") == 4
NO_IPAM_RAILS = re.sub(r"    ipam:\n      range: [0-9./]+\n", "", RAILS)


def _cluster(provider: str) -> str:
    text = DGX_LAB.replace("  provider: sriov-device-plugin\n", f"  provider: {provider}\n")
    assert f"provider: {provider}" in text
    if provider == "tcp":
        return text.replace(RAILS, "")
    if provider == "host-network":
        return text.replace(RAILS, NO_IPAM_RAILS)
    return text


def _edits(provider: str, implementation: str) -> dict[str, str | None]:
    edits: dict[str, str | None] = {"clusters/dgx-lab.yaml": _cluster(provider)}
    for job in ("resnet50-dgx", "tensorflow-benchmarks", "pi"):
        text = (PROFILES / "jobs" / f"{job}.yaml").read_text(encoding="utf-8")
        if implementation != "OpenMPI":
            text += f"mpiImplementation: {implementation}\n"
        edits[f"jobs/{job}.yaml"] = text
    return edits


COMBINATIONS = [("sriov-device-plugin", "OpenMPI"), ("sriov-network-operator", "Intel"), ("rdma-shared", "MPICH"),
                ("tcp", "Intel"), ("tcp", "MPICH"), ("host-network", "OpenMPI")]
"""Every provider and every MPI implementation with the example fleet's jobs, each through real Helm: every provider x
MPI x hardware, through the same `check --strict`, is the matrix's (tests/acceptance/test_matrix.py)."""


def _compile(profiles_copy, provider: str, implementation: str) -> CompileResult:
    result = compile_profiles([profiles_copy(_edits(provider, implementation))])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def _objects(result: CompileResult) -> list[dict[str, Any]]:
    return [m.obj for c in result.charts for m in c.manifests if c.directory.startswith("dgx-lab/")]


def _resnet_worker(result: CompileResult) -> dict[str, Any]:
    (mpijob,) = [o for o in _objects(result) if o["kind"] == "MPIJob"
                 and o["metadata"]["name"].startswith("resnet50-dgx-")]
    return mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]


@pytest.fixture(scope="module")
def schema_sets() -> SchemaSets:
    """check's schema sets with the CRDs below, read once for the module's checks (each of them gives the same)."""
    return SchemaSets()


@pytest.mark.parametrize(("provider", "implementation"), COMBINATIONS)
def test_each_provider_and_mpi_passes_check_with_real_helm(helm4, upstream, profiles_copy, schema_sets, provider,
                                                           implementation):
    """With Helm 4, as Argo CD 3.5 and Flux render; that Helm 3 renders every provider and MPI alike is the
    matrices' (tests/acceptance/test_matrix.py renders each chart with both)."""
    root = profiles_copy(_edits(provider, implementation))
    charts = root.parent / "charts"
    rendered = invoke_mpigen("render", root, "-o", charts)
    assert rendered.returncode == 0, rendered.stderr
    crds = [*sorted((upstream / "network" / "sriov-network-operator").glob("config__crd__bases__*.yaml")),
            upstream / "gitops" / "argocd" / "application-crd.yaml",
            *sorted((upstream / "gitops" / "flux").glob("*.yaml"))]
    # The provider changes dgx-lab's charts only (the other clusters' are the example fleet's, which the matrices
    # check): its folder is checked, which holds its charts and bootstrap files, and no other cluster's.
    with cached_check(Renders(), schema_sets):
        checked = invoke_mpigen("check", "--helm", helm4, "--strict", *(a for crd in crds for a in ("--crds", crd)),
                                charts / "dgx-lab")
    # The infra chart, every job chart and every fabric acceptance chart (under each provider's settings).
    acceptance = len(list((charts / "dgx-lab" / "acceptance").iterdir()))
    judged = 1 + len(list((charts / "dgx-lab" / "jobs").iterdir())) + acceptance
    assert acceptance == (4 if provider == "tcp" else 8)  # 2 collectives x (pair, pool), and a perftest per rail
    assert f" of {judged} chart(s)" in checked.stdout, checked.stdout
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_sriov_network_operator_objects(profiles_copy):
    objects = _objects(_compile(profiles_copy, "sriov-network-operator", "OpenMPI"))
    policies = {o["metadata"]["name"]: o for o in objects if o["kind"] == "SriovNetworkNodePolicy"}
    # One per rail and pool carrying it: only the dgx pool has the IB NICs.
    assert sorted(policies) == ["rail0-dgx", "rail1-dgx", "rail2-dgx", "rail3-dgx"]
    rail0 = policies["rail0-dgx"]
    assert rail0["metadata"]["namespace"] == "sriov-network-operator"
    # dgx-1.yaml: ib0 is PF ib0, ConnectX-4 15b3:1013, InfiniBand; 8 GPUs a node -> 8 VFs a PF by default.
    assert rail0["spec"] == {"resourceName": "rdma_rail0", "nodeSelector": {"nvidia.com/gpu.product":
                                                                           "Tesla-V100-SXM2-16GB"},
                             "numVfs": 8, "nicSelector": {"vendor": "15b3", "deviceID": "1013", "pfNames": ["ib0"]},
                             "deviceType": "netdevice", "isRdma": True, "linkType": "IB"}
    networks = {(o["kind"], o["metadata"]["name"]): o for o in objects if o["kind"] in ("SriovNetwork", "SriovIBNetwork")}
    assert sorted(networks) == sorted(("SriovIBNetwork", f"rail{i}-{ns}") for i in range(4)
                                      for ns in ("ml-training", "hpc"))
    network = networks[("SriovIBNetwork", "rail0-ml-training")]
    assert network["spec"]["networkNamespace"] == "ml-training"
    assert json.loads(network["spec"]["metaPlugins"]) == {"type": "rdma"}
    assert json.loads(network["spec"]["ipam"]) == {"type": "whereabouts", "range": "192.168.100.0/24"}
    assert not [o for o in objects if o["kind"] == "NetworkAttachmentDefinition"], "the operator renders the NADs"
    worker = _resnet_worker(_compile(profiles_copy, "sriov-network-operator", "OpenMPI"))
    annotation = json.loads(worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])
    assert annotation[0] == {"name": "rail0-ml-training", "namespace": "ml-training", "interface": "rail0"}
    limits = worker["spec"]["containers"][0]["resources"]["limits"]
    assert {k: v for k, v in limits.items() if "rdma" in k} == {f"openshift.io/rdma_rail{i}": 1 for i in range(4)}


def _infra_notes(result: CompileResult) -> str:
    (chart,) = [c for c in result.charts if c.directory == "dgx-lab/infra"]
    return dict(chart.files)["templates/NOTES.txt"]


def _sriov_config(nad: dict[str, Any]) -> dict[str, Any]:
    return json.loads(nad["spec"]["config"])["plugins"][0]


def test_sriov_network_operator_puts_each_pool_with_rails_in_exclusive_rdma_mode(profiles_copy):
    """The `rdma` meta plugin moves a VF's RDMA device into the pod's netns, which needs the RDMA subsystem in
    exclusive mode (not the kernel's default); the operator sets it per node pool with a SriovNetworkPoolConfig,
    `rdmaMode: exclusive`, and reboots the pool's nodes `maxUnavailable` at a time (1: "Conservative for reboots")
    (sriov-network-operator's doc/rdma-configuration.md)."""
    result = _compile(profiles_copy, "sriov-network-operator", "OpenMPI")
    configs = [o for o in _objects(result) if o["kind"] == "SriovNetworkPoolConfig"]
    # dgx-lab's cpu pool carries no rails: its nodes are left as they are.
    assert [(c["apiVersion"], c["metadata"]["name"], c["metadata"]["namespace"]) for c in configs] == [
        ("sriovnetwork.openshift.io/v1", "dgx", "sriov-network-operator")]
    assert configs[0]["spec"] == {"maxUnavailable": 1, "rdmaMode": "exclusive",
                                  "nodeSelector": {"matchLabels": {"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}}}
    # Synced with the policies: Argo CD must not dry-run it before the operator's CRDs exist.
    assert configs[0]["metadata"]["annotations"] == {
        "argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true"}
    notes = _infra_notes(result)
    assert "One SriovNetworkPoolConfig per node pool with rails" in notes and "reboots them" in notes
    assert "1 at a time" in notes


def test_sriov_device_plugin_notes_state_the_exclusive_rdma_mode_the_nodes_need(profiles_copy):
    """Without the operator nobody sets the nodes' RDMA netns mode: the rdma CNI needs `exclusive`
    (tests/upstream/network/rdma-cni/examples__rdma_net_crd.yaml chains it after sriov), set by `rdma system set
    netns exclusive`, kept across reboots by ib_core's module option netns_mode=0."""
    notes = _infra_notes(_compile(profiles_copy, "sriov-device-plugin", "OpenMPI"))
    assert "`rdma system set netns exclusive`" in notes and "`options ib_core netns_mode=0`" in notes
    assert "exclusive" not in _infra_notes(_compile(profiles_copy, "rdma-shared", "OpenMPI"))


ROCE_RAILS = (RAILS.replace("    nic: ib0\n", "    nic: ib0\n    vlan: 3091\n    vlanQoS: 3\n")
              .replace("    nic: ib1\n", "    nic: ib1\n    vlan: 3092\n"))


@pytest.mark.parametrize("provider", ["sriov-device-plugin", "sriov-network-operator"])
def test_sr_iov_sets_the_rails_vlan_and_priority_on_the_vfs(profiles_copy, provider):
    """sriov-cni sets `vlan` and `vlanQoS` on the VF it configures; the operator takes them as SriovNetwork's
    `spec.vlan` and `spec.vlanQoS` and writes them into that config
    (sriov-network-operator's bindata/manifests/cni-config/sriov/sriov-cni-config.yaml, and its SriovNetwork CRD:
    tests/upstream/network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworks.yaml).
    Untagged rails get neither."""
    cluster = _cluster(provider).replace("hardware: dgx-1\n", "hardware: dgx-1-roce\n").replace(RAILS, ROCE_RAILS)
    result = compile_profiles([profiles_copy({"clusters/dgx-lab.yaml": cluster})])
    assert result.ok, [d.format() for d in result.diagnostics]
    objects = _objects(result)
    if provider == "sriov-device-plugin":
        nads = {o["metadata"]["name"]: _sriov_config(o) for o in objects if o["kind"] == "NetworkAttachmentDefinition"
                and o["metadata"]["namespace"] == "hpc"}
        tags = {name: {k: v for k, v in config.items() if k in ("type", "vlan", "vlanQoS")}
                for name, config in nads.items()}
    else:
        tags = {o["metadata"]["name"].removesuffix("-hpc"): {"type": o["kind"], **{
            k: v for k, v in o["spec"].items() if k in ("vlan", "vlanQoS")}} for o in objects
                if o["kind"] in ("SriovNetwork", "SriovIBNetwork") and o["spec"]["networkNamespace"] == "hpc"}
    kind = "sriov" if provider == "sriov-device-plugin" else "SriovNetwork"
    assert tags == {"rail0": {"type": kind, "vlan": 3091, "vlanQoS": 3}, "rail1": {"type": kind, "vlan": 3092},
                    "rail2": {"type": kind}, "rail3": {"type": kind}}
    notes = _infra_notes(result)
    assert "  rail0: resource " in notes and ", VLAN 3091 (802.1p priority 3)\n" in notes
    assert ", VLAN 3092\n" in notes


@pytest.mark.parametrize("provider", ["sriov-device-plugin", "sriov-network-operator"])
def test_infiniband_guids_from_ib_kubernetes_declare_the_capability(profiles_copy, provider):
    """ib-kubernetes hands each pod's InfiniBand VF a GUID through Multus' runtimeConfig, which reaches a CNI only
    where its config declares the capability: ib-sriov-cni's `infinibandGUID` (its README, "Supported
    Capabilities"), on a SriovIBNetwork `capabilities: '{"infinibandGUID": true}'`
    (tests/upstream/network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovibnetworks.yaml).
    By default (`node`) the VFs keep the node's GUIDs and nothing is declared; NOTES says who must set them."""
    default = _compile(profiles_copy, provider, "OpenMPI")
    cluster = _cluster(provider).replace(f"  provider: {provider}\n",
                                         f"  provider: {provider}\n  infinibandGuids: ib-kubernetes\n")
    ib_kubernetes = compile_profiles([profiles_copy({"clusters/dgx-lab.yaml": cluster})])
    assert ib_kubernetes.ok, [d.format() for d in ib_kubernetes.diagnostics]

    def capabilities(result: CompileResult) -> set[str]:
        if provider == "sriov-device-plugin":
            return {json.dumps(_sriov_config(o).get("capabilities")) for o in _objects(result)
                    if o["kind"] == "NetworkAttachmentDefinition"}
        return {o["spec"].get("capabilities", "null") for o in _objects(result) if o["kind"] == "SriovIBNetwork"}

    assert capabilities(default) == {"null"}
    assert capabilities(ib_kubernetes) == {'{"infinibandGUID": true}'}
    from_node = "`ip link set <pf> vf <n> node_guid <guid>`" if provider == "sriov-device-plugin" else \
        "/etc/sriov-operator/infiniband/guids"
    assert from_node in _infra_notes(default) and from_node not in _infra_notes(ib_kubernetes)
    assert "ib-kubernetes" not in _infra_notes(default)
    assert "InfiniBand VFs get their GUIDs from ib-kubernetes" in _infra_notes(ib_kubernetes)


def test_rdma_shared_objects(profiles_copy):
    result = _compile(profiles_copy, "rdma-shared", "OpenMPI")
    objects = _objects(result)
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "rdma-devices"]
    config = json.loads(config_map["data"]["config.json"])
    assert config["configList"][0] == {"resourceName": "rdma_rail0", "rdmaHcaMax": 1000,
                                       "selectors": {"vendors": ["15b3"], "deviceIDs": ["1013"], "ifNames": ["ib0"]}}
    nads = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects
            if o["kind"] == "NetworkAttachmentDefinition"}
    plugin = json.loads(nads[("hpc", "rail2")]["spec"]["config"])
    assert {k: plugin[k] for k in ("type", "master")} == {"type": "ipoib", "master": "ib2"}  # InfiniBand NIC
    assert "k8s.v1.cni.cncf.io/resourceName" not in nads[("hpc", "rail2")]["metadata"]["annotations"]
    limits = _resnet_worker(result)["spec"]["containers"][0]["resources"]["limits"]
    assert {k: v for k, v in limits.items() if k.startswith("rdma/")} == {f"rdma/rdma_rail{i}": 1 for i in range(4)}


def test_host_network_pods(profiles_copy):
    result = _compile(profiles_copy, "host-network", "OpenMPI")
    objects = _objects(result)
    assert not [o for o in objects if o["kind"] == "NetworkAttachmentDefinition"]
    worker = _resnet_worker(result)
    spec = worker["spec"]
    assert spec["hostNetwork"] is True and spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    (term,) = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"] == worker["metadata"]["labels"]
    container = spec["containers"][0]
    assert container["command"] == ["/usr/sbin/sshd", "-De", "-p", "2222"]
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}, "never privileged"
    assert "k8s.v1.cni.cncf.io/networks" not in worker["metadata"].get("annotations", {})
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["NCCL_SOCKET_IFNAME"] == "=ib0,ib1,ib2,ib3"  # the nodes' interfaces (dgx-1.yaml pfName)
    (mpijob,) = [o for o in objects if o["kind"] == "MPIJob" and o["metadata"]["name"].startswith("resnet50-dgx-")]
    command = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    at = command.index("plm_rsh_args")
    assert command[at - 1:at + 2] == ["--mca", "plm_rsh_args", "-p 2222 -o ConnectionAttempts=10"]
    assert "hostNetwork" not in mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]


def test_host_network_refuses_two_workers_on_a_node_and_hydra(profiles_copy):
    edits = _edits("host-network", "OpenMPI")
    # 5 one-GPU workers would fit the 4 DGX-1 nodes' 32 GPUs, but not one worker per node.
    edits["jobs/tensorflow-benchmarks.yaml"] = (PROFILES / "jobs" / "tensorflow-benchmarks.yaml").read_text(
        encoding="utf-8").replace("workers: 2\n", "workers: 5\n")
    edits["jobs/pi.yaml"] = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8") + "mpiImplementation: Intel\n"
    result = compile_profiles([profiles_copy(edits)])
    messages = [d.message for d in result.diagnostics]
    assert any("under host networking (one worker per node" in m for m in messages), messages
    assert any("uses host networking, where sshd listens on a port of its own" in m for m in messages), messages


def test_tcp_provider_refuses_rails_and_runs_over_the_cluster_network(profiles_copy):
    bad = compile_profiles([profiles_copy({"clusters/dgx-lab.yaml": DGX_LAB.replace(
        "  provider: sriov-device-plugin\n", "  provider: tcp\n")})])
    assert [d.message for d in bad.diagnostics if "tcp" in d.message] == [
        "provider 'tcp' attaches no RDMA rails: MPI and NCCL use the cluster network"]
    worker = _resnet_worker(_compile(profiles_copy, "tcp", "OpenMPI"))
    container = worker["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["NCCL_IB_DISABLE"] == "1" and env["OMPI_MCA_btl"] == "vader,tcp,self"
    assert "securityContext" not in container, "no RDMA, no IPC_LOCK"


def test_multus_providers_need_ipam(profiles_copy):
    result = compile_profiles([profiles_copy({"clusters/dgx-lab.yaml": DGX_LAB.replace(RAILS, NO_IPAM_RAILS)})])
    assert sum("has no `ipam`" in d.message for d in result.diagnostics) == 4


def test_the_provider_modules_are_the_schema_enum():
    schema = json.loads((PROFILES.parent / "schemas" / "cluster.schema.json").read_text(encoding="utf-8"))
    enum = schema["properties"]["network"]["properties"]["provider"]["enum"]
    folder = PROFILES.parent / "generator" / "providers"
    modules = sorted(p.stem.replace("_", "-") for p in folder.glob("*.py")
                     if "\nPROVIDER = " in p.read_text(encoding="utf-8"))
    assert sorted(enum) == modules
