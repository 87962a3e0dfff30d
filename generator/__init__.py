"""mpigen: compile hardware, cluster and MPI job profiles into Helm charts."""

__version__ = "0.1.0"
