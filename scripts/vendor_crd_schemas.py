"""Write schemas/crds/ schemas of the custom resources mpigen's infra charts emit from the upstream CRDs.

MPIJob, NetworkAttachmentDefinition and the two PodGroups have hand-written schemas in schemas/crds/. The
operators' own kinds the infra charts also emit (sriov-network-operator's networks, policies and pool configs, Kueue's
queues, flavors, topology and priority classes, Volcano's Queue, KAI Scheduler's Queue and Topology, and KAI's
PodGroup, which hand-written charts may carry) and the GitOps kinds of the bootstrap output (Argo CD's Application and
ApplicationSet, Flux's GitRepository, Kustomization and HelmRelease), the job objects of the other backends
(Volcano's Job, Kubeflow Trainer's TrainJob and TrainingRuntime) and the ComputeDomain of NVIDIA's GPU DRA driver
(multi-node NVLink) are judged by their upstream CRDs as they are, converted the way `mpigen check --crds` converts any
CRD (generator/check/crdschema.py): shipping them makes `mpigen check` judge mpigen's own output without `--crds`.

It reads the upstream CRDs from tests/upstream/ (tests/upstream/SOURCES.yaml names each one's repository, commit,
path and licence). Whenever an upstream CRD is updated, copy the new one there (and its SOURCES entry), then run
from the repository root:

    .venv/bin/python scripts/vendor_crd_schemas.py

tests/unit/check/test_check_schemas.py holds each written file equal to a fresh conversion of tests/upstream/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from mpigen.check.crdschema import crd_schemas  # noqa: E402
from mpigen.support.schema_files import schema_id  # noqa: E402

UPSTREAM = REPO / "tests" / "upstream"
OBJECT_META = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

# (file under tests/upstream, the apiVersion mpigen emits, why it does); its repository@commit is in SOURCES.yaml
VENDORED: tuple[tuple[str, str, str], ...] = (
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml",
     "sriovnetwork.openshift.io/v1", "one per rail and node pool under sriov-network-operator"),
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworkpoolconfigs.yaml",
     "sriovnetwork.openshift.io/v1",
     "one per node pool with rails under sriov-network-operator (RDMA subsystem in exclusive mode)"),
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworks.yaml",
     "sriovnetwork.openshift.io/v1", "one per Ethernet rail and namespace under sriov-network-operator"),
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovibnetworks.yaml",
     "sriovnetwork.openshift.io/v1", "one per InfiniBand rail and namespace under sriov-network-operator"),
    ("scheduling/kueue/kueue.x-k8s.io_resourceflavors.yaml", "kueue.x-k8s.io/v1beta2",
     "one per node pool of a kueue cluster"),
    ("scheduling/kueue/kueue.x-k8s.io_clusterqueues.yaml", "kueue.x-k8s.io/v1beta2",
     "one per queue of a kueue cluster"),
    ("scheduling/kueue/kueue.x-k8s.io_localqueues.yaml", "kueue.x-k8s.io/v1beta2",
     "one per queue and namespace of a kueue cluster"),
    ("scheduling/kueue/kueue.x-k8s.io_topologies.yaml", "kueue.x-k8s.io/v1beta2",
     "a kueue cluster's topology levels"),
    ("scheduling/kueue/kueue.x-k8s.io_workloadpriorityclasses.yaml", "kueue.x-k8s.io/v1beta2",
     "a kueue cluster's priority classes"),
    ("scheduling/kueue-v0.14/kueue.x-k8s.io_resourceflavors.yaml", "kueue.x-k8s.io/v1beta1",
     "one per node pool of a kueue cluster on Kueue v0.9-v0.14 (v0.14's, the last such release)"),
    ("scheduling/kueue-v0.14/kueue.x-k8s.io_clusterqueues.yaml", "kueue.x-k8s.io/v1beta1",
     "one per queue of a kueue cluster on Kueue v0.9-v0.14"),
    ("scheduling/kueue-v0.14/kueue.x-k8s.io_localqueues.yaml", "kueue.x-k8s.io/v1beta1",
     "one per queue and namespace of a kueue cluster on Kueue v0.9-v0.14"),
    ("scheduling/kueue-v0.14/kueue.x-k8s.io_topologies.yaml", "kueue.x-k8s.io/v1beta1",
     "the topology levels of a kueue cluster on Kueue v0.14"),
    ("scheduling/kueue-v0.9/kueue.x-k8s.io_topologies.yaml", "kueue.x-k8s.io/v1alpha1",
     "the topology levels of a kueue cluster on Kueue v0.9-v0.13"),
    ("scheduling/kueue-v0.14/kueue.x-k8s.io_workloadpriorityclasses.yaml", "kueue.x-k8s.io/v1beta1",
     "the priority classes of a kueue cluster on Kueue v0.9-v0.14"),
    ("scheduling/batch.volcano.sh_jobs.yaml", "batch.volcano.sh/v1alpha1",
     "the job object of a job whose backend is volcano-job"),
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", "trainer.kubeflow.org/v1alpha1",
     "the job object of a job whose backend is trainjob"),
    ("trainer/trainer.kubeflow.org_trainingruntimes.yaml", "trainer.kubeflow.org/v1alpha1",
     "in the infra chart, the runtime of each job whose backend is trainjob"),
    ("scheduling/scheduling.volcano.sh_queues.yaml", "scheduling.volcano.sh/v1beta1",
     "one per queue of a volcano cluster"),
    ("scheduling/kai/scheduling.run.ai_queues.yaml", "scheduling.run.ai/v2",
     "one per queue (and one per cohort, their parent) of a kai cluster; hand-written KAI charts hold them too"),
    ("scheduling/kai/kai.scheduler_topologies.yaml", "kai.scheduler/v1alpha1",
     "a kai cluster's topology levels"),
    ("scheduling/kai/scheduling.run.ai_podgroups.yaml", "scheduling.run.ai/v2alpha2",
     "never (KAI's podgrouper makes one per workload); a hand-written chart may carry one"),
    ("gitops/argocd/application-crd.yaml", "argoproj.io/v1alpha1",
     "in the bootstrap of an Argo CD cluster: the root app of apps and one per chart"),
    ("gitops/argocd/applicationset-crd.yaml", "argoproj.io/v1alpha1",
     "in the bootstrap of an Argo CD cluster with `applications: applicationset`: one making an Application per chart"),
    ("gitops/flux/source.toolkit.fluxcd.io_gitrepositories.yaml", "source.toolkit.fluxcd.io/v1",
     "in the bootstrap of a Flux cluster: the repository the charts are read from"),
    ("gitops/flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
     "kustomize.toolkit.fluxcd.io/v1", "in the bootstrap of a Flux cluster: the root sync of its HelmReleases"),
    ("gitops/flux/helm.toolkit.fluxcd.io_helmreleases.yaml", "helm.toolkit.fluxcd.io/v2",
     "in the bootstrap of a Flux cluster: one per chart"),
    ("dra/nvidia-dra-driver-gpu/resource.nvidia.com_computedomains.yaml", "resource.nvidia.com/v1beta1",
     "in the chart of a job on multi-node NVLink hardware: the ComputeDomain whose IMEX channel every worker claims"),
)


def vendored_schema(crd: dict[str, Any], source: str, origin: str, api_version: str, why: str) -> tuple[str, dict[str, Any]]:
    """The file name and the schema of the `api_version` of one CRD, in the form of schemas/crds/."""
    kind = crd["spec"]["names"]["kind"]
    group, version = api_version.split("/")
    converted = crd_schemas(crd)[(api_version, kind)]
    properties = dict(converted["properties"])
    properties["apiVersion"] = {"title": "API version", "description": f"Always `{api_version}`.",
                                "const": api_version}
    properties["kind"] = {"title": "Kind", "description": f"Always `{kind}`.", "const": kind}
    # The API server validates every object's metadata as ObjectMeta; so does mpigen's own MPIJob schema.
    properties["metadata"] = {"title": "Metadata", "description": "Name, namespace, labels and annotations.",
                              "$ref": OBJECT_META}
    schema = {
        "$schema": converted["$schema"],
        "$id": schema_id(f"crds/{group}_{version}_{kind}.json"),
        "title": f"{kind} ({api_version})",
        "description": f"mpigen emits it {why}. Converted by scripts/vendor_crd_schemas.py from the upstream CRD "
                       f"{source} ({origin}), as `mpigen check --crds` converts a CRD; do not edit.",
        "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": kind}],
        **{key: value for key, value in converted.items() if key not in ("$schema", "properties")},
        "properties": properties,
    }
    return f"{group}_{version}_{kind}.json", schema


def origins(upstream: Path) -> dict[str, str]:
    """`repository@commit` of each file under `upstream`, as its SOURCES.yaml records it."""
    recorded = YAML(typ="safe", pure=True).load((upstream / "SOURCES.yaml").read_text(encoding="utf-8"))
    return {file: f"{entry['repo']}@{entry['commit']}" for entry in recorded["sources"] for file in entry["files"]}


def render(upstream: Path) -> dict[str, str]:
    """Every vendored file's name and text."""
    out: dict[str, str] = {}
    origin = origins(upstream)
    for source, api_version, why in VENDORED:
        crd = YAML(typ="safe").load((upstream / source).read_text(encoding="utf-8"))  # libyaml: a tenth of the time
        name, schema = vendored_schema(crd, source, origin[source], api_version, why)
        out[name] = json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    return out


def main() -> int:
    target = REPO / "schemas" / "crds"
    for name, text in render(UPSTREAM).items():
        (target / name).write_text(text, encoding="utf-8")
        print(f"wrote schemas/crds/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
