"""`mpigen diff`: the difference between charts as they are (on disk, or at a git revision) and what the profiles
compile to now, object by object and per cluster: what a reviewer needs, rather than a text diff of templates.

- sides.py: each side as units keyed by cluster and path (every chart, and every GitOps bootstrap file);
- compare.py, objects.py: the changed objects of each unit (a rename pairs only within one chart);
- review.py: the changes that need a person (action lines) and what a running job will and will not get (notes);
- report.py: text and JSON;
- run.py: `diff_against`, the whole of one `mpigen diff`.
"""

from __future__ import annotations

from mpigen.diff.compare import UnitChanges
from mpigen.diff.objects import ObjectChange, diff_objects, object_key
from mpigen.diff.report import DiffReport, as_json, as_text
from mpigen.diff.review import Review
from mpigen.diff.run import diff_against
from mpigen.diff.sides import DiffError

__all__ = ["DiffError", "DiffReport", "ObjectChange", "Review", "UnitChanges", "as_json", "as_text", "diff_against",
           "diff_objects", "object_key"]
