"""The domain model every stage reads: the resolved fleet (hardware, clusters, jobs) as typed, frozen
dataclasses, and the facts derived from it (names, defaults, derive, admission, placement).

The classes are re-exported here: `from mpigen.model import Job`.
"""

from __future__ import annotations

from mpigen.model.cluster import (
    Backend,
    Cluster,
    Dra,
    GitOps,
    GitOpsApplications,
    GitOpsTool,
    InfinibandGuids,
    Ipam,
    Network,
    NetworkProvider,
    NodePool,
    PriorityClass,
    Queue,
    QueueShare,
    Quota,
    Rail,
    Scheduler,
    Scheduling,
    SourceRef,
    Taint,
    TopologyLevel,
    quantity_text,
)
from mpigen.model.fleet import Fleet
from mpigen.model.hardware import Cpu, Gpu, Hardware, LinkType, Nic, PciDistance, stated
from mpigen.model.job import (
    BindTo,
    CommittedRun,
    EnvVar,
    Job,
    JobScheduling,
    MpiImplementation,
    Naming,
    Origin,
    Placement,
    RailAttachment,
    Resources,
    RunPolicy,
    RunRef,
    SecretKey,
    Volume,
    WorkerSpread,
)
from mpigen.model.selection import EVERYTHING, Selection

__all__ = [
    "EVERYTHING", "Backend", "BindTo", "Cluster", "CommittedRun", "Cpu", "Dra", "EnvVar", "Fleet", "GitOps",
    "GitOpsApplications", "GitOpsTool", "Gpu", "Hardware", "InfinibandGuids", "Ipam", "Job", "JobScheduling",
    "LinkType", "MpiImplementation", "Naming", "Network", "NetworkProvider", "Nic", "NodePool", "Origin",
    "PciDistance", "Placement", "PriorityClass", "Queue", "QueueShare", "Quota", "Rail", "RailAttachment",
    "Resources", "RunPolicy", "RunRef", "Scheduler", "Scheduling", "SecretKey", "Selection", "SourceRef", "Taint",
    "TopologyLevel", "Volume", "WorkerSpread", "quantity_text", "stated",
]
