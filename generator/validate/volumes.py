"""A job's volumes: one source each, and no name or mount path that mpigen or mpi-operator already uses."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import names
from mpigen.support.diagnostics import Diagnostic, raises
from mpigen.support.profile_rules import VOLUMES
from mpigen.validate.fields import duplicates
from mpigen.vocabulary import mpi_operator

# Volumes mpigen adds, and those mpi-operator adds to the launcher and workers (at the sshAuthMountPath and
# /etc/mpi): a second volume or mount there makes the pod invalid.
RESERVED_VOLUMES = ("dshm", "mpigen-hostfile", mpi_operator.SSH_AUTH_VOLUME, mpi_operator.CONFIG_VOLUME)
RESERVED_MOUNTS = ("/dev/shm", names.HOSTFILE_DIR, mpi_operator.CONFIG_MOUNT_PATH)


@raises(VOLUMES)
def check_volumes(document: ProfileFile, job: dict[str, Any]) -> list[Diagnostic]:
    volumes = job.get("volumes", [])
    found = list(duplicates(document, volumes, "name", ("volumes",), "volume name"))
    found += duplicates(document, volumes, "mountPath", ("volumes",), "mount path")
    reserved = (*RESERVED_MOUNTS, job.get("sshAuthMountPath", mpi_operator.DEFAULT_SSH_AUTH_MOUNT_PATH).rstrip("/"))
    for i, volume in enumerate(volumes):
        sources = [key for key in ("claim", "hostPath") if key in volume]
        if len(sources) != 1:
            found.append(Diagnostic(document.location("volumes", i, *sources[1:]),
                                    f"volume '{volume['name']}' gives both `claim` and `hostPath`" if sources else
                                    f"volume '{volume['name']}' mounts nothing",
                                    "keep one: `claim` (preferred) or `hostPath`" if sources else
                                    "give one: `claim:` a PersistentVolumeClaim (preferred), or `hostPath:` a folder "
                                    "of the node"))
        if volume["name"] in RESERVED_VOLUMES:
            found.append(Diagnostic(document.location("volumes", i, "name"),
                                    f"volume name '{volume['name']}' is used by mpigen or mpi-operator",
                                    "pick another name"))
        path = PurePosixPath(volume["mountPath"])
        clash = next((r for r in reserved if path == PurePosixPath(r) or PurePosixPath(r).is_relative_to(path)
                      or path.is_relative_to(r)), None)
        if clash:
            found.append(Diagnostic(document.location("volumes", i, "mountPath"),
                                    f"mount path '{volume['mountPath']}' collides with {clash}, which mpigen or "
                                    "mpi-operator mounts", "mount the claim somewhere else, e.g. /data"))
    return found
