"""The live objects `check --context` gives (a `kubectl get -o yaml` export, a `kind: List` of them or one object):
what an update of a rendered object is judged against, by the built-in kinds' immutable fields (rules/immutable.py)
and by the CRDs' transition rules, those that compare with `oldSelf` (cel/crd_rules.py).

A live object is one the API server has stored: it carries `metadata.resourceVersion` or `metadata.uid`; an object
of a context chart or a hand-written manifest is not one. It is the old object of the rendered object of its API
group, kind, namespace and name in the same cluster (a namespaced object with no namespace is taken to be in
`default`, where `kubectl apply` puts it; a cluster-scoped one has none on either side)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mpigen.check.rules.reading import as_dict
from mpigen.readback.findings import CheckContext, RenderedObject
from mpigen.vocabulary.kubernetes import api_group

_Key = tuple[str, str, str]
"""(API group, kind, name): the server compares an object with the stored one of these, whatever its version."""


def is_live(document: RenderedObject) -> bool:
    """An object read from a cluster: the API server gave it a resourceVersion and a uid."""
    metadata = as_dict(document.obj.get("metadata")) if isinstance(document.obj, dict) else None
    return bool(metadata and (metadata.get("resourceVersion") or metadata.get("uid")))


def _key(document: RenderedObject) -> _Key:
    return api_group(document.api_version), document.kind, document.name


class LiveObjects:
    """The live objects among `context.extra` of the kinds `wanted` takes, found by the rendered object they are the
    old object of."""

    def __init__(self, context: CheckContext, wanted: Callable[[RenderedObject], bool] = lambda _: True) -> None:
        self.context = context
        self._by_key: dict[_Key, list[RenderedObject]] = {}
        for other in context.extra:
            if is_live(other) and wanted(other):
                self._by_key.setdefault(_key(other), []).append(other)

    def __bool__(self) -> bool:
        return bool(self._by_key)

    def old_of(self, document: RenderedObject) -> RenderedObject | None:
        """The live object `document` would update, or None where the context holds none."""
        namespace = document.namespace or "default"
        candidates: Iterable[RenderedObject] = self._by_key.get(_key(document), ())
        return next((other for other in candidates if (other.namespace or "default") == namespace
                     and self.context.same_cluster(document, other)), None)
