"""generator/check/rules/devices.py: Dynamic Resource Allocation in hand-written charts. The upstream examples (DRANET's
MPIJob with its NIC claim, NVIDIA's nvbandwidth MPIJob on a ComputeDomain, DRANET's aligned GPU-NIC claim) pass clean;
each mistake is found at the line of its field: a claim naming no template of the pod's namespace, a container naming
no claim of its pod, a DeviceClass the cluster does not have, a device asked for twice (claim and extended resource),
a constraint on an attribute the drivers do not publish."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import UPSTREAM

from mpigen.check.rules.devices import RULE_DEVICES, check_devices, selector_driver
from mpigen.readback.documents import parse_manifest, read_manifest_file
from mpigen.readback.findings import CheckContext, Finding, NodeShape, RenderedObject
from mpigen.readback.lines import place_findings
from mpigen.vocabulary import dra

NVIDIA = UPSTREAM / "dra" / "nvidia-dra-driver-gpu"
DRANET = UPSTREAM / "dra" / "dranet"

JOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: train
  namespace: ml
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: nccl-tests:2.21
    Worker:
      replicas: 2
      template:
        spec:
          resourceClaims:
          - name: devices
            resourceClaimTemplateName: TEMPLATE
          containers:
          - name: worker
            image: nccl-tests:2.21
            resources:
              limits:
                cpu: "8"
              claims:
              - name: CLAIM
"""

TEMPLATE = """\
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: train-devices
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: GPU_CLASS
          count: 4
      - name: nic
        exactly:
          deviceClassName: dranet-rdma
          count: 1
      constraints:
      - matchAttribute: ATTRIBUTE
"""

NIC_CLASS = """\
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: dranet-rdma
spec:
  selectors:
  - cel:
      expression: device.driver == "dra.net"
  - cel:
      expression: device.attributes["dra.net"].rdma == true
"""


def chart(template: str = "train-devices", claim: str = "devices", gpu_class: str = dra.GPU_DEVICE_CLASS,
          attribute: str = dra.PCIE_ROOT) -> str:
    """A hand-written job whose workers claim 4 GPUs and a NIC under one PCIe root, with its template and NIC class."""
    job = JOB.replace("TEMPLATE", template).replace("CLAIM", claim)
    return job + TEMPLATE.replace("GPU_CLASS", gpu_class).replace("ATTRIBUTE", attribute) + NIC_CLASS


def judged(text: str, tmp_path: Path, extra: str = "") -> list[tuple[int, str]]:
    """The devices findings of the manifest text, each with the line it is placed at, written to a file as a person's."""
    file = tmp_path / "job.yaml"
    file.write_text(text, encoding="utf-8")
    documents, problems = read_manifest_file(file)
    assert problems == []
    context = CheckContext(extra=tuple(parse_manifest(extra, "cluster.yaml")[0]))
    findings = check_devices(documents, context)
    assert {f.rule for f in findings} <= {RULE_DEVICES}
    places = place_findings(findings, [file.as_posix()])
    return [(places[f][0], f.message) for f in findings]


def line_of(text: str, needle: str, after: str = "") -> int:
    """The 1-based line of the first line holding `needle` (after the first holding `after`)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i, line in enumerate(lines) if i >= start and needle in line) + 1


def documents_of(*files: Path) -> list[RenderedObject]:
    return [document for file in files for document in read_manifest_file(file)[0]]


# --- the upstream examples ----------------------------------------------------------------------------------------


def test_the_upstream_examples_pass_clean() -> None:
    """DRANET's MPIJob with its NIC claim template and class; NVIDIA's nvbandwidth MPIJob, whose workers claim the
    channel template of its ComputeDomain and ask for their GPUs from the device plugin (the channel's class stands
    for no extended resource); DRANET's GPU-NIC claim aligned on the PCIe root, which both drivers publish."""
    dranet_job = documents_of(DRANET / "examples__mpi_operator__nccl-test-job.yaml",
                              DRANET / "examples__mpi_operator__dra_resources.yaml")
    nvbandwidth = documents_of(NVIDIA / "demo__specs__imex__nvbandwidth-test-job.yaml")
    aligned = documents_of(DRANET / "examples__demo_nvidia_dranet__resourceclaims.yaml",
                           DRANET / "examples__demo_nvidia_dranet__deviceclass.yaml")
    assert [d.kind for d in nvbandwidth] == [dra.COMPUTE_DOMAIN_KIND, "MPIJob"]
    assert {d.kind for d in aligned} == {dra.RESOURCE_CLAIM_TEMPLATE, dra.DEVICE_CLASS}
    for documents in (dranet_job, nvbandwidth, aligned):
        assert check_devices(documents, CheckContext()) == []


def test_the_upstream_jobs_alone_miss_what_they_claim() -> None:
    """Without the files beside them the same jobs name templates that are not there; given as context, they are."""
    job = documents_of(DRANET / "examples__mpi_operator__nccl-test-job.yaml")
    alone = check_devices(job, CheckContext())
    assert [f.path for f in alone] == [".spec.mpiReplicaSpecs.Worker.template.spec.resourceClaims[0]"
                                       ".resourceClaimTemplateName"]
    assert "no ResourceClaimTemplate mpi-worker-rdma-nic-template" in alone[0].message
    assert "the pod stays Pending" in alone[0].message
    beside = tuple(documents_of(DRANET / "examples__mpi_operator__dra_resources.yaml"))
    assert check_devices(job, CheckContext(extra=beside)) == []
    nvbandwidth = documents_of(NVIDIA / "demo__specs__imex__nvbandwidth-test-job.yaml")
    assert len(check_devices([d for d in nvbandwidth if d.kind == "MPIJob"], CheckContext())) == 1


def test_the_aligned_claim_on_an_attribute_the_nic_lacks_is_found() -> None:
    """DRANET's GPU-NIC claim, aligned instead on the GPU driver's own uuid: no NIC has it."""
    documents = documents_of(DRANET / "examples__demo_nvidia_dranet__resourceclaims.yaml",
                             DRANET / "examples__demo_nvidia_dranet__deviceclass.yaml")
    claim = documents[0].obj["spec"]["spec"]["devices"]
    claim["constraints"] = [{"matchAttribute": "gpu.nvidia.com/uuid"}]
    [found] = check_devices(documents, CheckContext())
    assert found.path == ".spec.spec.devices.constraints[0].matchAttribute"
    assert "the devices of request nic (DeviceClass dranet, driver dra.net) do not publish it" in found.message
    assert f"match on an attribute all of them publish ({dra.PCIE_ROOT})" in found.message


# --- a: a pod's claims name what is there -------------------------------------------------------------------------


def test_a_valid_hand_written_job_passes(tmp_path: Path) -> None:
    assert judged(chart(), tmp_path) == []


def test_a_claim_naming_no_template_is_found_at_its_line(tmp_path: Path) -> None:
    text = chart(template="train-device")
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "resourceClaimTemplateName: train-device")
    assert message.startswith("no ResourceClaimTemplate ml/train-device (named in resourceClaimTemplateName)")
    assert "in this render or the extra manifests (--context)" in message and "the pod stays Pending" in message


def test_a_template_of_another_namespace_is_not_the_pods(tmp_path: Path) -> None:
    text = chart().replace("  namespace: ml\nspec:\n  spec:", "  namespace: team-b\nspec:\n  spec:")
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "resourceClaimTemplateName")
    assert "there is one in namespace team-b: a pod claims only from its own namespace" in message


def test_a_template_of_the_cluster_given_as_context_is_found(tmp_path: Path) -> None:
    job = JOB.replace("TEMPLATE", "train-devices").replace("CLAIM", "devices")
    cluster = TEMPLATE.replace("GPU_CLASS", dra.GPU_DEVICE_CLASS).replace("ATTRIBUTE", dra.PCIE_ROOT) + NIC_CLASS
    assert judged(job, tmp_path, extra=cluster) == []
    assert len(judged(job, tmp_path)) == 1


def test_a_container_naming_no_claim_of_its_pod_is_refused_in_the_api_servers_words(tmp_path: Path) -> None:
    text = chart(claim="device")
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "- name: device", after="claims:")
    assert message.startswith('spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.claims[0]: Not found: '
                              '"device": must be one of the names in pod.spec.resourceClaims: devices; the API server '
                              "refuses the pod")


def test_a_claim_naming_no_resource_claim_is_found(tmp_path: Path) -> None:
    text = chart().replace("resourceClaimTemplateName: train-devices", "resourceClaimName: shared-nic")
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "resourceClaimName: shared-nic")
    assert message.startswith("no ResourceClaim ml/shared-nic (named in resourceClaimName)")
    claim = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: shared-nic\n  namespace: ml\n" \
            "spec:\n  devices:\n    requests:\n    - name: nic\n      exactly:\n        deviceClassName: dranet-rdma\n"
    assert judged(text + claim, tmp_path) == []


@pytest.mark.parametrize("backend", ["volcano-job", "trainjob"])
def test_every_backend_s_pods_are_judged(backend: str) -> None:
    """A Volcano Job's tasks and a TrainingRuntime's replicated jobs carry claims as an MPIJob's workers do."""
    pod = {"resourceClaims": [{"name": "devices", "resourceClaimTemplateName": "nowhere"}],
           "containers": [{"name": "node", "image": "x", "resources": {"claims": [{"name": "devices"}]}}]}
    if backend == "volcano-job":
        obj = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "train"},
               "spec": {"tasks": [{"name": "worker", "replicas": 2, "template": {"spec": pod}}]}}
    else:
        obj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "train"},
               "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {
                   "template": {"spec": pod}}}}]}}}}
    [found] = check_devices([RenderedObject("job.yaml", obj)], CheckContext())
    assert found.path.endswith(".spec.resourceClaims[0].resourceClaimTemplateName")
    assert "no ResourceClaimTemplate nowhere" in found.message


def test_a_template_of_another_cluster_is_not_seen() -> None:
    """Objects of two compiled clusters never stand in for each other."""
    job, template, nic = parse_manifest(chart(), "job.yaml")[0]

    def of(document: RenderedObject, chart: str) -> RenderedObject:
        return RenderedObject(document.source, document.obj, chart)

    context = CheckContext(chart_clusters={"charts/a": "a", "charts/b": "b"})
    assert check_devices([of(job, "charts/a"), of(template, "charts/a"), nic], context) == []
    [found] = check_devices([of(job, "charts/a"), of(template, "charts/b"), nic], context)
    assert "no ResourceClaimTemplate ml/train-devices" in found.message


# --- b: each request's DeviceClass is one the cluster has ---------------------------------------------------------


def test_a_device_class_the_cluster_lacks_is_found_at_the_request(tmp_path: Path) -> None:
    text = chart(gpu_class="nvidia-gpu")
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "deviceClassName: nvidia-gpu")
    assert message.startswith("no DeviceClass nvidia-gpu (request gpus) in this render or the extra manifests "
                              "(--context), nor one NVIDIA's GPU DRA driver installs (")
    assert "every pod claiming it stays Pending" in message


def test_a_class_nvidias_driver_installs_or_given_as_context_is_had(tmp_path: Path) -> None:
    assert judged(chart(gpu_class=dra.MIG_DEVICE_CLASS), tmp_path) == []
    given = NIC_CLASS.replace("dranet-rdma", "nvidia-gpu").replace("dra.net", "gpu.nvidia.com")
    assert judged(chart(gpu_class="nvidia-gpu"), tmp_path, extra=given) == []


def test_a_class_the_cluster_profile_names_is_had_in_a_chart_mpigen_compiled(tmp_path: Path) -> None:
    """The chart's Chart.yaml says which DeviceClasses its cluster's profile names (`mpigen/device-classes`,
    readback/discover.py reads it into the node shape): a renamed GPU class there is not a finding."""
    file = tmp_path / "job.yaml"
    file.write_text(chart(gpu_class="h100.example.com"), encoding="utf-8")
    documents = [RenderedObject(d.source, d.obj, "lab/jobs/train") for d in read_manifest_file(file)[0]]
    said = CheckContext(node_shapes={"lab/jobs/train": NodeShape("lab", "gpu", {}, ("h100.example.com",))})
    assert check_devices(documents, said) == []
    other = CheckContext(node_shapes={"lab/jobs/train": NodeShape("lab", "gpu", {}, ("gpu.nvidia.com",))})
    assert [f.message.split(" (")[0] for f in check_devices(documents, other)] == ["no DeviceClass h100.example.com"]


def test_a_first_available_class_the_cluster_lacks_is_found_at_its_line(tmp_path: Path) -> None:
    text = chart().replace("""      - name: nic
        exactly:
          deviceClassName: dranet-rdma
          count: 1
""", """      - name: nic
        firstAvailable:
        - name: rdma
          deviceClassName: dranet-rdma
        - name: any
          deviceClassName: sriov-vf
""")
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "deviceClassName: sriov-vf")
    assert message.startswith("no DeviceClass sriov-vf (request nic/any)")


# --- c: no device asked for twice ---------------------------------------------------------------------------------


def test_a_gpu_claimed_and_asked_for_as_an_extended_resource_is_allocated_twice(tmp_path: Path) -> None:
    text = chart().replace('cpu: "8"', 'cpu: "8"\n                nvidia.com/gpu: 4')
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "nvidia.com/gpu: 4")
    assert message.startswith("the pod claims nvidia.com/gpu devices through DRA (claim devices, request gpus: "
                              "DeviceClass gpu.nvidia.com, whose extended resource is nvidia.com/gpu)")
    assert "the devices are allocated twice" in message and "remove nvidia.com/gpu" in message
    assert judged(chart(), tmp_path) == []


def test_a_device_class_documents_extended_resource_counts_too(tmp_path: Path) -> None:
    """A class among the documents stands for the extended resource its `extendedResourceName` says."""
    text = chart().replace('cpu: "8"', 'cpu: "8"\n                example.com/rdma: 1') + \
        "  extendedResourceName: example.com/rdma\n"
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "example.com/rdma: 1")
    assert "(claim devices, request nic: DeviceClass dranet-rdma, whose extended resource is example.com/rdma)" in message


# --- d: constraints match attributes the drivers publish ----------------------------------------------------------


def test_an_attribute_no_driver_of_the_requests_publishes_is_found(tmp_path: Path) -> None:
    """Neither NVIDIA's GPU driver nor DRANET publishes the standard NUMA node: the claim can never be allocated."""
    text = chart(attribute=dra.NUMA_NODE)
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, f"matchAttribute: {dra.NUMA_NODE}")
    assert message == (
        f"matchAttribute {dra.NUMA_NODE}: the devices of request gpus (DeviceClass gpu.nvidia.com, driver "
        "gpu.nvidia.com) and request nic (DeviceClass dranet-rdma, driver dra.net) do not publish it; no device "
        "qualifies, so the scheduler cannot allocate the claim and every pod claiming it stays Pending; match on an "
        f"attribute all of them publish ({dra.PCIE_ROOT})")


def test_a_drivers_own_attribute_holds_only_over_its_requests(tmp_path: Path) -> None:
    """dra.net/numaNode over the NIC alone is met; over the GPUs too, the GPUs are the request that cannot be."""
    constraint = "      - matchAttribute: dra.net/numaNode"
    only_nic = chart(attribute="dra.net/numaNode").replace(constraint, f"{constraint}\n        requests: [nic]")
    assert judged(only_nic, tmp_path) == []
    [(_, message)] = judged(chart(attribute="dra.net/numaNode"), tmp_path)
    assert "the devices of request gpus (DeviceClass gpu.nvidia.com, driver gpu.nvidia.com) do not" in message
    assert "request nic" not in message


def test_where_a_driver_is_unknown_nothing_is_said(tmp_path: Path) -> None:
    """A class selecting by attributes only names no driver: its devices may publish anything."""
    text = chart(attribute="example.com/rack").replace('device.driver == "dra.net"', 'device.attributes["x"].y')
    [(_, message)] = judged(text, tmp_path)
    assert "request gpus" in message and "request nic" not in message
    unknown_gpu = NIC_CLASS.replace("dranet-rdma", "nvidia-gpu").replace('device.driver == "dra.net"', "true")
    assert judged(chart(gpu_class="nvidia-gpu", attribute="example.com/rack").replace(
        'device.driver == "dra.net"', "true"), tmp_path, extra=unknown_gpu) == []


def test_an_attribute_without_domain_and_a_constraint_on_no_request_are_refused(tmp_path: Path) -> None:
    text = chart(attribute="pcieRoot")
    [(line, message)] = judged(text, tmp_path)
    assert line == line_of(text, "matchAttribute: pcieRoot")
    assert message.startswith("matchAttribute pcieRoot names no domain: the API server takes only a fully qualified")
    typo = chart().replace(f"      - matchAttribute: {dra.PCIE_ROOT}",
                           f"      - matchAttribute: {dra.PCIE_ROOT}\n        requests: [gpus, nics]")
    [(line, message)] = judged(typo, tmp_path)
    assert line == line_of(typo, "requests: [gpus, nics]")
    assert message.startswith("nics is no request of this claim (it has gpus, nic): the API server refuses the claim")


def test_a_class_s_driver_is_read_from_its_cel_selectors() -> None:
    assert selector_driver(['device.driver == "dra.net"', 'device.attributes["dra.net"].rdma == true']) == "dra.net"
    assert selector_driver(["device.driver=='gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].x"]) == \
        "gpu.nvidia.com"
    assert selector_driver(['"dra.net" == device.driver']) == "dra.net"
    assert selector_driver(['device.driver == "a" || device.driver == "b"']) is None
    assert selector_driver(['device.driver == "a"', 'device.driver == "b"']) is None
    assert selector_driver(['device.attributes["dra.net"].rdma == true']) is None


def test_findings_name_the_rule() -> None:
    findings: list[Finding] = check_devices(parse_manifest(chart(template="x"), "job.yaml")[0], CheckContext())
    assert [f.rule for f in findings] == [RULE_DEVICES]


def test_the_committed_dra_charts_say_the_classes_their_clusters_name() -> None:
    """profiles/clusters/h100-dra.yaml and gb200-rack.yaml: `dra: {}` (gpu.nvidia.com, dranet-rdma); the GB200 job's
    ComputeDomain channel class too. A job chart without DRA says none."""
    from conftest import CHARTS

    from mpigen.readback.discover import discover

    shapes = {c.display.removeprefix(f"{CHARTS.as_posix()}/"): c.node_shape for c in discover([CHARTS]).charts}
    assert shapes["h100-dra/jobs/llm-pretrain"].device_classes == ("dranet-rdma", "gpu.nvidia.com")  # type: ignore[union-attr]
    assert shapes["gb200-rack/jobs/mnnvl-allreduce"].device_classes == (  # type: ignore[union-attr]
        "compute-domain-default-channel.nvidia.com", "dranet-rdma", "gpu.nvidia.com")
    assert shapes["dgx-lab/jobs/pi"].device_classes == ()  # type: ignore[union-attr]
