"""Every validation rule: a broken profile set, the exact message, and the `path:line:col` it points at.

Expected lines and columns are counted by hand from the profile text written in each test (columns
count from 1, like editors do). Most tests run load + validate in process; tests/acceptance/test_cli_errors.py
runs the real command line.
"""

from __future__ import annotations

from textwrap import dedent

import pytest
from conftest import PROFILES, WIDE_JOB, big_cluster, expect

from mpigen.commands.pipeline import check_profiles
from mpigen.support.diagnostics import NEVER_FITS, Severity, errors

# A GPU job on the example cluster that validates cleanly. Lines:
#  1 apiVersion   2 kind   3 name   4 cluster   5 pool   6 image   7 workers   8 program
GPU_JOB = dedent("""\
    apiVersion: mpigen/v1alpha1
    kind: Job
    name: train
    cluster: dgx-lab
    pool: dgx
    image: nvcr.io/nvidia/pytorch:24.03-py3
    workers: 2
    program: [python, train.py]
    """)

# The same on the CPU-only pool (line 5 differs).
CPU_JOB = GPU_JOB.replace("pool: dgx", "pool: cpu")

# A smaller stand-in for profiles/clusters/dgx-lab.yaml that keeps every name the example jobs use.
CLUSTER = dedent("""\
    apiVersion: mpigen/v1alpha1
    kind: Cluster
    name: dgx-lab
    kubernetesVersion: "1.31"
    namespaces: [ml-training, hpc]
    nodePools:
      - name: dgx
        hardware: dgx-1
        nodes: 4
      - name: cpu
        hardware: cpu-node
        nodes: 8
    rails:
      - name: rail0
        nic: ib0
        ipam:
          range: 192.168.100.0/24
      - name: rail1
        nic: ib1
        ipam:
          range: 192.168.101.0/24
    """)

DGX_1 = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
CPU_NODE = (PROFILES / "hardware" / "cpu-node.yaml").read_text(encoding="utf-8")
PI = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")

# Lines of the example files the tests below point into (see `cat -n profiles/...`).
assert DGX_1.splitlines()[8] == "name: dgx-1"
assert DGX_1.splitlines()[65] == "memoryGiB: 512"
assert CPU_NODE.splitlines()[13] == "  node.kubernetes.io/instance-type: cpu-2s64c"
assert PI.splitlines()[4] == "name: pi" and PI.splitlines()[9] == "workers: 2"
assert len(PI.splitlines()) == 24 and PI.endswith("\n")
assert DGX_LAB.splitlines()[5] == 'kubernetesVersion: "1.31"'


def test_example_fleet_is_clean(diagnose):
    assert diagnose({}).diagnostics == []


def test_base_texts_of_this_module_are_clean(diagnose):
    """The starting points below are valid, so each test's error comes from its one edit."""
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER, "jobs/train.yaml": GPU_JOB, "jobs/train-cpu.yaml":
                        CPU_JOB.replace("name: train", "name: train-cpu")})
    assert outcome.diagnostics == [], outcome.shown()


# --- schema ---------------------------------------------------------------------------------------------------------


def test_unknown_key_points_at_the_key_with_did_you_mean(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", "wokers: 2")})
    # An unknown key does not stop the cross-checks; that the job then has no `workers` is the same mistake,
    # which the did-you-mean already names, so "missing the job's size" is not said as well.
    expect(outcome, ("jobs/train.yaml", 7, 1, "unknown key 'wokers' in the profile", "did you mean 'workers'?"))


def test_misspelt_program_is_one_error(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("program: [", "programm: [")})
    expect(outcome, ("jobs/train.yaml", 8, 1, "unknown key 'programm' in the profile", "did you mean 'program'?"))


def test_a_job_without_size_beside_an_unrelated_unknown_key_is_still_told(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", "colour: blue")})
    expect(outcome, ("jobs/train.yaml", 1, 1, "missing the job's size"),
           ("jobs/train.yaml", 7, 1, "unknown key 'colour' in the profile"))


def test_unknown_key_alone_and_reference_errors_in_the_same_run(diagnose):
    text = GPU_JOB.replace("pool: dgx", "pool: dgz") + "descripton: a typo\n"
    outcome = diagnose({"jobs/train.yaml": text})
    expect(outcome,
           ("jobs/train.yaml", 5, 7, "cluster 'dgx-lab' has no node pool 'dgz'", "did you mean 'dgx'?"),
           ("jobs/train.yaml", 9, 1, "unknown key 'descripton' in the profile", "did you mean 'description'?"))


def test_a_misspelt_required_key_is_one_error_not_two(diagnose):
    cluster = CLUSTER.replace("    nodes: 4", "    nodez: 4")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    # Line 9 holds the misspelt key. That `nodes` is then missing is the same mistake: its did-you-mean says so.
    # The three example jobs name this (now invalid) cluster and must stay quiet.
    expect(outcome, ("clusters/dgx-lab.yaml", 9, 5, "unknown key 'nodez' in `nodePools[0]`", "did you mean 'nodes'?"))


def test_a_missing_required_key_beside_an_unrelated_unknown_key_is_still_reported(diagnose):
    cluster = CLUSTER.replace("    nodes: 4", "    colour: blue")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    # Line 7 `  - name: dgx` starts the pool mapping at column 5.
    expect(outcome,
           ("clusters/dgx-lab.yaml", 7, 5, "missing required key 'nodes' in `nodePools[0]`", "add `nodes:`"),
           ("clusters/dgx-lab.yaml", 9, 5, "unknown key 'colour' in `nodePools[0]`", "expected one of"))


@pytest.mark.parametrize(("name", "shown", "why"), [
    ("tr\u0430in", "tr\u0430in", "character 3 is U+0430 CYRILLIC SMALL LETTER A, which is not ASCII"),
    ("tra\u200bin", "tra\\u200bin", "character 4 is U+200B ZERO WIDTH SPACE, which is not ASCII"),
    ("train\u202eyek", "train\\u202eyek", "character 6 is U+202E RIGHT-TO-LEFT OVERRIDE, which is not ASCII"),
    ("tra\\x07in", "tra\\x07in", "character 4 is U+0007, a control character"),
    ("../../x", "../../x", "a DNS-1035 label has only lower-case letters, digits and `-`, starts with a letter and "
                           "ends with a letter or digit"),
    ("{{ .Release.Name }}", "{{ .Release.Name }}", "Helm template text (`{{ ... }}`) is not allowed in it"),
])
def test_a_name_that_is_not_valid_says_which_character_is_wrong(diagnose, name, shown, why):
    # Written double-quoted, so the escape `\x07` reaches the name as the character itself.
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("name: train", f'name: "{name}"')})
    # Characters one cannot see are shown as escapes; a look-alike is named.
    expect(outcome, ("jobs/train.yaml", 3, 7, f"`name` '{shown}' is not valid: {why}", "Name of the job"))


def test_white_space_where_there_may_be_none_is_named_even_around_template_text(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("image: nvcr.io/nvidia/pytorch:24.03-py3",
                                                           "image: 'nvcr.io/{{ .Release.Name }}'")})
    # Template text itself is fine in an image (it is written literally); the space after `{{` is not.
    expect(outcome, ("jobs/train.yaml", 6, 8, "`image` 'nvcr.io/{{ .Release.Name }}' is not valid: character 11 is a "
                                              "space, and there may be none", "Container image"))


def test_a_quantity_of_a_million_digits_is_refused_in_a_short_line(diagnose):
    # Once a decimal.Overflow traceback (the default context's exponent). Line 9 is `shmSize: `: column 10.
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "shmSize: " + "9" * 999_000 + "Ei\n"})
    expect(outcome, ("jobs/train.yaml", 9, 10, "`shmSize` is 999999999999999999999999...999999Ei (999002 characters), "
                                               "more than Kubernetes can count", "ask for less"))
    assert len(outcome.diagnostics[0].format()) < 500


def test_one_value_failing_two_checks_is_one_error(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", "workers: .inf"),
                        "clusters/dgx-lab.yaml": CLUSTER.replace("- name: rail0", "- name: Rail0-InfiniBand")})
    # `.inf` is not a whole number (that it is also above the maximum is noise), shown as written; the rail name
    # (line 14 `  - name: `, column 11) breaks its pattern (that it is also too long is noise).
    expect(outcome,
           ("clusters/dgx-lab.yaml", 14, 11, "`rails[0].name` 'Rail0-InfiniBand' is not valid: a DNS-1035 label"),
           ("jobs/train.yaml", 7, 10, "`workers` must be a whole number, not .inf"))


def test_a_number_is_shown_as_written(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace('kubernetesVersion: "1.31"', "kubernetesVersion: 1.30")})
    expect(outcome, ("clusters/dgx-lab.yaml", 4, 20, "`kubernetesVersion` must be a string, not 1.30", 'quote it: "1.30"'))


def test_extends_outside_hardware_says_only_hardware_extends(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("kind: Cluster\n", "kind: Cluster\nextends: lab\n")})
    expect(outcome, ("clusters/dgx-lab.yaml", 3, 1, "unknown key 'extends' in the profile",
                     "only a hardware profile can extend another; write this one out in full"))


def test_missing_required_key_points_at_the_profile_start(diagnose):
    text = "# a job without an image\n" + GPU_JOB.replace("image: nvcr.io/nvidia/pytorch:24.03-py3\n", "")
    outcome = diagnose({"jobs/train.yaml": text})
    # Line 1 is the comment; the mapping starts with `apiVersion` on line 2.
    expect(outcome, ("jobs/train.yaml", 2, 1, "missing required key 'image' in the profile",
                     "add `image:` (Container image"))


def test_string_where_a_number_belongs(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", 'workers: "2"')})
    expect(outcome, ("jobs/train.yaml", 7, 10, "`workers` must be a whole number, not '2'", "Worker pods"))


def test_unquoted_kubernetes_version_says_to_quote_it(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace('kubernetesVersion: "1.31"', "kubernetesVersion: 1.31")})
    expect(outcome, ("clusters/dgx-lab.yaml", 4, 20, "`kubernetesVersion` must be a string, not 1.31",
                     'quote it: "1.31"'))


def test_unquoted_kubernetes_version_with_trailing_zero_keeps_the_zero(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace('kubernetesVersion: "1.31"', "kubernetesVersion: 1.30")})
    expect(outcome, ("clusters/dgx-lab.yaml", 4, 20, "`kubernetesVersion` must be a string", 'quote it: "1.30"'))


def test_enum_with_did_you_mean(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "mpiImplementation: OpenMP\n"})
    expect(outcome, ("jobs/train.yaml", 9, 20, "`mpiImplementation` is 'OpenMP', which is not allowed",
                     "did you mean 'OpenMPI'?"))


def test_wrong_api_version(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("apiVersion: mpigen/v1alpha1", "apiVersion: mpigen/v1")})
    expect(outcome, ("jobs/train.yaml", 1, 13, "`apiVersion` is 'mpigen/v1'", "it must be `mpigen/v1alpha1`"))


def test_unknown_kind_with_did_you_mean(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("kind: Job", "kind: Jobb")})
    expect(outcome, ("jobs/train.yaml", 2, 7, "unknown kind 'Jobb'", "did you mean 'Job'?"))


def test_missing_kind(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("kind: Job\n", "")})
    expect(outcome, ("jobs/train.yaml", 1, 1, "missing `kind`", "Hardware, Cluster, Job"))


@pytest.mark.parametrize("kind", ["[Job]", "{a: 1}"])
def test_kind_that_is_not_a_string(diagnose, kind):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("kind: Job", f"kind: {kind}")})
    expect(outcome, ("jobs/train.yaml", 2, 7, "`kind` must be a plain string", "write one of Hardware, Cluster, Job"))


@pytest.mark.parametrize("name", ["Train", "my_train", "1train", "train-", "tr.ain"])
def test_job_name_must_be_a_dns_1035_label(diagnose, name):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("name: train", f"name: {name}")})
    expect(outcome, ("jobs/train.yaml", 3, 7, f"`name` '{name}' is not valid", "DNS-1035 label"))


@pytest.mark.parametrize("name", ["DGX", "dgx_pool"])
def test_pool_name_must_be_a_dns_1035_label(diagnose, name):
    # The pool is renamed, so jobs naming `dgx` would fail too; the cluster is invalid, so they stay quiet.
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("  - name: dgx", f"  - name: {name}")})
    expect(outcome, ("clusters/dgx-lab.yaml", 7, 11, f"`nodePools[0].name` '{name}' is not valid"))


def test_rail_name_longer_than_15_characters(diagnose):
    name = "rail-0123456789a"
    assert len(name) == 16
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("name: rail0", f"name: {name}")})
    expect(outcome, ("clusters/dgx-lab.yaml", 14, 11, "`rails[0].name` is 16 characters; it must be at most 15",
                     "interface name"))


def test_rail_name_of_exactly_15_characters_passes(diagnose):
    name = "rail-0123456789"
    assert len(name) == 15
    assert diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("name: rail0", f"name: {name}")}).diagnostics == []


@pytest.mark.parametrize("variable", ["1BAD", "MY-VAR", "A.B"])
def test_env_variable_name_must_be_valid(diagnose, variable):
    # Line 9 `env:`, line 10 the variable, its key at column 3.
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + f"env:\n  {variable}: x\n"})
    expect(outcome, ("jobs/train.yaml", 10, 3, f"key '{variable}' in `env` is not valid", "Environment variable name"))


def test_env_value_must_be_a_string(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "env:\n  NCCL_IB_DISABLE: 1\n"})
    expect(outcome, ("jobs/train.yaml", 10, 20, "`env.NCCL_IB_DISABLE` must be a string or a mapping, not 1",
                     'quote it: "1"'))


@pytest.mark.parametrize("key", ["Node.Kubernetes.io/type", "-type", "a/b/c", "x" * 64])
def test_hardware_label_key_must_be_valid(diagnose, key):
    text = CPU_NODE.replace("  node.kubernetes.io/instance-type: cpu-2s64c", f"  {key}: cpu-2s64c")
    outcome = diagnose({"hardware/cpu-node.yaml": text})
    expect(outcome, ("hardware/cpu-node.yaml", 14, 3, f"key '{key}' in `nodeLabels` is not valid", "Label key"))


def test_pool_label_key_must_be_valid(diagnose):
    cluster = CLUSTER.replace("    nodes: 8\n", "    nodes: 8\n    nodeLabels:\n      bad key: x\n")
    # Lines 13-14 are the new nodeLabels; the key sits at column 7.
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 14, 7, "key 'bad key' in `nodePools[1].nodeLabels` is not valid"))


def test_label_value_must_be_valid(diagnose):
    text = CPU_NODE.replace("instance-type: cpu-2s64c", "instance-type: -cpu")
    outcome = diagnose({"hardware/cpu-node.yaml": text})
    expect(outcome, ("hardware/cpu-node.yaml", 14, 37, "`nodeLabels.node.kubernetes.io/instance-type` '-cpu' is not valid",
                     "Label value"))


def test_label_key_prefix_longer_than_253_characters(diagnose):
    prefix = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 62])
    assert len(prefix) == 254
    text = CPU_NODE.replace("  node.kubernetes.io/instance-type: cpu-2s64c", f"  {prefix}/type: cpu")
    outcome = diagnose({"hardware/cpu-node.yaml": text})
    expect(outcome, ("hardware/cpu-node.yaml", 14, 3, f"label key '{prefix}/type' is too long",
                     "Kubernetes allows a prefix of 253 and a name of 63 characters"))


def test_namespace_must_be_a_dns_1123_label(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "namespace: ML_Training\n"})
    expect(outcome, ("jobs/train.yaml", 9, 12, "`namespace` 'ML_Training' is not valid"))


def test_number_below_its_minimum(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", "workers: 0")})
    expect(outcome, ("jobs/train.yaml", 7, 10, "`workers` is 0; it must be >= 1"))


def test_empty_list_where_one_item_is_needed(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("program: [python, train.py]", "program: []")})
    expect(outcome, ("jobs/train.yaml", 8, 10, "`program` needs at least 1 item(s)"))


# --- references -----------------------------------------------------------------------------------------------------


def test_unknown_cluster(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("cluster: dgx-lab", "cluster: dgx-lb")})
    expect(outcome, ("jobs/train.yaml", 4, 10, "no cluster profile is named 'dgx-lb'", "did you mean 'dgx-lab'?"))


def test_unknown_pool(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("pool: dgx", "pool: dgz")})
    expect(outcome, ("jobs/train.yaml", 5, 7, "cluster 'dgx-lab' has no node pool 'dgz'", "did you mean 'dgx'?"))


def test_unknown_hardware_does_not_cascade_into_rails_or_jobs(diagnose):
    # Pool `dgx` carries the rails and two example jobs; neither may add errors of their own.
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("hardware: dgx-1", "hardware: dgx1")})
    expect(outcome, ("clusters/dgx-lab.yaml", 8, 15, "no hardware profile is named 'dgx1'", "did you mean 'dgx-1'?"))


def test_unknown_rail_in_a_job(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "rails:\n  - rial0\n"})
    expect(outcome, ("jobs/train.yaml", 10, 5, "cluster 'dgx-lab' has no rail 'rial0'", "did you mean 'rail0'?"))


def test_rail_of_a_job_that_its_pool_cannot_carry(diagnose):
    outcome = diagnose({"jobs/train.yaml": CPU_JOB + "rails:\n  - rail0\n"})
    expect(outcome, ("jobs/train.yaml", 10, 5, "rail 'rail0' is not on pool 'cpu': its hardware 'cpu-node' has no NIC",
                     "this pool has no rails"))


def test_namespace_not_in_the_cluster(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "namespace: hcp\n"})
    expect(outcome, ("jobs/train.yaml", 9, 12, "cluster 'dgx-lab' has no namespace 'hcp'", "did you mean 'hpc'?"))
    assert f"(or add it to {outcome.root / 'clusters/dgx-lab.yaml'})" in outcome.diagnostics[0].hint


def test_rail_nic_that_no_pool_hardware_has(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("nic: ib1", "nic: eth0")})
    expect(outcome, ("clusters/dgx-lab.yaml", 19, 10, "rail 'rail1' uses NIC 'eth0', which no node pool's hardware has",
                     "expected one of 'ib0', 'ib1', 'ib2', 'ib3'"))


def test_rail_on_a_cluster_whose_hardware_has_no_nics(diagnose):
    cluster = dedent("""\
        apiVersion: mpigen/v1alpha1
        kind: Cluster
        name: lab
        kubernetesVersion: "1.31"
        namespaces: [jobs]
        nodePools:
          - {name: cpu, hardware: cpu-node, nodes: 2}
        rails:
          - {name: rail0, nic: ib0, ipam: {range: 10.0.0.0/24}}
        """)
    outcome = diagnose({"clusters/lab.yaml": cluster})
    # Line 9: `  - {name: rail0, nic: ` is 23 characters, `ib0` column 24.
    expect(outcome, ("clusters/lab.yaml", 9, 24, "rail 'rail0' uses NIC 'ib0', which no node pool's hardware has",
                     "the hardware of this cluster's pools has no NICs at all: add it to `nics` of the hardware "
                     "profile, or remove the rail"))


def test_rail_nic_with_did_you_mean(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("nic: ib1", "nic: ib-1")})
    expect(outcome, ("clusters/dgx-lab.yaml", 19, 10, "uses NIC 'ib-1'", "did you mean 'ib1'?"))


def test_broken_hardware_is_not_also_reported_as_unknown(diagnose):
    # dgx-1.yaml line 66 `memoryGiB: 512`; the cluster's pool and two jobs name this hardware.
    outcome = diagnose({"hardware/dgx-1.yaml": DGX_1.replace("memoryGiB: 512", 'memoryGiB: "512"')})
    expect(outcome, ("hardware/dgx-1.yaml", 66, 12, "`memoryGiB` must be a whole number, not '512'"))


def test_broken_cluster_is_not_also_reported_as_unknown(diagnose):
    # dgx-lab.yaml line 6; all three example jobs name this cluster.
    text = DGX_LAB.replace('kubernetesVersion: "1.31"', 'kubernetesVersion: "1.2"')
    outcome = diagnose({"clusters/dgx-lab.yaml": text})
    expect(outcome, ("clusters/dgx-lab.yaml", 6, 20, "`kubernetesVersion` '1.2' is not valid"))


def test_hardware_with_a_misspelt_kind_is_not_also_reported_as_unknown(diagnose):
    # (roce-lab, whose hardware extends dgx-1, would fall back on the built-in, which has no node labels for its
    # SriovNetworkPoolConfig: true, but not this test's point.)
    outcome = diagnose({"hardware/dgx-1.yaml": DGX_1.replace("kind: Hardware", "kind: Hardwar"),
                        "clusters/roce-lab.yaml": None})
    expect(outcome, ("hardware/dgx-1.yaml", 8, 7, "unknown kind 'Hardwar'", "did you mean 'Hardware'?"))


def test_hardware_file_that_is_not_yaml_is_not_also_reported_as_unknown(diagnose):
    # cpu-node.yaml line 12: `memoryGiB: ` is 11 columns, `256` 12 to 14, the second `:` column 15.
    outcome = diagnose({"hardware/cpu-node.yaml": CPU_NODE.replace("memoryGiB: 256", "memoryGiB: 256: GiB")})
    expect(outcome, ("hardware/cpu-node.yaml", 12, 15, "not valid YAML: mapping values are not allowed here"))


# --- GPUs, nodes and CPUs -------------------------------------------------------------------------------------------


def test_more_gpus_per_worker_than_a_node_has(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "gpusPerWorker: 16\n"})
    expect(outcome, ("jobs/train.yaml", 9, 16, "a worker asks for 16 GPUs but a node of pool 'dgx' (hardware 'dgx-1') has 8",
                     "use at most 8"))


@pytest.mark.parametrize(("per_worker", "total", "hint"), [(None, 12, "use 8 or 16"), (3, 10, "use 9 or 12")])
def test_total_gpus_not_a_multiple_of_gpus_per_worker(diagnose, per_worker, total, hint):
    text = GPU_JOB.replace("workers: 2", f"totalGpus: {total}")
    if per_worker:
        text += f"gpusPerWorker: {per_worker}\n"
    outcome = diagnose({"jobs/train.yaml": text})
    expect(outcome, ("jobs/train.yaml", 7, 12,
                     f"totalGpus {total} is not a multiple of {per_worker or 8} GPUs per worker", hint))


def test_total_gpus_below_one_worker_does_not_repeat_the_suggestion(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", "totalGpus: 4")})
    expect(outcome, ("jobs/train.yaml", 7, 12, "totalGpus 4 is not a multiple of 8 GPUs per worker"))
    assert "8 or 8" not in outcome.diagnostics[0].hint


@pytest.mark.parametrize(("line", "key"), [("gpusPerWorker: 1", "gpusPerWorker"), ("totalGpus: 2", "totalGpus")])
def test_gpu_keys_on_a_cpu_pool(diagnose, line, key):
    text = CPU_JOB + f"{line}\n" if key == "gpusPerWorker" else CPU_JOB.replace("workers: 2", line)
    row, column = (9, 16) if key == "gpusPerWorker" else (7, 12)
    outcome = diagnose({"jobs/train.yaml": text})
    expect(outcome, ("jobs/train.yaml", row, column, f"`{key}` is set but pool 'cpu' (hardware 'cpu-node') has no GPUs",
                     "pick a GPU pool"))


@pytest.mark.parametrize(("size", "column"), [("workers: 5", 10), ("totalGpus: 40", 12)])
def test_more_full_node_workers_than_nodes(diagnose, size, column):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", size)})
    expect(outcome, ("jobs/train.yaml", 7, column,
                     "5 full-node workers need 5 nodes but pool 'dgx' (hardware 'dgx-1') has 4", "use at most 4 workers"))


def test_as_many_full_node_workers_as_nodes_pass(diagnose):
    assert diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", "workers: 4")}).diagnostics == []


def test_more_full_node_cpu_workers_than_nodes(diagnose):
    # Without a CPU request a CPU worker takes a whole node; the pool has 8.
    outcome = diagnose({"jobs/train.yaml": CPU_JOB.replace("workers: 2", "workers: 9")})
    expect(outcome, ("jobs/train.yaml", 7, 10,
                     "9 full-node workers need 9 nodes but pool 'cpu' (hardware 'cpu-node') has 8"))


def test_more_partial_node_workers_than_fit(diagnose):
    # 2 GPUs per worker: 4 workers on each of the 4 DGX-1 nodes, 16 in all.
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2", "workers: 17") + "gpusPerWorker: 2\n"})
    expect(outcome, ("jobs/train.yaml", 7, 10, "17 workers need more than the 4 nodes of pool 'dgx' (hardware 'dgx-1'): "
                     "4 fit on a node, 16 in all", "use at most 16 workers"))


def test_partial_node_workers_that_just_fit_pass(diagnose):
    text = GPU_JOB.replace("workers: 2", "workers: 16") + "gpusPerWorker: 2\n"
    assert diagnose({"jobs/train.yaml": text}).diagnostics == []


def test_more_partial_node_cpu_workers_than_fit(diagnose):
    # cpu-node has 2 x 32 x 2 = 128 logical CPUs: two 64-CPU workers per node, 16 on the 8 nodes.
    text = CPU_JOB.replace("workers: 2", "workers: 17") + 'resources:\n  cpu: "64"\n'
    outcome = diagnose({"jobs/train.yaml": text})
    expect(outcome, ("jobs/train.yaml", 7, 10, "17 workers need more than the 8 nodes of pool 'cpu' (hardware 'cpu-node'): "
                     "2 fit on a node, 16 in all"))


def test_cpu_and_memory_requests_bound_the_gpu_workers_a_node_holds(diagnose):
    # A DGX-1 node has 80 logical CPUs and 512Gi: 1-GPU workers of 30 CPUs fit two a node (not eight, as the
    # GPUs alone would allow), so 9 need more than the pool's 4 nodes; of 300Gi, one a node.
    text = GPU_JOB.replace("workers: 2", "workers: 9") + 'gpusPerWorker: 1\nresources:\n  cpu: "30"\n'
    expect(diagnose({"jobs/train.yaml": text}), ("jobs/train.yaml", 7, 10, "9 workers need more than the 4 nodes of "
                                                 "pool 'dgx' (hardware 'dgx-1'): 2 fit on a node (by their CPU "
                                                 "requests), 8 in all"))
    text = GPU_JOB.replace("workers: 2", "workers: 5") + "gpusPerWorker: 1\nresources:\n  memory: 300Gi\n"
    expect(diagnose({"jobs/train.yaml": text}), ("jobs/train.yaml", 7, 10, "5 workers need more than the 4 nodes of "
                                                 "pool 'dgx' (hardware 'dgx-1'): 1 fit on a node (by their memory "
                                                 "requests), 4 in all"))


def test_cpu_request_above_a_nodes_cpus(diagnose):
    outcome = diagnose({"jobs/train.yaml": CPU_JOB + 'resources:\n  cpu: "200"\n'})
    expect(outcome, ("jobs/train.yaml", 10, 8, "a worker asks for 200 CPUs but a node of pool 'cpu' (hardware 'cpu-node') "
                     "has 128", "ask for fewer CPUs"))


def test_cpu_request_of_a_whole_node_passes(diagnose):
    assert diagnose({"jobs/train.yaml": CPU_JOB + 'resources:\n  cpu: "128"\n'}).diagnostics == []


def test_cpu_request_above_a_gpu_nodes_cpus(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + 'resources:\n  cpu: "100"\n'})
    expect(outcome, ("jobs/train.yaml", 10, 8,
                     "a worker asks for 100 CPUs but a node of pool 'dgx' (hardware 'dgx-1') has 80"))


def test_memory_request_above_a_nodes_memory(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "resources:\n  memory: 1Ti\n"})
    expect(outcome, ("jobs/train.yaml", 10, 11, "1Ti"))
    assert "512" in outcome.diagnostics[0].message


def test_zero_cpu_request_is_not_called_too_big(diagnose):
    outcome = diagnose({"jobs/train.yaml": CPU_JOB + 'resources:\n  cpu: "0"\n'})
    expect(outcome, ("jobs/train.yaml", 10, 8, "0"))
    assert "does not fit" not in outcome.diagnostics[0].message
    assert "ask for less" not in outcome.diagnostics[0].hint


# --- names mpi-operator would reject --------------------------------------------------------------------------------


# Default naming adds "-" and a 7-character hash to the MPIJob name, which every pod name starts with; the
# error shows it as "-<hash>" and counts its 8 characters. Stable naming adds nothing. The hint says how short
# the name must be: 63 less what the pod name adds to it.
HASHED = ("", "-<hash>", 8, " (the MPIJob name adds 8 characters of content hash; `naming: stable` drops them)")
STABLE = ("naming: stable\n", "", 0, "")


@pytest.mark.parametrize("policy", [HASHED, STABLE], ids=["content-hash", "stable"])
@pytest.mark.parametrize(("length", "workers", "last", "pod_length"),
                         [(55, 10, "-worker-9", 64), (54, 11, "-worker-10", 64), (63, 1, "-worker-0", 72)])
def test_last_worker_pod_name_longer_than_63(diagnose, length, workers, last, pod_length, policy):
    # The schema allows job names of up to 63 characters; only this cross-rule sees the pod names.
    line, shown, extra, why = policy
    name = "a" * (length - extra)
    hint = f"shorten the job name to at most {63 - (pod_length - len(name))} characters{why}"
    text = GPU_JOB.replace("name: train", f"name: {name}").replace("workers: 2", f"workers: {workers}")
    outcome = diagnose({"jobs/train.yaml": text + "gpusPerWorker: 1\n" + line})
    pod = name + shown + last
    wanted = (f"mpi-operator would reject this job: worker pod name '{pod}' is {pod_length} characters, "
              "more than 63")
    operator = [d for d in outcome.diagnostics if d.message.startswith("mpi-operator")]
    assert [(d.location.line, d.location.column, d.message, d.hint) for d in operator] == [(3, 7, wanted, hint)]


@pytest.mark.parametrize("policy", [HASHED, STABLE], ids=["content-hash", "stable"])
def test_last_worker_pod_name_with_101_workers(diagnose, policy):
    # 53 characters is the longest Helm release name; with stable naming, 101 workers make the last pod
    # `-worker-100`, 64 characters. With the hash, 45 characters do the same.
    line, shown, extra, why = policy
    name = "b" * (53 - extra)
    hint = f"shorten the job name to at most {52 - extra} characters{why}"  # one less: the pod name is 64
    text = CPU_JOB.replace("name: train", f"name: {name}").replace("workers: 2", "workers: 101")
    outcome = diagnose({"jobs/train.yaml": text + 'resources:\n  cpu: "1"\n' + line})
    expect(outcome, ("jobs/train.yaml", 3, 7, f"worker pod name '{name}{shown}-worker-100' is 64 characters, "
                     "more than 63", hint))


@pytest.mark.parametrize("policy", [HASHED, STABLE], ids=["content-hash", "stable"])
@pytest.mark.parametrize(("length", "workers"), [(54, 10), (53, 11), (54, 1)])
def test_last_worker_pod_name_of_exactly_63_passes(diagnose, length, workers, policy):
    line, _, extra, _ = policy
    length -= extra
    text = GPU_JOB.replace("name: train", f"name: {'a' * length}").replace("workers: 2", f"workers: {workers}")
    found = diagnose({"jobs/train.yaml": text + "gpusPerWorker: 1\n" + line}).diagnostics
    assert [d for d in found if "mpi-operator" in d.message] == []
    # Names over 53 characters are refused for another reason: Helm's release-name limit.
    assert [d.message for d in found] == ([] if length <= 53 else [
        f"job chart release '{'a' * length}' is {length} characters; Helm release names may have 53"])


# --- hostfiles a cluster stores ----------------------------------------------------------------------------------------

# Job `wide` on a cluster of 100,000 CPU nodes (conftest.WIDE_JOB: namespace mpi, 64 slots a worker). Each worker
# adds two lines to mpi-operator's ConfigMap wide-<hash>-config: `wide-0000000-worker-<i>.wide-0000000.mpi.svc
# slots=64` (51 bytes and the digits of i, newline included) and `echo <host>` (47 and the digits), after
# `#!/bin/sh\n`. For n workers past 10,000 the digits of 0..n-1 come to 38,890 + 5 (n - 10,000), so the lines are
# 108 n - 22,210 bytes: 1,507,286 for 14,162 workers, within the 1,507,328 mpigen lets them have (etcd's 1.5 MiB less
# 64 KiB), and 1,507,394 for 14,163.


@pytest.mark.parametrize(("workers", "size"), [(14_162, None), (14_163, "1,507,394"), (100_000, "10,777,790")])
def test_a_job_whose_hostfile_etcd_would_not_store_is_refused_at_its_size(diagnose, workers, size):
    outcome = diagnose({"clusters/big.yaml": big_cluster(1, 100_000), "jobs/wide.yaml": WIDE_JOB + f"workers: {workers}\n"})
    if size is None:
        assert outcome.diagnostics == []
        return
    expect(outcome, ("jobs/wide.yaml", 11, 10, f"{workers} workers give mpi-operator's ConfigMap wide-<hash>-config "
                     f"{size} bytes of hostfile and discover_hosts.sh (a line per worker), more than the 1,507,328 an "
                     "object may hold beside its metadata under etcd's default limit of 1,572,864 bytes: mpi-operator "
                     "could not create it, and the job would never start",
                     "use at most 14162 workers, or shorten the job name and namespace (each line holds both)"))
    assert outcome.diagnostics[0].code == NEVER_FITS


def test_a_gpu_job_whose_rankfile_etcd_would_not_store_is_refused_at_its_total_gpus(diagnose):
    # Eight ranks a worker, each a rankfile line in mpigen's own ConfigMap, which is then the larger one.
    cluster = big_cluster(1, 100_000, "dgx-1")
    outcome = diagnose({"clusters/big.yaml": cluster, "jobs/wide.yaml": WIDE_JOB + "totalGpus: 80000\n"})
    expect(outcome, ("jobs/wide.yaml", 11, 12, "10000 workers give ConfigMap wide-<hash>-hostfile ",
                     "use at most "))
    assert "bytes of hostfile and rankfile (a line per worker and per rank)" in outcome.diagnostics[0].message


def test_job_name_of_54_characters_is_too_long_for_a_helm_release(diagnose):
    name = "a" * 54
    # Stable naming: with the hash, the pod names would be refused too (tested above).
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("name: train", f"name: {name}") + "naming: stable\n"})
    expect(outcome, ("jobs/train.yaml", 3, 7, f"job chart release '{name}' is 54 characters; Helm release names may "
                     "have 53", "shorten the name to at most 53 characters"))


def test_cluster_name_too_long_for_its_infra_release(diagnose):
    name = "c" * 48
    text = CLUSTER.replace("name: dgx-lab", f"name: {name}")
    outcome = diagnose({"clusters/dgx-lab.yaml": text, "jobs/pi.yaml": None, "jobs/resnet50-dgx.yaml": None,
                        "jobs/resnet50-trainjob.yaml": None, "jobs/tensorflow-benchmarks.yaml": None})
    expect(outcome, ("clusters/dgx-lab.yaml", 3, 7, f"infra chart release '{name}-infra' is 54 characters",
                     "shorten the name to at most 47 characters"))


# --- duplicate names ------------------------------------------------------------------------------------------------


def test_two_hardware_profiles_with_one_name(diagnose):
    # Files are read in path order: zz-dgx.yaml comes second, so it is the one reported.
    outcome = diagnose({"hardware/zz-dgx.yaml": DGX_1})
    expect(outcome, ("hardware/zz-dgx.yaml", 9, 7, "hardware name 'dgx-1' is used twice in the profiles",
                     f"the other is at {outcome.at('hardware/dgx-1.yaml', 9, 7)}; rename one"))


def test_two_clusters_with_one_name(diagnose):
    outcome = diagnose({"clusters/zz.yaml": CLUSTER})
    expect(outcome, ("clusters/zz.yaml", 3, 7, "cluster name 'dgx-lab' is used twice in the profiles",
                     f"the other is at {outcome.at('clusters/dgx-lab.yaml', 5, 7)}"))


def test_two_jobs_with_one_name_in_a_cluster(diagnose):
    outcome = diagnose({"jobs/zz-pi.yaml": PI})
    expect(outcome, ("jobs/zz-pi.yaml", 5, 7, "job name 'pi' is used twice in cluster 'dgx-lab'",
                     f"the other is at {outcome.at('jobs/pi.yaml', 5, 7)}"))


def test_one_job_name_in_two_clusters_passes(diagnose):
    other = CLUSTER.replace("name: dgx-lab", "name: other-lab")
    job = PI.replace("cluster: dgx-lab", "cluster: other-lab")
    outcome = diagnose({"clusters/other-lab.yaml": other, "jobs/zz-pi.yaml": job})
    assert outcome.diagnostics == [], outcome.shown()


def test_duplicate_pool_name(diagnose):
    cluster = CLUSTER.replace("rails:\n", "  - name: dgx\n    hardware: dgx-1\n    nodes: 2\nrails:\n")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 13, 11, "node pool 'dgx' appears twice", "the first is at line 7"))


def test_duplicate_namespace(diagnose):
    cluster = CLUSTER.replace("namespaces: [ml-training, hpc]\n", "namespaces:\n  - ml-training\n  - hpc\n  - hpc\n")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 8, 5, "namespace 'hpc' appears twice", "the first is at line 7"))


def test_duplicate_rail_name_and_so_resource_name(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("name: rail1", "name: rail0")})
    # Line 18 `  - name: rail0`: the rail item starts at column 5, its name at column 11.
    expect(outcome,
           ("clusters/dgx-lab.yaml", 18, 5, "rail resource name 'rdma_rail0' appears twice", "the first is at line 14"),
           ("clusters/dgx-lab.yaml", 18, 11, "rail 'rail0' appears twice", "the first is at line 14"))


def test_duplicate_rail_nic(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("nic: ib1", "nic: ib0")})
    expect(outcome, ("clusters/dgx-lab.yaml", 19, 10, "rail NIC 'ib0' appears twice", "the first is at line 15"))


def test_duplicate_rail_resource_name(diagnose):
    cluster = CLUSTER.replace("    nic: ib1\n", "    nic: ib1\n    resourceName: rdma_rail0\n")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 18, 5, "rail resource name 'rdma_rail0' appears twice"))


FIFTH_NIC = (
    "  - name: {name}\n"
    "    hca: {hca}\n"
    "    pfName: ib4\n"
    '    vendorId: "15b3"\n'
    '    deviceId: "1013"\n'
    "    linkType: InfiniBand\n"
)


def _dgx_with_fifth_nic(name: str, hca: str) -> str:
    """dgx-1.yaml with a NIC added after line 60: it starts on line 61."""
    text = DGX_1.replace("cpu:\n", FIFTH_NIC.format(name=name, hca=hca) + "cpu:\n", 1)
    assert text.splitlines()[60] == f"  - name: {name}"
    return text


# The fleet's NetApp hardware extends dgx-1 and would repeat its errors; these tests are about dgx-1's own. Its
# clusters (netapp-lab, roce-lab) go with it.
WITHOUT_NETAPP = {"hardware/dgx-1-roce.yaml": None, "clusters/netapp-lab.yaml": None, "jobs/netapp-resnet50.yaml": None,
                  "clusters/roce-lab.yaml": None}


def test_duplicate_nic_name(diagnose):
    outcome = diagnose({**WITHOUT_NETAPP, "hardware/dgx-1.yaml": _dgx_with_fifth_nic("ib0", "mlx5_4")})
    expect(outcome, ("hardware/dgx-1.yaml", 61, 11, "NIC name 'ib0' appears twice", "the first is at line 17"))


def test_duplicate_hca_and_port(diagnose):
    outcome = diagnose({**WITHOUT_NETAPP, "hardware/dgx-1.yaml": _dgx_with_fifth_nic("ib4", "mlx5_0")})
    expect(outcome, ("hardware/dgx-1.yaml", 61, 5, "HCA and port 'mlx5_0:1' appears twice", "the first is at line 17"))


def test_nic_names_a_gpu_the_hardware_does_not_have(diagnose):
    text = DGX_1.replace("    gpus: [0, 1]\n", "    gpus: [0, 8]\n", 1)
    # Line 27 is now `    gpus: [0, 8]`; the 8 sits at column 15.
    outcome = diagnose({"hardware/dgx-1.yaml": text})
    expect(outcome, ("hardware/dgx-1.yaml", 27, 15, "GPU index 8 does not exist: this hardware has 8 GPU(s)",
                     "use indexes 0 to 7"))


VOLUMES = dedent("""\
    volumes:
      - name: {first}
        claim: data
        mountPath: {first_path}
      - name: {second}
        claim: other
        mountPath: {second_path}
    """)


def _job_with_volumes(first="data", first_path="/data", second="other", second_path="/other") -> str:
    """GPU_JOB and two volumes: names on lines 10 and 13 (column 11), mount paths on 12 and 15 (column 16)."""
    return GPU_JOB + VOLUMES.format(first=first, first_path=first_path, second=second, second_path=second_path)


def test_two_distinct_volumes_pass(diagnose):
    assert diagnose({"jobs/train.yaml": _job_with_volumes()}).diagnostics == []


def test_duplicate_volume_name(diagnose):
    outcome = diagnose({"jobs/train.yaml": _job_with_volumes(second="data")})
    expect(outcome, ("jobs/train.yaml", 13, 11, "volume name 'data' appears twice", "the first is at line 10"))


def test_duplicate_mount_path(diagnose):
    outcome = diagnose({"jobs/train.yaml": _job_with_volumes(second_path="/data")})
    expect(outcome, ("jobs/train.yaml", 15, 16, "mount path '/data' appears twice", "the first is at line 12"))


@pytest.mark.parametrize("name", ["dshm", "mpigen-hostfile"])
def test_reserved_volume_name(diagnose, name):
    outcome = diagnose({"jobs/train.yaml": _job_with_volumes(second=name)})
    expect(outcome, ("jobs/train.yaml", 13, 11, f"volume name '{name}' is used by mpigen", "pick another name"))


@pytest.mark.parametrize("path", ["/dev/shm", "/dev/shm/", "/etc/mpigen", "/etc/mpigen/", "/"])
def test_reserved_mount_path(diagnose, path):
    outcome = diagnose({"jobs/train.yaml": _job_with_volumes(second_path=path)})
    expect(outcome, ("jobs/train.yaml", 15, 16, f"mount path '{path}' collides with",
                     "mount the claim somewhere else"))


@pytest.mark.parametrize("name", ["ssh-auth", "mpi-job-config"])
def test_volume_name_used_by_mpi_operator(diagnose, name):
    outcome = diagnose({"jobs/train.yaml": _job_with_volumes(second=name)})
    expect(outcome, ("jobs/train.yaml", 13, 11, f"volume name '{name}'"))


@pytest.mark.parametrize("path", ["/root/.ssh", "/etc/mpi"])
def test_mount_path_used_by_mpi_operator(diagnose, path):
    outcome = diagnose({"jobs/train.yaml": _job_with_volumes(second_path=path)})
    expect(outcome, ("jobs/train.yaml", 15, 16, f"mount path '{path}'"))


def test_mount_path_at_the_jobs_ssh_auth_mount_path(diagnose):
    text = PI + "volumes:\n  - name: home\n    claim: home\n    mountPath: /home/mpiuser/.ssh\n"
    # pi.yaml has 24 lines; the mount path is on line 28.
    outcome = diagnose({"jobs/pi.yaml": text})
    expect(outcome, ("jobs/pi.yaml", 28, 16, "mount path '/home/mpiuser/.ssh'"))


# --- IPAM -----------------------------------------------------------------------------------------------------------


def test_overlapping_rail_ranges_name_both_rails(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("192.168.101.0/24", "192.168.100.128/25")})
    expect(outcome, ("clusters/dgx-lab.yaml", 21, 14, "range 192.168.100.128/25 of rail 'rail1' overlaps range "
                     "192.168.100.0/24 of rail 'rail0'", "give every rail its own subnet"))


def test_range_with_host_bits_set(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("192.168.100.0/24", "192.168.100.1/24")})
    expect(outcome, ("clusters/dgx-lab.yaml", 17, 14, "'192.168.100.1/24' has host bits set",
                     "did you mean '192.168.100.0/24'?"))


def test_range_that_is_not_an_address(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("192.168.100.0/24", "300.168.100.0/24")})
    expect(outcome, ("clusters/dgx-lab.yaml", 17, 14, "'300.168.100.0/24' is not an IPv4 CIDR"))


def test_exclude_outside_the_range(diagnose):
    exclude = "      range: 192.168.100.0/24\n      exclude:\n        - 192.168.100.0/28\n        - 10.0.0.0/28\n"
    cluster = CLUSTER.replace("      range: 192.168.100.0/24\n", exclude)
    # Line 18 `exclude:`, lines 19-20 the two excludes; only the second (line 20, column 11) is outside.
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 20, 11, "excluded 10.0.0.0/28 is not inside the rail's range 192.168.100.0/24",
                     "exclude only addresses of this rail's range"))


# --- exactly one of ------------------------------------------------------------------------------------------------


def test_both_workers_and_total_gpus(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "totalGpus: 16\n"})
    expect(outcome, ("jobs/train.yaml", 9, 12, "give exactly one of `workers` and `totalGpus`", "keep one"))


def test_neither_workers_nor_total_gpus(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("workers: 2\n", "")})
    expect(outcome, ("jobs/train.yaml", 1, 1, "missing the job's size", "add `workers: N`"))


def test_both_program_and_launcher_command(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "launcherCommand: [mpirun, train]\n"})
    expect(outcome, ("jobs/train.yaml", 9, 18, "give exactly one of `program` and `launcherCommand`"))


def test_both_program_and_launcher_command_hint_says_to_keep_one(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "launcherCommand: [mpirun, train]\n"})
    expect(outcome, ("jobs/train.yaml", 9, 18, "give exactly one of `program` and `launcherCommand`"))
    assert not outcome.diagnostics[0].hint.startswith("add ")


def test_neither_program_nor_launcher_command(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("program: [python, train.py]\n", "")})
    expect(outcome, ("jobs/train.yaml", 1, 1, "missing what the job runs", "add `program:"))


# --- warnings -------------------------------------------------------------------------------------------------------


ALL_RAILS = "rails: [rail0, rail1, rail2, rail3]\n"  # every GPU has its NIC: no locality warning (test_validate_topology)


def test_non_root_user_with_rails_warns(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + ALL_RAILS + "runAsUser: 1000\nsshAuthMountPath: /home/u/.ssh\n"
                                           "sshPort: 2222\n"})
    expect(outcome, ("jobs/train.yaml", 10, 12, "RDMA needs IPC_LOCK, which only takes effect for root"),
           severity=Severity.WARNING)
    assert errors(outcome.diagnostics) == []


@pytest.mark.parametrize("extra", [ALL_RAILS + "runAsUser: 0\n",
                                   "rails: []\nrunAsUser: 1000\nsshAuthMountPath: /home/u/.ssh\nsshPort: 2222\n"])
def test_root_or_no_rails_does_not_warn(diagnose, extra):
    assert diagnose({"jobs/train.yaml": GPU_JOB + extra}).diagnostics == []


def test_non_root_user_with_default_rails_warns(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "runAsUser: 1000\nsshAuthMountPath: /home/u/.ssh\nsshPort: 2222\n"})
    expect(outcome, ("jobs/train.yaml", 9, 12, "RDMA needs IPC_LOCK"), severity=Severity.WARNING)


def test_mpirun_args_with_launcher_command_warns(diagnose):
    text = GPU_JOB.replace("program: [python, train.py]", "launcherCommand: [mpirun, train]") + "mpirunArgs: [-x, A]\n"
    outcome = diagnose({"jobs/train.yaml": text})
    expect(outcome, ("jobs/train.yaml", 9, 13, "`mpirunArgs` has no effect with `launcherCommand`",
                     "put the arguments into launcherCommand"), severity=Severity.WARNING)
    assert errors(outcome.diagnostics) == []


# --- every error of every file in one run ---------------------------------------------------------------------------


def test_all_errors_of_all_files_in_file_then_line_order(diagnose):
    outcome = diagnose({
        # line 12 of cpu-node.yaml
        "hardware/cpu-node.yaml": CPU_NODE.replace("memoryGiB: 256", "memoryGiB: -1"),
        # line 6 of dgx-lab.yaml
        "clusters/dgx-lab.yaml": DGX_LAB.replace('kubernetesVersion: "1.31"', "kubernetesVersion: 1.31"),
        # line 10 of pi.yaml
        "jobs/pi.yaml": PI.replace("workers: 2", 'workers: "2"'),
    })
    # File order (clusters, hardware, jobs) is not line order (6, 12, 10).
    expect(outcome,
           ("clusters/dgx-lab.yaml", 6, 20, "`kubernetesVersion` must be a string"),
           ("hardware/cpu-node.yaml", 12, 12, "`memoryGiB` is -1; it must be >= 1"),
           ("jobs/pi.yaml", 10, 10, "`workers` must be a whole number"))


def test_errors_of_one_file_in_line_order_not_key_order(diagnose):
    text = GPU_JOB.replace("image: nvcr.io/nvidia/pytorch:24.03-py3", "runAsUser: -1") + 'image: "a b"\n'
    # Line 6 is now `runAsUser: -1`, line 9 `image: "a b"`: alphabetically image < runAsUser.
    outcome = diagnose({"jobs/train.yaml": text})
    expect(outcome,
           ("jobs/train.yaml", 6, 12, "`runAsUser` is -1; it must be >= 0"),
           ("jobs/train.yaml", 9, 8, "`image` 'a b' is not valid"))


def test_schema_and_reference_errors_of_different_files_together(diagnose):
    outcome = diagnose({
        "jobs/pi.yaml": PI.replace("pool: cpu", "pool: cpus"),
        "jobs/train.yaml": GPU_JOB.replace("workers: 2", "workers: two"),
    })
    expect(outcome,
           ("jobs/pi.yaml", 7, 7, "cluster 'dgx-lab' has no node pool 'cpus'", "did you mean 'cpu'?"),
           ("jobs/train.yaml", 7, 10, "`workers` must be a whole number, not 'two'"))


# --- rules added after review: operator mounts, link types, address space, memory, privileges -----------------------


def test_mount_path_inside_or_above_a_reserved_mount(diagnose):
    volume = "volumes:\n  - name: data\n    claim: data\n    mountPath: {}\n"
    for path, clash in (("/etc/mpigen/sub", "/etc/mpigen"), ("/dev", "/dev/shm")):
        outcome = diagnose({"jobs/train.yaml": GPU_JOB + volume.format(path)})
        expect(outcome, ("jobs/train.yaml", 12, 16, f"mount path '{path}' collides with {clash}",
                         "mount the claim somewhere else"))


def test_rail_whose_nic_is_infiniband_on_one_pool_and_ethernet_on_another(diagnose):
    roce = DGX_1.replace("name: dgx-1", "name: dgx-1-roce").replace("linkType: InfiniBand", "linkType: Ethernet")
    cluster = CLUSTER.replace("  - name: cpu\n", "  - name: roce\n    hardware: dgx-1-roce\n    nodes: 2\n  - name: cpu\n")
    outcome = diagnose({"hardware/dgx-1-roce.yaml": roce, "clusters/dgx-lab.yaml": cluster})
    expect(outcome,
           ("clusters/dgx-lab.yaml", 18, 10, "rail 'rail0' runs over NIC 'ib0', which is Ethernet on pool 'roce', "
            "InfiniBand on pool 'dgx'", "give InfiniBand and Ethernet NICs different names"),
           ("clusters/dgx-lab.yaml", 22, 10, "rail 'rail1' runs over NIC 'ib1'"))


def test_rail_range_too_small_for_the_nodes_that_carry_it(diagnose):
    # A /30 has 2 host addresses; the 4 DGX-1 nodes of pool dgx carry rail0.
    cluster = CLUSTER.replace("range: 192.168.100.0/24", "range: 192.168.100.0/30")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 17, 14, "range 192.168.100.0/30 of rail 'rail0' leaves 2 address(es) "
                     "for the 4 node(s) that carry it", "give the rail a larger range"))


def test_excluding_the_whole_rail_range(diagnose):
    cluster = CLUSTER.replace("range: 192.168.101.0/24", "range: 192.168.101.0/24\n      exclude: [192.168.101.0/24]")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 21, 14, "leaves 0 address(es) for the 4 node(s)"))


def test_resource_prefix_in_the_kubernetes_io_domain(diagnose):
    cluster = CLUSTER + "network:\n  resourcePrefix: kubernetes.io\n"
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    expect(outcome, ("clusters/dgx-lab.yaml", 23, 19, "'kubernetes.io' cannot prefix an extended resource",
                     "e.g. nvidia.com"))


def test_shm_larger_than_a_node(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "shmSize: 600Gi\n"})
    expect(outcome, ("jobs/train.yaml", 9, 10, "a worker's /dev/shm of 600Gi is more than a node of pool 'dgx' has "
                     "(512Gi)", "ask for less /dev/shm"))


def test_shm_not_smaller_than_the_memory_limit_warns(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "resources:\n  memory: 32Gi\nshmSize: 32Gi\n"})
    expect(outcome, ("jobs/train.yaml", 11, 10, "/dev/shm of 32Gi is not smaller than the worker's memory limit of 32Gi",
                     "raise resources.memory or lower shmSize"), severity=Severity.WARNING)
    assert errors(outcome.diagnostics) == []


def test_non_root_user_without_ssh_path_warns(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "rails: []\nrunAsUser: 1000\n"})
    expect(outcome, ("jobs/train.yaml", 10, 12, "mpi-operator mounts the ssh keys at /root/.ssh",
                     "set sshAuthMountPath"), severity=Severity.WARNING)


# --- GitOps ---------------------------------------------------------------------------------------------------------

# profiles/clusters/dgx-lab.yaml ends in a `gitops` block (Argo CD); CLUSTER above has none.
assert DGX_LAB.splitlines()[39:] == ["gitops:", "  tool: argocd", "  repoURL: https://git.example.com/platform/gpu-fleet.git"]
CPU_LAB = (PROFILES / "clusters" / "cpu-lab.yaml").read_text(encoding="utf-8")
assert CPU_LAB.splitlines()[18:21] == ["gitops:", "  tool: flux", "  repoURL: https://git.example.com/platform/gpu-fleet.git"]
# Lines 9 and 10 of the job below.
TTL = "runPolicy:\n  ttlSecondsAfterFinished: 600\n"
TTL_MESSAGE = ("runPolicy.ttlSecondsAfterFinished deletes the MPIJob 600 s after it finishes, and {tool}, which syncs "
               "cluster '{cluster}', re-creates it from git: the job runs again; remove ttlSecondsAfterFinished and "
               "delete the job profile once the job is done (render prunes its chart and {tool} deletes the MPIJob), "
               "or set `runPolicy.suspend: true` to keep it in git without running it; if running it again is "
               "intended, set `allowRerunAfterTtl: true`")


def test_ttl_under_argo_cd_is_refused_saying_why_and_what_to_do(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + TTL})
    # Line 10 `  ttlSecondsAfterFinished: 600`: the value starts at column 28.
    assert outcome.shown() == [f"{outcome.at('jobs/train.yaml', 10, 28)}: error: "
                               + TTL_MESSAGE.format(tool="Argo CD", cluster="dgx-lab")]


def test_ttl_under_flux_is_refused_too(diagnose):
    job = GPU_JOB.replace("cluster: dgx-lab", "cluster: cpu-lab").replace("pool: dgx", "pool: cpu")
    outcome = diagnose({"jobs/train.yaml": job + TTL})
    assert outcome.shown() == [f"{outcome.at('jobs/train.yaml', 10, 28)}: error: "
                               + TTL_MESSAGE.format(tool="Flux", cluster="cpu-lab")]


def test_ttl_under_gitops_with_the_opt_in_passes(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + TTL + "allowRerunAfterTtl: true\n"})
    assert outcome.diagnostics == [], outcome.shown()


def test_ttl_with_the_opt_in_set_to_false_is_still_refused(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + TTL + "allowRerunAfterTtl: false\n"})
    expect(outcome, ("jobs/train.yaml", 10, 28, "re-creates it from git: the job runs again", "allowRerunAfterTtl: true"))


def test_ttl_without_gitops_passes(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER, "jobs/train.yaml": GPU_JOB + TTL})
    assert outcome.diagnostics == [], outcome.shown()


def test_suspended_job_without_ttl_passes_under_gitops(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "runPolicy:\n  suspend: true\n"})
    assert outcome.diagnostics == [], outcome.shown()


def test_opt_in_without_ttl_warns_it_has_no_effect(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "allowRerunAfterTtl: true\n"})
    expect(outcome, ("jobs/train.yaml", 9, 21, "`allowRerunAfterTtl` has no effect: the job has no "
                     "runPolicy.ttlSecondsAfterFinished", "remove it"), severity=Severity.WARNING)


def test_opt_in_without_gitops_warns_it_has_no_effect(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER, "jobs/train.yaml": GPU_JOB + TTL + "allowRerunAfterTtl: true\n"})
    expect(outcome, ("jobs/train.yaml", 11, 21, "`allowRerunAfterTtl` has no effect: cluster 'dgx-lab' has no "
                     "`gitops` block", "remove it"), severity=Severity.WARNING)


def test_opt_in_must_be_a_boolean(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + TTL + "allowRerunAfterTtl: yes please\n"})
    # Only the schema error: a profile the schema rejects is not cross-checked, so the TTL rule stays quiet.
    expect(outcome, ("jobs/train.yaml", 11, 21, "`allowRerunAfterTtl` must be"))


def test_job_named_infra_would_take_the_infra_application(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("name: train", "name: infra")})
    expect(outcome, ("jobs/train.yaml", 3, 7, "job name 'infra' names its Application 'dgx-lab-infra', the name of the "
                     "infra chart's Application on cluster 'dgx-lab'", "rename the job"))


def test_job_named_like_the_infra_release_under_gitops(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB.replace("name: train", "name: dgx-lab-infra")})
    expect(outcome, ("jobs/train.yaml", 3, 7, "job name 'dgx-lab-infra' is the Helm release name of the infra chart "
                     "of cluster 'dgx-lab'", "rename the job"))


def test_job_named_infra_without_gitops_passes(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER, "jobs/train.yaml": GPU_JOB.replace("name: train", "name: infra")})
    assert outcome.diagnostics == [], outcome.shown()


def test_argo_cd_settings_under_flux_are_refused(diagnose):
    cluster = CPU_LAB + "  destination: https://gpu.example.com:6443\n  project: gpu-fleet\n"
    outcome = diagnose({"clusters/cpu-lab.yaml": cluster})
    expect(outcome,
           ("clusters/cpu-lab.yaml", 22, 3, "`gitops.destination` is for Argo CD only; Flux syncs the cluster it runs "
            "in", "remove it"),
           ("clusters/cpu-lab.yaml", 23, 3, "`gitops.project` is for Argo CD only; Flux has no projects", "remove it"))


def test_every_gitops_setting_under_argo_cd_passes(diagnose):
    cluster = DGX_LAB + ("  revision: release-2\n  path: deploy/charts\n  destination: https://gpu.example.com:6443\n"
                         "  project: gpu-fleet\n  namespace: gitops\n")
    assert diagnose({"clusters/dgx-lab.yaml": cluster}).diagnostics == []


def test_gitops_without_a_repository(diagnose):
    cluster = DGX_LAB.replace("  repoURL: https://git.example.com/platform/gpu-fleet.git\n", "")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    # Line 37 is `gitops:` (tests/unit/validate/test_validate_gitops.py has Flux's `sourceRef` instead).
    expect(outcome, ("clusters/dgx-lab.yaml", 40, 1, "`gitops` names no git repository", "add `repoURL:`"))


def test_unknown_gitops_tool_with_did_you_mean(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": DGX_LAB.replace("tool: argocd", "tool: argo-cd")})
    expect(outcome, ("clusters/dgx-lab.yaml", 41, 9, "`gitops.tool` is 'argo-cd', which is not allowed",
                     "did you mean 'argocd'?"))


@pytest.mark.parametrize(("key", "value"), [
    ("repoURL", "git@git.example.com:platform/gpu-fleet.git"),
    ("path", "../charts"),
    ("path", "/charts"),
    ("path", "charts/"),
    ("destination", "http://kubernetes.default.svc"),
])
def test_gitops_values_the_tools_would_not_take(diagnose, key, value):
    cluster = DGX_LAB + f"  {key}: {value}\n" if key != "repoURL" else DGX_LAB.replace(
        "https://git.example.com/platform/gpu-fleet.git", value)
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster})
    assert len(outcome.diagnostics) == 1, outcome.shown()
    assert f"`gitops.{key}`" in outcome.diagnostics[0].message, outcome.shown()


# --- Argo CD Application names across clusters ----------------------------------------------------------------------

# A second Argo CD cluster `dgx` beside the example's `dgx-lab` (both in Argo CD's default namespace `argocd`).
DGX = CPU_LAB.replace("name: cpu-lab", "name: dgx").replace("tool: flux", "tool: argocd")
assert DGX.count("name: dgx\n") == 1 and "tool: argocd" in DGX


def test_two_clusters_whose_job_applications_share_a_name(diagnose):
    # Cluster dgx's job `lab-pi` and cluster dgx-lab's job `pi` are both Application `dgx-lab-pi`.
    job = CPU_JOB.replace("name: train", "name: lab-pi").replace("cluster: dgx-lab", "cluster: dgx")
    outcome = diagnose({"clusters/dgx.yaml": DGX, "jobs/train.yaml": job.replace("namespace: ml-training\n", "")})
    expect(outcome, ("jobs/train.yaml", 3, 7, "job 'lab-pi' of cluster 'dgx' and job 'pi' of cluster 'dgx-lab' are "
                     "both Argo CD Application 'dgx-lab-pi' in namespace 'argocd'",
                     f"the other is at {outcome.root / 'jobs/pi.yaml'}:5:7; rename one"))


def test_a_job_application_named_like_another_clusters_infra(diagnose):
    job = CPU_JOB.replace("name: train", "name: lab-infra").replace("cluster: dgx-lab", "cluster: dgx")
    outcome = diagnose({"clusters/dgx.yaml": DGX, "jobs/train.yaml": job.replace("namespace: ml-training\n", "")})
    expect(outcome, ("jobs/train.yaml", 3, 7, "job 'lab-infra' of cluster 'dgx' and the infra chart of cluster "
                     "'dgx-lab' are both Argo CD Application 'dgx-lab-infra'"))


def test_application_names_in_different_argo_cd_namespaces_do_not_clash(diagnose):
    job = CPU_JOB.replace("name: train", "name: lab-pi").replace("cluster: dgx-lab", "cluster: dgx")
    cluster = DGX.replace("tool: argocd\n", "tool: argocd\n  namespace: argocd-dgx\n")
    outcome = diagnose({"clusters/dgx.yaml": cluster, "jobs/train.yaml": job.replace("namespace: ml-training\n", "")})
    assert outcome.diagnostics == [], outcome.shown()


def test_rdma_shared_rail_whose_nic_has_two_interface_names_is_refused(tmp_path):
    # One ipoib/macvlan NAD per rail names one `master` for every node; two pools that call the rail's NIC
    # differently cannot share it (rendering it used to fail on an assertion).
    files = {
        "v100.yaml": "apiVersion: mpigen/v1alpha1\nkind: Hardware\nname: v100\nextends: dgx-1\n"
                     "nics:\n  - {name: ib0, hca: mlx5_0, pfName: ib0}\n",
        "a100.yaml": "apiVersion: mpigen/v1alpha1\nkind: Hardware\nname: a100\nextends: dgx-a100\n"
                     "nics:\n  - {name: ib0, hca: mlx5_0, pfName: ibp12s0, vfDeviceId: \"101c\"}\n",
        "mixed.yaml": dedent("""\
            apiVersion: mpigen/v1alpha1
            kind: Cluster
            name: mixed
            kubernetesVersion: "1.31"
            namespaces: [train]
            network: {provider: rdma-shared}
            nodePools:
              - {name: v100, hardware: v100, nodes: 2}
              - {name: a100, hardware: a100, nodes: 2}
            rails:
              - {name: r0, nic: ib0, ipam: {range: 10.1.0.0/24}}
            """),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    shown = [d.format().replace(f"{tmp_path}/", "") for d in check_profiles([tmp_path]).diagnostics]
    assert shown == [
        "mixed.yaml:11:5: error: rail 'r0': provider 'rdma-shared' attaches it through one NetworkAttachmentDefinition "
        "over one node interface, but NIC 'ib0' is ib0 on pool 'v100', ibp12s0 on pool 'a100'; set `hostInterface` on "
        "the rail to a name every pool's nodes have (e.g. a udev-renamed interface), or give each pool its own rail"]
    with_host_interface = files["mixed.yaml"].replace("nic: ib0,", "nic: ib0, hostInterface: ib-rail0,")
    (tmp_path / "mixed.yaml").write_text(with_host_interface, encoding="utf-8")
    assert check_profiles([tmp_path]).diagnostics == []


# --- privilege: privileged needs a reason, a volume mounts one thing, podSecurity names known namespaces ---------


def test_privileged_true_is_refused_asking_for_a_reason(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "privileged: true\n"})
    expect(outcome, ("jobs/train.yaml", 9, 13, "`privileged` must be a mapping, not true",
                     'Write `privileged: {reason: "..."}`'))


def test_privileged_with_an_empty_or_short_reason_is_refused(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + "privileged: {reason: needed}\n"})
    expect(outcome, ("jobs/train.yaml", 9, 22, "`privileged.reason` is 6 characters; it must be at least 10"))


def test_a_volume_mounts_a_claim_or_a_host_path_not_both_not_neither(diagnose):
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + dedent("""\
        volumes:
          - {name: data, mountPath: /data}
          - {name: raid, mountPath: /raid, claim: raid, hostPath: /raid}
        """)})
    expect(outcome, ("jobs/train.yaml", 10, 5, "volume 'data' mounts nothing", "give one: `claim:`"),
           ("jobs/train.yaml", 11, 59, "volume 'raid' gives both `claim` and `hostPath`", "keep one"))


def test_pod_security_names_only_namespaces_of_the_cluster(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": DGX_LAB + "podSecurity:\n  hcp: baseline\n  ml-training: privileged\n"})
    line = len(DGX_LAB.splitlines()) + 2
    expect(outcome, ("clusters/dgx-lab.yaml", line, 3, "`podSecurity` names namespace 'hcp', which is not in "
                     "`namespaces`", "did you mean 'hpc'?"))


def test_pod_security_levels_are_the_three_of_kubernetes(diagnose):
    outcome = diagnose({"clusters/dgx-lab.yaml": DGX_LAB + "podSecurity:\n  hpc: privilegd\n"})
    expect(outcome, ("clusters/dgx-lab.yaml", len(DGX_LAB.splitlines()) + 2, 8,
                     "`podSecurity.hpc` is 'privilegd', which is not allowed", "did you mean 'privileged'?"))


@pytest.mark.parametrize(("added", "field", "maximum"), [
    ("slotsPerWorker: 2147483648", "slotsPerWorker", 2147483647),  # MPIJob spec.slotsPerWorker: int32
    ("runAsUser: 2147483648", "runAsUser", 2147483647),  # Kubernetes refuses UIDs above 2^31-1
    ("runPolicy: {backoffLimit: 2147483648}", "runPolicy.backoffLimit", 2147483647),  # int32
    ("runPolicy: {ttlSecondsAfterFinished: 2147483648}", "runPolicy.ttlSecondsAfterFinished", 2147483647),  # int32
    ("runPolicy: {activeDeadlineSeconds: 9223372036854775808}", "runPolicy.activeDeadlineSeconds",
     9223372036854775807),  # int64
])
def test_a_number_kubernetes_cannot_hold_is_refused(diagnose, added, field, maximum):
    # The API server stores a custom resource whose int32 field overflows (it does not check the format), and then
    # mpi-operator cannot decode the MPIJob; a pod's UID above 2^31-1 is refused only when the operator creates it.
    outcome = diagnose({"jobs/train.yaml": GPU_JOB + added + "\n"})
    value = added.rsplit(" ", 1)[1].rstrip("}")
    column = added.index(value) + 1
    expect(outcome, ("jobs/train.yaml", 9, column, f"`{field}` is {value}; it must be <= {maximum}"))


def test_a_name_ending_in_a_newline_is_refused(diagnose):
    # JSON Schema's `$` is the end of the string; Python's also matches before a final newline, so these passed,
    # and a cluster named "dgx-lab\n" got a charts folder with a newline in its name.
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("name: dgx-lab", 'name: "dgx-lab\\n"'),
                        "jobs/train.yaml": GPU_JOB.replace("cluster: dgx-lab", "cluster: cpu-lab").replace(
                            "pool: dgx", "pool: cpu") + 'env: {"NCCL_DEBUG\\n": INFO}\n'})
    unknown = ("no cluster profile is named 'dgx-lab'",
               "expected one of 'cpu-lab', 'dgx-pod', 'gb200-rack', 'h100-dra', 'kai-lab', 'kueue-lab', 'netapp-lab', "
               "'roce-lab', 'volcano-lab'")
    expect(outcome,
           ("clusters/dgx-lab.yaml", 3, 7, "`name` 'dgx-lab\\x0a' is not valid: character 8 is U+000A, a control "
            "character"),
           ("jobs/pi.yaml", 6, 10, *unknown),
           ("jobs/resnet50-dgx.yaml", 7, 10, *unknown),
           ("jobs/resnet50-trainjob.yaml", 10, 10, *unknown),
           ("jobs/tensorflow-benchmarks.yaml", 7, 10, *unknown),
           ("jobs/train.yaml", 9, 7, "key 'NCCL_DEBUG\\x0a' in `env` is not valid: character 11 is U+000A"))


@pytest.mark.parametrize("namespace", ["kube-system", "default", "kube-public"])
def test_kubernetes_own_namespaces_are_not_job_namespaces(diagnose, namespace):
    # The infra chart creates and owns every namespace of the cluster, labelled with its jobs' Pod Security level.
    # Helm refuses to take over a namespace that exists ("exists and cannot be imported into the current release"),
    # and `enforce: baseline` on kube-system would make admission refuse its privileged pods (CNI, kube-proxy).
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("namespaces: [ml-training, hpc]",
                                                                 f"namespaces: [ml-training, hpc, {namespace}]")})
    expect(outcome, ("clusters/dgx-lab.yaml", 5, 32, f"namespace '{namespace}' is Kubernetes' own",
                     "run the jobs in a namespace of their own"))


# The namespaces the controllers around mpigen's jobs run in by default, written out from their upstream installs
# (generator/vocabulary/reserved.py lists them with who runs there).
CONTROLLER_NAMESPACES = {
    "argocd": "Argo CD", "flux-system": "Flux", "kueue-system": "Kueue", "volcano-system": "Volcano",
    "volcano-monitoring": "Volcano's monitoring", "scheduler-plugins": "scheduler-plugins (coscheduling)",
    "kai-scheduler": "the KAI scheduler", "kai-resource-reservation": "the KAI scheduler's GPU-sharing reservations",
    "mpi-operator": "mpi-operator", "kubeflow": "Kubeflow (mpi-operator and Trainer as Kubeflow installs them)",
    "kubeflow-system": "Kubeflow Trainer", "sriov-network-operator": "the SR-IOV network operator",
    "openshift-sriov-network-operator": "the SR-IOV network operator (on OpenShift)",
    "nvidia-network-operator": "NVIDIA's network operator",
    "network-operator": "NVIDIA's network operator (as its older examples install it)",
    "gpu-operator": "NVIDIA's GPU operator", "nvidia-gpu-operator": "NVIDIA's GPU operator (on OpenShift)",
    "nvidia-device-plugin": "NVIDIA's device plugin", "gpu-feature-discovery": "NVIDIA's GPU feature discovery",
    "nvidia-dra-driver-gpu": "NVIDIA's DRA driver",
    "node-feature-discovery": "node feature discovery (which the GPU and network operators deploy)",
    "tigera-operator": "Calico's operator (Tigera)", "calico-system": "Calico (as its operator installs it)",
    "cert-manager": "cert-manager (its issuers' CA keys and the webhooks' certificates)",
}
CONTROLLERS_WHY = ("a job there could read the controller's Secrets by `secretKeyRef`, and the infra chart would create "
                   "it and set its Pod Security label for the jobs, which its own pods may not pass")


@pytest.mark.parametrize("namespace", sorted(CONTROLLER_NAMESPACES))
def test_a_controllers_namespace_is_no_job_namespace_even_where_the_profile_does_not_name_it(diagnose, namespace):
    """The second red team's case: `argocd`, `flux-system`, `kueue-system`, `volcano-system`, `mpi-operator` and
    `sriov-network-operator` were accepted, and a job in `argocd` read `argocd-secret`. CLUSTER names no GitOps tool,
    scheduler or operator: a cluster runs controllers no profile mentions, and a job namespace of another name costs
    nothing."""
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace("namespaces: [ml-training, hpc]",
                                                                 f"namespaces: [ml-training, hpc, {namespace}]")})
    expect(outcome, ("clusters/dgx-lab.yaml", 5, 32, f"namespace '{namespace}' belongs to "
                     f"{CONTROLLER_NAMESPACES[namespace]}: {CONTROLLERS_WHY}", "run the jobs in a namespace of their own"))


@pytest.mark.parametrize(("settings", "namespace", "owner"), [
    ("gitops: {tool: flux, repoURL: 'https://git.example.com/f.git', namespace: deploy}\n", "deploy",
     "this cluster's Flux (its `gitops.namespace`, where its HelmReleases live)"),
    ("gitops: {tool: argocd, repoURL: 'https://git.example.com/f.git'}\n", "argocd",
     "this cluster's Argo CD (its `gitops.namespace`, where its Applications live)"),
    ("network: {provider: sriov-network-operator, operatorNamespace: sriov}\n", "sriov",
     "this cluster's SR-IOV network operator (`network.operatorNamespace`)"),
    ("network: {provider: sriov-device-plugin, devicePluginNamespace: plugins}\n", "plugins",
     "this cluster's device plugin (`network.devicePluginNamespace`)"),
    ("network: {provider: rdma-shared, devicePluginNamespace: plugins}\n", "plugins",
     "this cluster's device plugin (`network.devicePluginNamespace`)"),
])
def test_the_namespaces_the_profile_says_its_components_run_in_are_no_job_namespaces(diagnose, settings, namespace,
                                                                                    owner):
    cluster = CLUSTER.replace("namespaces: [ml-training, hpc]", f"namespaces: [ml-training, hpc, {namespace}]")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster + settings})
    assert [(d.location.line, d.message) for d in outcome.diagnostics if d.location.path.endswith("dgx-lab.yaml")] \
        == [(5, f"namespace '{namespace}' belongs to {owner}: {CONTROLLERS_WHY}")], outcome.shown()


def test_a_controllers_namespace_listed_as_existing_is_refused_for_its_secrets_and_label(diagnose):
    """The infra chart leaves an existing namespace alone, but its NOTES would have the admin loosen its Pod
    Security label for the jobs; and its Secrets are there either way."""
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace(
        "namespaces: [ml-training, hpc]", "namespaces: [ml-training, hpc, kueue-system, argocd-jobs]\n"
        "existingNamespaces: [kueue-system]")})
    expect(outcome, ("clusters/dgx-lab.yaml", 5, 32, "namespace 'kueue-system' belongs to Kueue: a job there could "
                     "read the controller's Secrets by `secretKeyRef`, and the infra chart's NOTES would have you loosen "
                     "its Pod Security label for the jobs, which its own pods may not pass",
                     "run the jobs in a namespace of their own"))


def test_a_setting_the_provider_does_not_read_reserves_no_namespace(diagnose):
    """`operatorNamespace` under the device plugin names nobody's namespace: a warning that it is ignored, no more."""
    cluster = CLUSTER.replace("namespaces: [ml-training, hpc]", "namespaces: [ml-training, hpc, sriov]")
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster + "network: {provider: sriov-device-plugin, "
                        "operatorNamespace: sriov}\n"})
    assert [(d.severity, d.message) for d in outcome.diagnostics] == [
        (Severity.WARNING, "`network.operatorNamespace` has no effect under provider 'sriov-device-plugin'")], \
        outcome.shown()


def test_an_mca_parameter_mpigen_sets_is_refused_in_mpirun_args(diagnose):
    # OpenMPI takes a command line `-mca` over the environment's OMPI_MCA_ variable without a word, and aborts on a
    # parameter listed twice on the command line ("MCA parameters can only be listed once"). The NetApp seed's own
    # mpirun line carries `-mca pml ob1` and `-mca plm_rsh_args "-p 22122"`: ported as they are onto its
    # host-network cluster (where mpigen gives mpirun `--mca plm_rsh_args` itself), both are refused.
    seed = (PROFILES / "jobs/netapp-resnet50.yaml").read_text(encoding="utf-8")
    text = seed + 'mpirunArgs: [-mca, pml, ob1, -mca, plm_rsh_args, "-p 22122", -mca, orte_base_help_aggregate, "0"]\n'
    outcome = diagnose({"jobs/netapp-resnet50.yaml": text})
    line = len(seed.splitlines()) + 1
    expect(outcome,
           ("jobs/netapp-resnet50.yaml", line, 20, "`-mca pml` in mpirunArgs sets what mpigen already sets: "
            "OMPI_MCA_pml", "set `OMPI_MCA_pml` in the job's `env` instead"),
           ("jobs/netapp-resnet50.yaml", line, 36, "`-mca plm_rsh_args` in mpirunArgs sets what mpigen already "
            "sets: `--mca plm_rsh_args` on mpirun's command line", "the cluster's `network.sshPort`"))


def test_a_run_ref_is_one_of_the_names_mpigen_fills_in(diagnose):
    # `runRef` names what only exists once mpigen has hashed the run; anything else, or a value that is both a
    # name of the run and a Secret's key, is refused where it is written.
    text = (PROFILES / "jobs/pi.yaml").read_text(encoding="utf-8")
    line = len(text.splitlines()) + 2
    outcome = diagnose({"jobs/pi.yaml": text + "env:\n  A: {runRef: firstworker}\n"
                        "  C: {runRef: name, secretKeyRef: {name: a, key: b}}\n"})
    expect(outcome, ("jobs/pi.yaml", line, 15, "`env.A.runRef` is 'firstworker', which is not allowed",
                     "did you mean 'firstWorker'?"),
           ("jobs/pi.yaml", line + 1, 6, "has too many properties", "`{runRef: firstWorker | name}`"))


def test_existing_namespaces_are_some_of_the_clusters_and_never_kube_system(diagnose):
    # A namespace created by hand (kube-openmpi's README has users create theirs) is named as existing, so the infra
    # chart does not try to own it; `default` may be named so, kube-system never (its system pods).
    outcome = diagnose({"clusters/dgx-lab.yaml": CLUSTER.replace(
        "namespaces: [ml-training, hpc]", "namespaces: [ml-training, hpc, default, kube-system]\n"
        "existingNamespaces: [hpc, default, kube-system, ml-trainng]")})
    expect(outcome, ("clusters/dgx-lab.yaml", 5, 41, "namespace 'kube-system' is Kubernetes' own and no place for "
                     "jobs: it holds the cluster's system pods", "run the jobs in a namespace of their own"),
           ("clusters/dgx-lab.yaml", 6, 49, "`existingNamespaces` names 'ml-trainng', which is not in `namespaces`",
            "did you mean 'ml-training'?"))


def test_an_existing_kube_namespace_of_the_sites_own_holds_jobs(diagnose):
    # Kubernetes' system pods live in kube-system (and kube-public, kube-node-lease); its documentation (Namespaces)
    # only asks that no namespace be *created* with the prefix `kube-`, which the API server does not refuse. A site's
    # `kube-openmpi` that exists already is the site's own: jobs may run there.
    cluster = DGX_LAB.replace("  - hpc\n", "  - hpc\n  - kube-openmpi\nexistingNamespaces: [kube-openmpi]\n", 1)
    job = PI.replace("namespace: hpc\n", "namespace: kube-openmpi\n", 1)
    assert cluster != DGX_LAB and job != PI
    outcome = diagnose({"clusters/dgx-lab.yaml": cluster, "jobs/pi.yaml": job})
    assert outcome.diagnostics == [], outcome.shown()


def test_a_kube_namespace_the_infra_chart_would_create_is_refused_for_the_prefix(diagnose):
    cluster = DGX_LAB.replace("  - hpc\n", "  - hpc\n  - kube-openmpi\n", 1)
    expect(diagnose({"clusters/dgx-lab.yaml": cluster}),
           ("clusters/dgx-lab.yaml", 10, 5, "namespace 'kube-openmpi' would be created by the infra chart, but "
            "Kubernetes keeps the prefix `kube-` for its own system namespaces", "or list it in `existingNamespaces`"))


def test_a_job_on_the_nodes_network_only_repeats_the_clusters_ssh_port(diagnose):
    # Under host networking sshd's port is the cluster's `network.sshPort` (netapp-lab: 22122), the one port left
    # free on every node; the job's `sshPort` says the same or nothing.
    job = (PROFILES / "jobs" / "netapp-resnet50.yaml").read_text(encoding="utf-8")
    assert len(job.splitlines()) == 74
    assert diagnose({"jobs/netapp-resnet50.yaml": job + "sshPort: 22122\n"}).diagnostics == []
    expect(diagnose({"jobs/netapp-resnet50.yaml": job + "sshPort: 2222\n"}),
           ("jobs/netapp-resnet50.yaml", 75, 10, "cluster 'netapp-lab' uses host networking, where the workers' sshd "
            "listens on its `network.sshPort` (22122)", "remove sshPort, or set it to 22122"))


def test_plm_rsh_args_in_mpirun_args_beside_the_jobs_ssh_port_is_refused(diagnose):
    # With `sshPort` mpigen gives OpenMPI 4's mpirun `--mca plm_rsh_args "-p <port> ..."` itself: a second one in
    # mpirunArgs would abort mpirun ("MCA parameters can only be listed once").
    text = CPU_JOB + "sshPort: 2222\nmpirunArgs: [--mca, plm_rsh_args, -p 2222]\n"
    expect(diagnose({"jobs/train.yaml": text}),
           ("jobs/train.yaml", 10, 21, "`--mca plm_rsh_args` in mpirunArgs sets what mpigen already sets: `--mca "
            "plm_rsh_args` on mpirun's command line (the job's sshPort", "set the ssh port with `sshPort`"))



def test_a_launcher_command_of_the_jobs_own_is_told_to_give_mpirun_the_ssh_port(diagnose):
    # mpi-operator sets OMPI_MCA_plm_rsh_args and I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS on the launcher after the
    # container's own (pkg/controller/mpi_job_controller.go, newLauncherPodTemplate), so only the command line reaches
    # OpenMPI 4's and Intel MPI's ssh; OpenMPI 5 reads PRTE_MCA_plm_ssh_args, which it leaves alone.
    def job(name: str, implementation: str) -> str:
        return CPU_JOB.replace("name: train", f"name: {name}").replace("program: [python, train.py]\n", "") + \
            implementation + "sshPort: 2222\nlauncherCommand: [mpirun, /bin/true]\n"
    given = job("given", "mpiImplementation: Intel\n").replace(
        "[mpirun,", "[env, 'I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS=-p 2222', mpirun,")  # as mpigen's own line, imported
    outcome = diagnose({"jobs/ompi4.yaml": job("ompi4", ""), "jobs/intel.yaml": job("intel", "mpiImplementation: Intel\n"),
                        "jobs/ompi5.yaml": job("ompi5", "openMPIVersion: 5\n"), "jobs/given.yaml": given})
    expect(outcome, ("jobs/intel.yaml", 10, 18, "sshd listens on port 2222, which mpigen gives only to the mpirun it "
                     "writes", '`env I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS="-p 2222 -o ConnectionAttempts=10"` before'),
           ("jobs/ompi4.yaml", 9, 18, "this launcherCommand's ssh connects to port 22 unless the image's ssh_config",
            '`--mca plm_rsh_args "-p 2222 -o ConnectionAttempts=10"`'), severity=Severity.WARNING)
