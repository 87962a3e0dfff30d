"""generator/vocabulary/podsecurity.py: the Pod Security Standards, control by control.

Expected levels and controls are the Kubernetes documentation's (kubernetes.io/docs/concepts/security/
pod-security-standards/), written out here by hand, not taken from the code under test.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpigen.vocabulary.podsecurity import Level, PodSecurity, combine, evaluate

# A pod that meets `restricted`: non-root, no privilege escalation, RuntimeDefault seccomp, every capability dropped.
RESTRICTED_CONTAINER = {
    "name": "main", "image": "busybox",
    "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True,
                        "seccompProfile": {"type": "RuntimeDefault"}, "capabilities": {"drop": ["ALL"]}},
}
RESTRICTED_POD = {"containers": [RESTRICTED_CONTAINER],
                  "volumes": [{"name": "c", "configMap": {"name": "x"}}, {"name": "s", "emptyDir": {"medium": "Memory"}},
                              {"name": "p", "persistentVolumeClaim": {"claimName": "data"}}]}


def with_changes(change: dict[str, Any], container: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = copy.deepcopy(RESTRICTED_POD)
    spec.update(copy.deepcopy(change))
    if container is not None:
        spec["containers"][0]["securityContext"].update(container)
    return spec


def test_a_pod_meeting_every_restricted_control_is_restricted():
    assert evaluate(RESTRICTED_POD) == PodSecurity(Level.RESTRICTED)


def test_the_same_controls_set_on_the_pod_rather_than_the_container_count():
    container = {"name": "main", "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}
    spec = {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "Localhost", "localhostProfile": "x"}},
            "containers": [container]}
    assert evaluate(spec).level is Level.RESTRICTED


@pytest.mark.parametrize(("change", "container", "reason"), [
    ({"hostNetwork": True}, None, "hostNetwork: true"),
    ({"hostPID": True}, None, "hostPID: true"),
    ({"hostIPC": True}, None, "hostIPC: true"),
    ({"volumes": [{"name": "raid", "hostPath": {"path": "/raid", "type": "Directory"}}]}, None,
     "hostPath volume raid (/raid)"),
    ({}, {"privileged": True}, "container main is privileged"),
    ({}, {"capabilities": {"add": ["IPC_LOCK"], "drop": ["ALL"]}}, "container main adds capability IPC_LOCK"),
    ({}, {"capabilities": {"add": ["SYS_ADMIN", "NET_ADMIN"]}}, "container main adds capability NET_ADMIN, SYS_ADMIN"),
    ({}, {"seccompProfile": {"type": "Unconfined"}}, "container main runs without seccomp (Unconfined)"),
    ({}, {"procMount": "Unmasked"}, "container main sets procMount Unmasked"),
    ({}, {"seLinuxOptions": {"type": "spc_t"}}, "container main sets SELinux options"),
    ({"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]}}, None, "sysctl kernel.msgmax"),
])
def test_each_baseline_control_broken_needs_privileged(change, container, reason):
    assert evaluate(with_changes(change, container)) == PodSecurity(Level.PRIVILEGED, (reason,))


def test_a_host_port_needs_privileged():
    spec = copy.deepcopy(RESTRICTED_POD)
    spec["containers"][0]["ports"] = [{"containerPort": 22, "hostPort": 2222}]
    assert evaluate(spec) == PodSecurity(Level.PRIVILEGED, ("container main uses hostPort 2222",))


@pytest.mark.parametrize("capability", ["CHOWN", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL"])
def test_baseline_allows_the_default_capabilities_but_restricted_only_net_bind_service(capability):
    result = evaluate(with_changes({}, {"capabilities": {"drop": ["ALL"], "add": [capability]}}))
    expected = Level.RESTRICTED if capability == "NET_BIND_SERVICE" else Level.BASELINE
    assert result.level is expected


@pytest.mark.parametrize(("container", "missing"), [
    ({"allowPrivilegeEscalation": True}, "allowPrivilegeEscalation: false"),
    ({"runAsNonRoot": False}, "runAsNonRoot: true"),
    ({"runAsUser": 0}, "a user other than 0"),
    ({"seccompProfile": None}, "seccompProfile RuntimeDefault"),
    ({"capabilities": {}}, "capabilities drop ALL"),
])
def test_each_restricted_control_broken_needs_baseline(container, missing):
    spec = with_changes({}, container)
    if container.get("seccompProfile", 1) is None:
        del spec["containers"][0]["securityContext"]["seccompProfile"]
    assert evaluate(spec) == PodSecurity(Level.BASELINE, (f"container main lacks {missing}",))


def test_a_host_path_is_not_reported_twice_and_other_volume_kinds_need_baseline():
    nfs = with_changes({"volumes": [{"name": "shared", "nfs": {"server": "n", "path": "/x"}}]})
    assert evaluate(nfs) == PodSecurity(Level.BASELINE, ("volume shared is nfs",))


def test_an_empty_pod_spec_is_judged_by_its_defaults():
    """No securityContext at all: baseline (nothing forbidden asked for, nothing restricted set)."""
    result = evaluate({"containers": [{"name": "c", "image": "x"}]})
    assert result == PodSecurity(Level.BASELINE, ("container c lacks allowPrivilegeEscalation: false, runAsNonRoot: "
                                                  "true, seccompProfile RuntimeDefault, capabilities drop ALL",))


def test_init_containers_count_too():
    spec = copy.deepcopy(RESTRICTED_POD)
    spec["initContainers"] = [{"name": "setup", "securityContext": {"privileged": True}}]
    assert evaluate(spec) == PodSecurity(Level.PRIVILEGED, ("container setup is privileged",))


@pytest.mark.parametrize("garbage", [None, [], "x", {"containers": "x"}, {"containers": [None, 3]},
                                     {"volumes": [None, "x"], "securityContext": []}])
def test_malformed_specs_are_judged_not_raised(garbage):
    assert isinstance(evaluate(garbage if isinstance(garbage, dict) else {"spec": garbage}), PodSecurity)


def test_combine_keeps_the_highest_level_and_the_reasons_of_every_pod_at_it():
    launcher = PodSecurity(Level.BASELINE, ("container launcher lacks x",))
    worker = PodSecurity(Level.PRIVILEGED, ("container worker adds capability IPC_LOCK",))
    other = PodSecurity(Level.PRIVILEGED, ("hostNetwork: true", "container worker adds capability IPC_LOCK"))
    assert combine([launcher, worker, other]) == PodSecurity(
        Level.PRIVILEGED, ("container worker adds capability IPC_LOCK", "hostNetwork: true"))
    assert combine([]) == PodSecurity(Level.RESTRICTED)
