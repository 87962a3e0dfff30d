"""What a job may ask of the node only with a reason a reviewer can read: privileged workers, and host
folders that give the node away.

A `hostPath` volume of `/`, `/etc`, `/var/run/docker.sock`, `/var/lib/kubelet` ... hands the pod the node
as surely as `privileged` does: it can read the kubelet's credentials and other pods' secrets, talk to
the container runtime, or write a binary root will run. Such a folder needs `hostPath: {path, reason}`,
and the reason goes into the chart (`mpigen/host-path-reason`), as `privileged: {reason}` does
(`mpigen/privileged-reason`). Read-only mounts need it too: reading the kubelet's keys or connecting to
a runtime socket needs no write access.
"""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile, to_plain
from mpigen.objects import chartfiles
from mpigen.support.diagnostics import Diagnostic, raises
from mpigen.support.profile_rules import SECURITY

# Folders of a node whose contents give the node away. A path equal to one, above one (`/var` holds
# `/var/run`) or inside one (`/etc/kubernetes`, `/run/containerd/containerd.sock`) needs a reason.
# Left out, on purpose: /home (users' files, not root's), /tmp, /mnt, /opt (but /opt/cni), /srv, /data...
NODE_FOLDERS = (
    "/etc", "/root", "/boot", "/proc", "/sys", "/dev",
    "/run", "/var/run",  # container runtime sockets (containerd, docker, cri-o), kubelet's pod data
    "/var/lib/kubelet", "/var/lib/containerd", "/var/lib/docker", "/var/lib/containers", "/var/lib/cni",
    "/var/lib/etcd", "/var/log",  # kubelet follows links under /var/log/pods: a known escape
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/cni",  # programs root runs
)
# A reason says something: this many characters that are not spaces, and this many words of letters.
REASON_MIN_CHARACTERS = 10
REASON_MIN_WORDS = 2


def host_path_segments(path: str) -> list[str] | None:
    """The folders of an absolute path, with `//`, `/./` and a trailing `/` dropped; None if a segment is `..`
    (Kubernetes refuses those, and they would let `/data/../etc` dodge the list)."""
    segments = [segment for segment in path.split("/") if segment not in ("", ".")]
    return None if ".." in segments else segments


def node_folder(path: str) -> str | None:
    """The folder of NODE_FOLDERS that `path` (normalised) is, lies above or lies inside, or None."""
    segments = host_path_segments(path)
    if segments is None:
        return None
    for folder in NODE_FOLDERS:
        parts = folder.strip("/").split("/")
        shared = min(len(parts), len(segments))
        if parts[:shared] == segments[:shared]:
            return folder
    return None


def reason_problem(text: str) -> str | None:
    """What a reason lacks to say anything (`' .'`, `'xxxxxxxxxx'`), or None."""
    characters = sum(1 for ch in text if not ch.isspace())
    words = 0
    for word in text.split():
        letters = "".join(ch for ch in word if ch.isalpha())
        words += len(letters) >= 2
    if characters < REASON_MIN_CHARACTERS:
        return f"it has {characters} character(s) that are not spaces, fewer than {REASON_MIN_CHARACTERS}"
    if words < REASON_MIN_WORDS:
        return f"it has {words} word(s) of letters, fewer than {REASON_MIN_WORDS}"
    return None


def _reason_diagnostic(document: ProfileFile, path: tuple[str | int, ...], field: str, text: str, what: str,
                       ) -> list[Diagnostic]:
    problem = reason_problem(text)
    if problem is None:
        return []
    return [Diagnostic(document.location(*path), f"`{field}` does not say why: {problem}",
                       f"write in words why {what}, for the chart's reviewers")]


@raises(SECURITY)
def check_job_security(document: ProfileFile) -> list[Diagnostic]:
    """Reasons for privileged workers and for host folders, in a Job that passed its schema."""
    if document.kind != "Job":
        return []
    job: dict[str, Any] = to_plain(document.data)
    found: list[Diagnostic] = []
    if "privileged" in job:
        found += _reason_diagnostic(document, ("privileged", "reason"), "privileged.reason",
                                    job["privileged"]["reason"], "the workers must be privileged")
    for i, volume in enumerate(job.get("volumes", [])):
        given = volume.get("hostPath")
        if given is None:
            continue
        path, reason = (given["path"], given["reason"]) if isinstance(given, dict) else (given, None)
        where = ("volumes", i, "hostPath", "path") if isinstance(given, dict) else ("volumes", i, "hostPath")
        field = f"volumes[{i}].hostPath" + (".path" if isinstance(given, dict) else "")
        if host_path_segments(path) is None:
            found.append(Diagnostic(document.location(*where), f"`{field}` '{path}' has a `..` segment, which "
                                    "Kubernetes refuses", "write the folder's own path, without `..`"))
            continue
        if reason is not None:
            found += _reason_diagnostic(document, ("volumes", i, "hostPath", "reason"),
                                        f"volumes[{i}].hostPath.reason", reason,
                                        f"the job needs the node's {path}")
            continue
        folder = node_folder(path)
        if folder is not None:
            segments, folder_segments = host_path_segments(path) or [], folder.strip("/").split("/")
            relation = ("is" if segments == folder_segments else
                        "holds" if len(segments) < len(folder_segments) else "lies in")
            found.append(Diagnostic(
                document.location(*where),
                f"volume '{volume['name']}' mounts the node's {path}, which {relation} {folder}: a pod with it can "
                "take over the node, like a privileged one, and it needs a reason",
                f"mount a claim instead, or write `hostPath: {{path: {path}, reason: \"<why the job needs it>\"}}`; "
                f"the reason goes into the chart as the annotation `{chartfiles.HOST_PATH_REASON}`, for its reviewers"))
    return found
