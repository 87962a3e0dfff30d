"""Which Kueue release serves what: the API version of each kind mpigen writes, the ClusterQueue's cohort field,
and the first release of each feature the output uses. A cluster names its release (`scheduling.kueueVersion`);
its infra chart is written in what that release serves, and a job asking for what it lacks is refused at its
profile, naming the release that has it.

Sources, each read at its tag in kubernetes-sigs/kueue (config/components/crd/bases/, the CRDs' `served` versions;
pkg/features/kube_features.go; the jobs' webhooks), the releases' CRDs vendored in tests/upstream/scheduling/
(kueue-v0.9: v0.9.5, kueue-v0.14: v0.14.8, kueue: main after v0.19):
- v0.9-v0.14 serve ResourceFlavor, ClusterQueue, LocalQueue and WorkloadPriorityClass as v1beta1 only, whose
  ClusterQueue says its cohort in `spec.cohort`; v0.15 adds v1beta2 (stored from v0.16), whose field is
  `spec.cohortName` (v1beta1's `cohort` is not in it: an unknown field).
- Topology: v1alpha1 in v0.9-v0.13 (v0.11 also served a v1beta1 that v0.12 dropped again), v1beta1 from v0.14,
  v1beta2 from v0.15.
- Topology-aware scheduling (the Topology kind, `topologyName` on a ResourceFlavor, the podset topology
  annotations): v0.9, behind the `TopologyAwareScheduling` feature gate, off by default (alpha) until v0.14,
  where it went beta, on by default.
- Podset slices (`podset-slice-required-topology`, `podset-slice-size`): v0.13 (kubernetes-sigs/kueue#5596).
- PodSet groups of an MPIJob (`podset-group-name` on its launcher and workers): the MPIJob webhook validates them
  from v0.15 (kubernetes-sigs/kueue#7061); `tas_validation.go`: a group is exactly two pod sets, one of them of one
  pod, with the same topology request, and no slice annotations beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

KUEUE_GROUP = "kueue.x-k8s.io"
V1ALPHA1 = f"{KUEUE_GROUP}/v1alpha1"
V1BETA1 = f"{KUEUE_GROUP}/v1beta1"
V1BETA2 = f"{KUEUE_GROUP}/v1beta2"
COHORT = "cohort"
COHORT_NAME = "cohortName"


def release_name(minor: int) -> str:
    return f"v0.{minor}"


@dataclass(frozen=True)
class KueueRelease:
    """One minor release of Kueue, as mpigen writes for it."""

    minor: int
    api_version: str
    """ResourceFlavor, ClusterQueue, LocalQueue and WorkloadPriorityClass."""
    topology_api_version: str
    cohort_field: str
    """Where a ClusterQueue names its cohort."""

    @property
    def name(self) -> str:
        return release_name(self.minor)

    @property
    def topology_by_default(self) -> bool:
        """Whether topology-aware scheduling is on without a feature gate (beta from v0.14)."""
        return self.minor >= TAS_BETA_MINOR

    def serves(self, since_minor: int) -> bool:
        return self.minor >= since_minor


TAS_BETA_MINOR = 14
PODSET_SLICES_MINOR = 13
MPIJOB_PODSET_GROUP_MINOR = 15


def _release(minor: int) -> KueueRelease:
    if minor >= 15:
        return KueueRelease(minor, V1BETA2, V1BETA2, COHORT_NAME)
    return KueueRelease(minor, V1BETA1, V1BETA1 if minor >= 14 else V1ALPHA1, COHORT)


RELEASES: tuple[KueueRelease, ...] = tuple(_release(minor) for minor in range(9, 20))
"""v0.9 (the first with topology-aware scheduling) to v0.19, the newest mpigen knows."""
NEWEST = RELEASES[-1]
"""What a cluster that names no release gets: the release mpigen wrote for before releases could be named."""
BY_NAME = {release.name: release for release in RELEASES}


def named(name: str | None) -> KueueRelease:
    """The release a (schema-valid) `kueueVersion` names; the newest where none is named."""
    return NEWEST if name is None else BY_NAME[name]

