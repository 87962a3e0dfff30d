"""generator/validate/domain_fit.py (with the cluster's and the hardware's rules on domain sizes): a Kueue job's
workers against the domains of its topology level and slice level, on a broken copy of the example fleet.

dgx-pod (profiles/clusters/dgx-pod.yaml) declares block (8 nodes) > rack (4, the leaf switch) > host; `nvl72_edits`
(tests/conftest.py) turns it into a GB200 NVL72 pod: 72 trays of 4 GPUs, blocks of 36, the NVLink clique level sized
by the hardware (72 GPUs / 4 = 18 trays). Kueue keeps a job Pending whose required level no domain can hold
(pkg/cache/scheduler/tas_flavor_snapshot.go at v0.13.0 and HEAD: "topology ... doesn't allow to fit"), refuses a
slice level above the podset's ("podset slice topology %s is above the podset topology %s") and cuts the workers
into slices of `podset-slice-size` pods (apis/kueue/v1beta2/topology_types.go; the annotations since v0.13.0, #5596).
"""

from __future__ import annotations

import pytest
from conftest import PROFILES, Outcome, expect, nvl72_edits

from mpigen.support.diagnostics import Severity

DGX_POD = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
VISION = (PROFILES / "jobs" / "vision-resnet50.yaml").read_text(encoding="utf-8")
POD = "clusters/dgx-pod.yaml"
JOB = "jobs/vision-resnet50.yaml"
assert DGX_POD.splitlines()[41] == "      domainNodes: 8  # the whole pod" and VISION.splitlines()[20] == "    level: rack"


def test_a_level_holds_whole_domains_of_the_level_below(diagnose):
    outcome = diagnose({POD: DGX_POD.replace("domainNodes: 8  # the whole pod", "domainNodes: 6")})
    expect(outcome, (POD, 42, 20, "a 'block' domain of 6 nodes does not hold a whole number of 'rack' domains of 4",
                     "give the sizes as the fabric is built"))


def test_an_nvlink_domain_is_whole_nodes(diagnose):
    edits = nvl72_edits()
    edits["hardware/gb200-tray.yaml"] = edits["hardware/gb200-tray.yaml"].replace("nvlinkDomainGpus: 72",
                                                                                  "nvlinkDomainGpus: 70")
    outcome = diagnose(edits)
    assert [d.format().split(": ", 1)[1] for d in outcome.diagnostics if "NVLink domain of" in d.message] == [
        "error: an NVLink domain of 70 GPUs is not a whole number of nodes of 4 GPUs; use a multiple of 4 (GB200 "
        "NVL72: 72, 18 nodes of 4)"], outcome.shown()


def without_compute_domain_warning(outcome: Outcome) -> Outcome:
    """The NVL72 edits keep dgx-pod's device plugins, so each run gets the one warning that its jobs join no
    ComputeDomain (tests/unit/validate/test_validate_devices.py); these tests are about the domains."""
    (warning,) = [d for d in outcome.diagnostics if "ComputeDomain" in d.message]
    assert warning.severity is Severity.WARNING
    return Outcome(outcome.root, [d for d in outcome.diagnostics if d is not warning])


def test_a_36_tray_job_on_nvl72_is_valid_and_sliced(diagnose):
    assert without_compute_domain_warning(diagnose(nvl72_edits())).diagnostics == []


def test_workers_no_required_domain_holds_are_refused_with_the_fixes(diagnose):
    outcome = diagnose({JOB: VISION.replace("totalGpus: 32", "totalGpus: 64"), "jobs/language-bert.yaml": None})
    expect(outcome, (JOB, 21, 12, "the job's 8 workers need 8 nodes, but one 'rack' domain "
                     "(fabric.example.com/leaf-switch) holds 4 (cluster 'dgx-pod': scheduling.topology[1].domainNodes): "
                     "it never fits, so Kueue keeps the job Pending for ever",
                     "use a higher level ('block'), `mode: preferred`, at most 4 worker(s), or a higher `level` with "
                     "`sliceLevel: rack` (slices of 4 workers)"))


def test_a_preferred_level_too_small_is_a_likely_split(diagnose):
    text = VISION.replace("totalGpus: 32", "totalGpus: 64").replace("level: rack", "level: rack\n    mode: preferred")
    outcome = diagnose({JOB: text, "jobs/language-bert.yaml": None})
    expect(outcome, (JOB, 21, 12, "Kueue will likely split the job across 2 racks"), severity=Severity.WARNING)


@pytest.mark.parametrize(("topology", "where", "message", "hint"), [
    ("    level: rack\n    sliceLevel: block\n", 22, "slice level 'block' is not below the job's level 'rack'",
     "use one of 'host', or a higher `level`"),
    ("    level: block\n    sliceLevel: leaf\n", 22, "cluster 'dgx-pod' declares no topology level 'leaf'", ""),
])
def test_the_slice_level_lies_below_the_jobs_level(diagnose, topology, where, message, hint):
    outcome = diagnose({JOB: VISION.replace("    level: rack\n", topology)})
    expect(outcome, (JOB, where, 17, message, hint))


def test_a_slice_level_of_unknown_size_is_refused(diagnose):
    cluster = DGX_POD.replace("      domainNodes: 4  # four nodes under each leaf switch\n", "")
    outcome = diagnose({POD: cluster, JOB: VISION.replace("    level: rack\n", "    level: block\n    sliceLevel: rack\n")})
    expect(outcome, (JOB, 22, 17, "cluster 'dgx-pod' does not say how many nodes a 'rack' domain holds",
                     "give its level 'rack' `domainNodes`"))


def test_workers_not_a_whole_number_of_slices_are_refused_with_the_nearest_sizes(diagnose):
    edits = nvl72_edits(trays=27, topology="    level: block\n    sliceLevel: rack\n")
    outcome = without_compute_domain_warning(diagnose(edits))
    expect(outcome, (JOB, 22, 17, "the job's 27 workers are not a whole number of slices of 18 (one 'rack' "
                     "domain, nvidia.com/gpu.clique, holds 18 nodes: one NVLink domain (gpu.nvlinkDomainGpus 72 "
                     "/ 4 GPUs a node))", "use 18 or 36 workers, or another `sliceLevel`"))
    # Slices derived from the NVLink domain, not asked for: the job runs unsliced, with a warning.
    expect(without_compute_domain_warning(diagnose(nvl72_edits(trays=27))), (JOB, 21, 12,
                                                                            "so they get no slice annotations"),
           severity=Severity.WARNING)
