"""Pod Security Standards: the least level (restricted, baseline, privileged) a pod spec passes.

One evaluator for two readers: `build` labels each job namespace with the level its jobs need
(`pod-security.kubernetes.io/enforce`), and `mpigen check` reports the level of every workload it
renders and refuses a namespace label that the API server would use to reject the workload's pods.

The rules are the Kubernetes Pod Security Standards, policy version `latest` (checked against the
controls of Kubernetes 1.25 to 1.35): https://kubernetes.io/docs/concepts/security/pod-security-standards/
Only fields a pod spec can carry are judged; a field that is absent counts as its default.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Level(IntEnum):
    """Ordered: a pod that passes a level passes every level above it."""

    RESTRICTED = 0
    BASELINE = 1
    PRIVILEGED = 2

    @property
    def label(self) -> str:
        return self.name.lower()


ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
# mpigen's note on a namespace: which job needs its level, and for what.
POD_SECURITY_REASON = "mpigen/pod-security-reason"

# Baseline: capabilities beyond the container runtime's defaults may not be added, except these.
BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
BASELINE_SYSCTLS = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                              "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
                              "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                              "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"})
BASELINE_SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
# Restricted: only these volume sources.
RESTRICTED_VOLUMES = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                                "projected", "secret"})
VOLUME_META_KEYS = frozenset({"name"})


@dataclass(frozen=True)
class PodSecurity:
    """The level a pod needs, and why it needs no lower one (empty for restricted)."""

    level: Level
    reasons: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.level.label} ({'; '.join(self.reasons)})" if self.reasons else self.level.label


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _containers(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(_list(spec.get(field))):
            container = _dict(container)
            yield str(container.get("name") or f"{field}[{index}]"), container


def _baseline_violations(spec: dict[str, Any]) -> list[str]:
    found: list[str] = []
    pod_context = _dict(spec.get("securityContext"))
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field) is True:
            found.append(f"{field}: true")
    if _dict(pod_context.get("windowsOptions")).get("hostProcess") is True:
        found.append("a Windows HostProcess pod")
    for volume in _list(spec.get("volumes")):
        volume = _dict(volume)
        if "hostPath" in volume:
            found.append(f"hostPath volume {volume.get('name', '?')} ({_dict(volume['hostPath']).get('path', '?')})")
    for sysctl in _list(pod_context.get("sysctls")):
        name = _dict(sysctl).get("name")
        if name not in BASELINE_SYSCTLS:
            found.append(f"sysctl {name}")
    found += _baseline_context_violations("the pod", pod_context)
    for name, container in _containers(spec):
        context = _dict(container.get("securityContext"))
        if context.get("privileged") is True:
            found.append(f"container {name} is privileged")
        added = [str(c) for c in _list(_dict(context.get("capabilities")).get("add"))]
        extra = sorted({c.removeprefix("CAP_") for c in added} - BASELINE_CAPABILITIES)
        if extra:
            found.append(f"container {name} adds capability {', '.join(extra)}")
        ports = [p for p in _list(container.get("ports")) if _dict(p).get("hostPort")]
        if ports:
            found.append(f"container {name} uses hostPort {', '.join(str(_dict(p)['hostPort']) for p in ports)}")
        if context.get("procMount") not in (None, "Default"):
            found.append(f"container {name} sets procMount {context['procMount']}")
        if _dict(context.get("windowsOptions")).get("hostProcess") is True:
            found.append(f"container {name} is a Windows HostProcess")
        found += _baseline_context_violations(f"container {name}", context)
    return found


def _baseline_context_violations(who: str, context: dict[str, Any]) -> list[str]:
    found: list[str] = []
    selinux = _dict(context.get("seLinuxOptions"))
    if selinux.get("type", "") not in BASELINE_SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        found.append(f"{who} sets SELinux options")
    if _dict(context.get("seccompProfile")).get("type") == "Unconfined":
        found.append(f"{who} runs without seccomp (Unconfined)")
    if _dict(context.get("appArmorProfile")).get("type") == "Unconfined":
        found.append(f"{who} runs without AppArmor (Unconfined)")
    return found


def _restricted_violations(spec: dict[str, Any]) -> list[str]:
    found: list[str] = []
    pod_context = _dict(spec.get("securityContext"))
    for volume in _list(spec.get("volumes")):
        volume = _dict(volume)
        sources = sorted(set(volume) - VOLUME_META_KEYS - RESTRICTED_VOLUMES)
        if sources:
            found.append(f"volume {volume.get('name', '?')} is {sources[0]}")
    if pod_context.get("runAsUser") == 0:
        found.append("the pod runs as user 0")
    pod_seccomp = _dict(pod_context.get("seccompProfile")).get("type")
    for name, container in _containers(spec):
        context = _dict(container.get("securityContext"))
        missing: list[str] = []
        if context.get("allowPrivilegeEscalation") is not False:
            missing.append("allowPrivilegeEscalation: false")
        if context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is not True:
            missing.append("runAsNonRoot: true")
        if context.get("runAsUser", pod_context.get("runAsUser")) == 0:
            missing.append("a user other than 0")
        if _dict(context.get("seccompProfile")).get("type", pod_seccomp) not in ("RuntimeDefault", "Localhost"):
            missing.append("seccompProfile RuntimeDefault")
        capabilities = _dict(context.get("capabilities"))
        if "ALL" not in [str(c) for c in _list(capabilities.get("drop"))]:
            missing.append("capabilities drop ALL")
        added = sorted({str(c).removeprefix("CAP_") for c in _list(capabilities.get("add"))} - {"NET_BIND_SERVICE"})
        if added:
            missing.append(f"no capability {', '.join(added)}")
        if missing:
            found.append(f"container {name} lacks {', '.join(missing)}")
    return found


def evaluate(pod_spec: dict[str, Any]) -> PodSecurity:
    """The least level `pod_spec` passes, with the controls that rule out the level below it."""
    baseline = _baseline_violations(pod_spec)
    if baseline:
        return PodSecurity(Level.PRIVILEGED, tuple(dict.fromkeys(baseline)))
    restricted = _restricted_violations(pod_spec)
    if restricted:
        return PodSecurity(Level.BASELINE, tuple(dict.fromkeys(restricted)))
    return PodSecurity(Level.RESTRICTED)


def combine(results: Iterable[PodSecurity]) -> PodSecurity:
    """The level a workload of several pods (an MPIJob's launcher and workers) needs, and every reason for it."""
    results = list(results)
    level = max((result.level for result in results), default=Level.RESTRICTED)
    reasons = [reason for result in results if result.level == level for reason in result.reasons]
    return PodSecurity(level, tuple(dict.fromkeys(reasons)))
