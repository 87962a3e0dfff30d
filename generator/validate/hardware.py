"""What a hardware profile must hold together: unique NICs and HCA ports, GPU indexes that exist, label keys."""

from __future__ import annotations

from mpigen.load import ProfileFile, to_plain
from mpigen.model import derive
from mpigen.support.diagnostics import Diagnostic, raises
from mpigen.support.profile_rules import HARDWARE
from mpigen.validate.fields import check_label_keys, duplicates
from mpigen.validate.topology import check_hardware_topology


@raises(HARDWARE)
def check_hardware(document: ProfileFile) -> list[Diagnostic]:
    data = to_plain(document.data)
    nics = data.get("nics", [])
    found = list(duplicates(document, nics, "name", ("nics",), "NIC name"))
    # A NIC whose HCA is not known (yet) clashes with nothing: each gets a value equal to no other.
    found += duplicates(document, [f"{n['hca']}:{n.get('port', 1)}" if "hca" in n else object() for n in nics], "",
                         ("nics",), "HCA and port")
    found += check_label_keys(document, data.get("nodeLabels", {}), ("nodeLabels",))
    gpus = derive.gpu_count(data)
    nvlink = data.get("gpu", {}).get("nvlinkDomainGpus")
    if nvlink is not None and nvlink % gpus:
        found.append(Diagnostic(document.location("gpu", "nvlinkDomainGpus"),
                                f"an NVLink domain of {nvlink} GPUs is not a whole number of nodes of {gpus} GPUs",
                                f"use a multiple of {gpus} (GB200 NVL72: 72, 18 nodes of 4)"))
    for i, nic in enumerate(nics):
        for j, gpu in enumerate(nic.get("gpus", [])):
            if gpu >= gpus:
                found.append(Diagnostic(document.location("nics", i, "gpus", j),
                                        f"GPU index {gpu} does not exist: this hardware has {gpus} GPU(s)",
                                        f"use indexes 0 to {gpus - 1}" if gpus else "remove `gpus:`"))
    return found + check_hardware_topology(document, data)
