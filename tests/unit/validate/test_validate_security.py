"""generator/validate/security.py: host folders that give the node away, and reasons that say nothing."""

from __future__ import annotations

import pytest
from conftest import TRAIN_JOB

from mpigen.commands.pipeline import compile_profiles
from mpigen.support.diagnostics import Severity
from mpigen.validate.security import host_path_segments, node_folder, reason_problem

JOB = TRAIN_JOB + "workers: 2\n"  # additions start at line 9
REASON_HINT = "mount a claim instead, or write `hostPath: {{path: {path}, reason: \"<why the job needs it>\"}}`"


def errors_of(profiles_copy, job: str) -> list[str]:
    root = profiles_copy({"jobs/train.yaml": job})
    result = compile_profiles([root])
    return [d.format().replace(f"{root}/", "") for d in result.diagnostics if d.severity is Severity.ERROR]


@pytest.mark.parametrize("path, folder", [
    ("/", "/etc"), ("/etc", "/etc"), ("/etc/kubernetes/pki", "/etc"), ("/var", "/var/run"), ("/var/run", "/var/run"),
    ("/var/run/docker.sock", "/var/run"), ("/run/containerd/containerd.sock", "/run"),
    ("/var/run/crio/crio.sock", "/var/run"), ("/proc", "/proc"), ("/sys/fs/cgroup", "/sys"), ("/dev", "/dev"),
    ("/boot", "/boot"), ("/root/.ssh", "/root"), ("/var/lib", "/var/lib/kubelet"),
    ("/var/lib/kubelet/pods", "/var/lib/kubelet"), ("/var/lib/containerd", "/var/lib/containerd"),
    ("/var/lib/docker", "/var/lib/docker"), ("/var/log", "/var/log"), ("/usr/bin", "/usr"),
    ("/opt/cni/bin", "/opt/cni"), ("/opt", "/opt/cni"),
    # tricks that must not dodge the list
    ("//etc", "/etc"), ("/etc/", "/etc"), ("/./etc", "/etc"), ("///", "/etc"), ("/var/./run/", "/var/run"),
])
def test_folders_that_give_the_node_away(path, folder):
    assert node_folder(path) == folder


@pytest.mark.parametrize("path", ["/raid", "/raid/datasets", "/data", "/mnt/nfs", "/scratch", "/var/lib/data",
                                  "/home/alice/datasets", "/opt/models", "/etcetera", "/devices", "/tmp"])
def test_folders_that_do_not(path):
    assert node_folder(path) is None


@pytest.mark.parametrize("path", ["/data/../etc", "/..", "/etc/..", "/a/b/../../etc/"])
def test_a_dot_dot_segment_is_no_path(path):
    assert host_path_segments(path) is None and node_folder(path) is None


@pytest.mark.parametrize("text", [" .", "          .", "xxxxxxxxxxxx", "a b c d e f g h i j", ". . . . . . . . . .",
                                  "need-it!!!", "1234567890 123"])
def test_a_reason_that_says_nothing(text):
    assert reason_problem(text) is not None


@pytest.mark.parametrize("text", ["the nvidia-fs driver needs /dev/nvidia-fs*", "builds images with docker",
                                  "Légacy tool überwacht"])
def test_a_reason_in_words(text):
    assert reason_problem(text) is None


def test_host_root_without_a_reason_is_refused(profiles_copy):
    job = JOB + "volumes:\n  - {name: host, hostPath: /, mountPath: /host}\n"
    assert errors_of(profiles_copy, job) == [
        "jobs/train.yaml:10:28: error: volume 'host' mounts the node's /, which holds /etc: a pod with it can take "
        "over the node, like a privileged one, and it needs a reason; " + REASON_HINT.format(path="/")
        + "; the reason goes into the chart as the annotation `mpigen/host-path-reason`, for its reviewers"]


def test_read_only_does_not_excuse_a_runtime_socket(profiles_copy):
    job = JOB + "volumes:\n  - {name: sock, hostPath: /run/containerd/containerd.sock, mountPath: /s, readOnly: true}\n"
    assert errors_of(profiles_copy, job) == [
        "jobs/train.yaml:10:28: error: volume 'sock' mounts the node's /run/containerd/containerd.sock, which lies in "
        "/run: a pod with it can take over the node, like a privileged one, and it needs a reason; "
        + REASON_HINT.format(path="/run/containerd/containerd.sock")
        + "; the reason goes into the chart as the annotation `mpigen/host-path-reason`, for its reviewers"]


def test_a_host_path_with_a_reason_passes(profiles_copy):
    job = JOB + ("volumes:\n  - name: sock\n    hostPath: {path: /var/run/docker.sock, reason: the job builds images "
                 "with docker}\n    mountPath: /var/run/docker.sock\n")
    assert errors_of(profiles_copy, job) == []


def test_an_ordinary_host_path_needs_no_reason(profiles_copy):
    job = JOB + "volumes:\n  - {name: raid, hostPath: /raid/datasets, mountPath: /data}\n"
    assert errors_of(profiles_copy, job) == []


def test_dot_dot_is_refused_even_with_a_reason(profiles_copy):
    job = JOB + ("volumes:\n  - name: x\n    hostPath: {path: /data/../etc, reason: the job reads the node's "
                 "config}\n    mountPath: /x\n")
    assert errors_of(profiles_copy, job) == [
        "jobs/train.yaml:11:22: error: `volumes[0].hostPath.path` '/data/../etc' has a `..` segment, which Kubernetes "
        "refuses; write the folder's own path, without `..`"]


def test_a_host_path_reason_of_signs_is_refused(profiles_copy):
    job = JOB + "volumes:\n  - name: x\n    hostPath: {path: /etc, reason: '- - - - - - - - - -'}\n    mountPath: /x\n"
    assert errors_of(profiles_copy, job) == [
        "jobs/train.yaml:11:36: error: `volumes[0].hostPath.reason` does not say why: it has 0 word(s) of letters, "
        "fewer than 2; write in words why the job needs the node's /etc, for the chart's reviewers"]


def test_a_privileged_reason_of_spaces_and_a_dot_is_refused(profiles_copy):
    job = JOB + "privileged: {reason: '         .'}\n"
    assert errors_of(profiles_copy, job) == [
        "jobs/train.yaml:9:22: error: `privileged.reason` does not say why: it has 1 character(s) that are not "
        "spaces, fewer than 10; write in words why the workers must be privileged, for the chart's reviewers"]


def test_a_host_path_mapping_needs_its_reason(profiles_copy):
    job = JOB + "volumes:\n  - {name: x, hostPath: {path: /etc}, mountPath: /x}\n"
    assert errors_of(profiles_copy, job) == [
        "jobs/train.yaml:10:25: error: missing required key 'reason' in `volumes[0].hostPath`; add `reason:` (Why the "
        "job needs this folder of the node: a sentence of at least two words and 10 characters, for the reviewers "
        "of the chart.)"]
