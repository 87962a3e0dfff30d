"""`mpigen check`: judge charts and manifests the way the cluster will, before Argo CD does.

discover (chart folders, manifest files) -> render (helm.py, or own_renderer.py for charts mpigen compiled;
documents.py reads the output) -> schemas (built-in kinds, mpigen's CRD schemas, --crds) -> rules/ (mpi-operator's
validation, networks, capacity, resources, reserved names, Pod Security) -> report.
"""

from __future__ import annotations

from generator.check.run import CheckOptions, CheckUsageError, run_check

__all__ = ["CheckOptions", "CheckUsageError", "run_check"]
