"""Write schemas/crds/ schemas of the custom resources mpigen's infra charts emit from the upstream CRDs.

MPIJob, NetworkAttachmentDefinition and the two PodGroups have hand-written schemas in schemas/crds/. The
operators' own kinds the infra charts also emit (sriov-network-operator's networks, policies and pool configs, Kueue's
queues, flavors, topology and priority classes, Volcano's Queue) and the GitOps kinds of the bootstrap output
(Argo CD's Application, Flux's GitRepository, Kustomization and HelmRelease), and the job objects of the
other backends (Volcano's Job, Kubeflow Trainer's TrainJob and TrainingRuntime) are judged by their upstream CRDs
as they are, converted the way `mpigen check --crds` converts any CRD (generator/check/crdschema.py): shipping
them makes `mpigen check` judge mpigen's own output without `--crds`.

Run from the repository root, with ../shared/upstream beside it, whenever an upstream CRD is updated:

    .venv/bin/python scripts/vendor_crd_schemas.py

tests/unit/check/test_check_schemas.py holds each written file equal to a fresh conversion.
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

from generator.check.crdschema import crd_schemas  # noqa: E402

UPSTREAM = REPO.parent / "shared" / "upstream"
OBJECT_META = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
SRIOV = "k8snetworkplumbingwg/sriov-network-operator@249e20012faf17b4f38057f29608bde2b21c5c9a"
KUEUE = "kubernetes-sigs/kueue@ff69552e79ad21652c36caa97038382e55625cf7"
VOLCANO = "volcano-sh/volcano@ed72c7c815a9fd547a787134676f73d42e9d049c"
ARGOCD = "argoproj/argo-cd@37ee0097cf851bc2dd7665fc081bbce61a7e836e"
SOURCE_CONTROLLER = "fluxcd/source-controller@39b711b111fa906c3db0a424e252a5d12e48646d"
HELM_CONTROLLER = "fluxcd/helm-controller@0f61a8607a62be64638f2f912d9487e653960a6e"
KUSTOMIZE_CONTROLLER = "fluxcd/kustomize-controller@186fb3b29138ce82ff61ba1a9370b96a3dd598fe"
TRAINER = "kubeflow/trainer@8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3"

# (file under ../shared/upstream, the upstream repository@commit, the apiVersion mpigen emits, why it does)
VENDORED: tuple[tuple[str, str, str, str], ...] = (
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml",
     SRIOV, "sriovnetwork.openshift.io/v1", "one per rail and node pool under sriov-network-operator"),
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworkpoolconfigs.yaml",
     SRIOV, "sriovnetwork.openshift.io/v1",
     "one per node pool with rails under sriov-network-operator (RDMA subsystem in exclusive mode)"),
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworks.yaml",
     SRIOV, "sriovnetwork.openshift.io/v1", "one per Ethernet rail and namespace under sriov-network-operator"),
    ("network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovibnetworks.yaml",
     SRIOV, "sriovnetwork.openshift.io/v1", "one per InfiniBand rail and namespace under sriov-network-operator"),
    ("scheduling/kueue/kueue.x-k8s.io_resourceflavors.yaml", KUEUE, "kueue.x-k8s.io/v1beta2",
     "one per node pool of a kueue cluster"),
    ("scheduling/kueue/kueue.x-k8s.io_clusterqueues.yaml", KUEUE, "kueue.x-k8s.io/v1beta2",
     "one per queue of a kueue cluster"),
    ("scheduling/kueue/kueue.x-k8s.io_localqueues.yaml", KUEUE, "kueue.x-k8s.io/v1beta2",
     "one per queue and namespace of a kueue cluster"),
    ("scheduling/kueue/kueue.x-k8s.io_topologies.yaml", KUEUE, "kueue.x-k8s.io/v1beta2",
     "a kueue cluster's topology levels"),
    ("scheduling/kueue/kueue.x-k8s.io_workloadpriorityclasses.yaml", KUEUE, "kueue.x-k8s.io/v1beta2",
     "a kueue cluster's priority classes"),
    ("scheduling/batch.volcano.sh_jobs.yaml", VOLCANO, "batch.volcano.sh/v1alpha1",
     "the job object of a job whose backend is volcano-job"),
    ("trainer/trainer.kubeflow.org_trainjobs.yaml", TRAINER, "trainer.kubeflow.org/v1alpha1",
     "the job object of a job whose backend is trainjob"),
    ("trainer/trainer.kubeflow.org_trainingruntimes.yaml", TRAINER, "trainer.kubeflow.org/v1alpha1",
     "in the infra chart, the runtime of each job whose backend is trainjob"),
    ("scheduling/scheduling.volcano.sh_queues.yaml", VOLCANO, "scheduling.volcano.sh/v1beta1",
     "one per queue of a volcano cluster"),
    ("gitops/argocd/application-crd.yaml", ARGOCD, "argoproj.io/v1alpha1",
     "in the bootstrap of an Argo CD cluster: the root app of apps and one per chart"),
    ("gitops/flux/source.toolkit.fluxcd.io_gitrepositories.yaml", SOURCE_CONTROLLER, "source.toolkit.fluxcd.io/v1",
     "in the bootstrap of a Flux cluster: the repository the charts are read from"),
    ("gitops/flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml", KUSTOMIZE_CONTROLLER,
     "kustomize.toolkit.fluxcd.io/v1", "in the bootstrap of a Flux cluster: the root sync of its HelmReleases"),
    ("gitops/flux/helm.toolkit.fluxcd.io_helmreleases.yaml", HELM_CONTROLLER, "helm.toolkit.fluxcd.io/v2",
     "in the bootstrap of a Flux cluster: one per chart"),
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
        "$id": f"urn:mpigen:crd:{group}:{version}:{kind}",
        "title": f"{kind} ({api_version})",
        "description": f"mpigen emits it {why}. Converted by scripts/vendor_crd_schemas.py from the upstream CRD "
                       f"{source} ({origin}), as `mpigen check --crds` converts a CRD; do not edit.",
        "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": kind}],
        **{key: value for key, value in converted.items() if key not in ("$schema", "properties")},
        "properties": properties,
    }
    return f"{group}_{version}_{kind}.json", schema


def render(upstream: Path) -> dict[str, str]:
    """Every vendored file's name and text."""
    out: dict[str, str] = {}
    for source, origin, api_version, why in VENDORED:
        crd = YAML(typ="safe", pure=True).load((upstream / source).read_text(encoding="utf-8"))
        name, schema = vendored_schema(crd, source, origin, api_version, why)
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
