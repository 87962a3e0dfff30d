"""`mpigen import`: profiles from what a cluster already runs (its exported nodes and operators, its MPIJobs)."""

from mpigen.adopt.jobs import adopt_jobs
from mpigen.adopt.result import Adoption, AdoptionError, ProfileText

__all__ = ["Adoption", "AdoptionError", "ProfileText", "adopt_jobs"]
