"""The YAML constructor for profiles: ruamel's round-trip one without YAML's implicit rewrites of keys and
dates, with merge keys located where they were written, and refusing merges and aliases that never end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

from mpigen.load.document import index_merged_keys

MERGE_TAG = "tag:yaml.org,2002:merge"
NOT_MERGEABLE = "merge value is not a mapping"
MERGES_ITSELF = "merge value contains the mapping"
INSIDE_ITSELF = "alias inside its own anchor"
_IMPLICIT_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "null", "timestamp"))
"""Tags YAML gives a plain scalar by its look (`true`, `0x1F`, `1e3`, `~`, `2024-01-01`), not by what it means."""


class ProfileConstructor(RoundTripConstructor):
    """ruamel's round-trip constructor, minus YAML's implicit rewrites of text no profile field wants rewritten.

    - Keys stay the text written: every key of a profile is a name (an env variable, a label, a field), and
      `true:` would otherwise come out as `True`, `1e3:` as `1000.0`, `null:` as `None`.
    - Dates and times stay text: no profile field is a timestamp, and `2024-01-01 10:00:00` in an env value or
      an image would otherwise come out as `2024-01-01T10:00:00`.
    - A plain `=` or `<<` that is a value is that text (YAML 1.2 has no `=` type; `<<` merges only as a key).
    Numbers, booleans and null stay typed: where a string belongs, the schema refuses them with the written
    text and a hint to quote it, so nothing is silently reformatted either way.
    """

    # ruamel.yaml's round-trip constructor takes `maptyp`, which its stubs for the safe constructor above it lack.
    def construct_mapping(self, node: Any, maptyp: Any, deep: bool = False) -> Any:  # type: ignore[override]
        node.value = [(_as_text(key) if isinstance(key, ScalarNode) and key.tag in _IMPLICIT_TAGS else key, value)
                      for key, value in node.value]
        for key, value in node.value:
            merged = value.value if isinstance(value, SequenceNode) else [value]
            if key.tag == MERGE_TAG and not all(isinstance(item, MappingNode) for item in merged):
                # ruamel would point at the merged value, which for an alias is its anchor's: say it at the `<<`.
                raise ConstructorError(problem=NOT_MERGEABLE, problem_mark=key.start_mark)
            if key.tag == MERGE_TAG and any(item in self.recursive_objects for item in merged):
                # The mapping itself, or one it sits in (`a: &a {<<: *a}`): still being read, nothing to merge yet.
                raise ConstructorError(problem=MERGES_ITSELF, problem_mark=key.start_mark)
        keys = [key for key, _ in node.value]
        merge_at = next((i for i, key in enumerate(keys) if key.tag == MERGE_TAG), None)
        constructed = super().construct_mapping(node, maptyp, deep=deep)
        if merge_at is not None:  # merged keys stand where `<<` was written, as if written out there (env order)
            own = list(maptyp)[:len(keys) - 1]
            order = [*own[:merge_at], *list(maptyp)[len(keys) - 1:], *own[merge_at:]]
            for key in order:
                maptyp.move_to_end(key)
            index_merged_keys(maptyp)
        return constructed

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        if node in self.recursive_objects and node not in self.constructed_objects:
            # An alias inside its own anchor's value (`a: &a [*a]`): ruamel makes it None, without a word.
            raise ConstructorError(problem=INSIDE_ITSELF, problem_mark=node.start_mark)
        return super().construct_object(node, deep=deep)

    def construct_yaml_map(self, node: Any) -> Iterator[CommentedMap]:
        """ruamel's, building a `ProfileMapping`."""
        data = ProfileMapping()
        data._yaml_set_line_col(node.start_mark.line, node.start_mark.column)
        yield data
        self.construct_mapping(node, data, deep=True)
        self.set_collection_style(data, node)

    def construct_written_text(self, node: Any, values: Any = None) -> Any:
        return self.construct_scalar(node)


class ProfileMapping(CommentedMap):
    """A mapping as ruamel reads it, but merging into it takes constant time: ruamel's `add_referent` looks for
    the merging mapping among all earlier ones by equality (`cm not in self._ref`), so 50,000 mappings that
    merge one anchor (`<<: *base`, a 1 MiB profile) took hours. Each mapping merges once, so no check is needed."""

    __slots__ = ()

    def add_referent(self, cm: Any) -> None:
        self._ref.append(cm)


def _as_text(node: ScalarNode) -> ScalarNode:
    """The same scalar, as the string it was written as."""
    return ScalarNode("tag:yaml.org,2002:str", node.value, node.start_mark, node.end_mark, style=node.style,
                      anchor=node.anchor)


for _tag in ("timestamp", "value", "merge"):
    ProfileConstructor.add_constructor(f"tag:yaml.org,2002:{_tag}", ProfileConstructor.construct_written_text)
ProfileConstructor.add_constructor("tag:yaml.org,2002:map", ProfileConstructor.construct_yaml_map)
