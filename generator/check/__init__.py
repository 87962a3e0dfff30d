"""`mpigen check`: judge charts and manifests the way the cluster will, before Argo CD does.

run.py: discover (chart folders, manifest files: generator/readback/) -> render (helm.py, or readback's own
renderer for charts mpigen compiled) -> schemas (built-in kinds, mpigen's CRD schemas, --crds) -> rules/
(mpi-operator's validation, networks, capacity, resources, reserved names, Pod Security) -> report.
"""

from __future__ import annotations

from mpigen.check.run import CheckOptions, CheckUsageError, run_check

__all__ = ["CheckOptions", "CheckUsageError", "run_check"]
