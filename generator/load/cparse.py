"""A plain profile read at C speed: libyaml (ruamel.yaml's C parser) scans and composes, the same constructor as the
full reader builds the tree, so values, types and the line and column of every key and value come out the same.

Only a file the two readers are known to read alike takes this path: one with no anchor, alias, tag, directive or
merge key, and nothing libyaml or the constructor complains about. Anything else returns None, and the full reader
(`parse.py`) reads the file again for its exact message; tests/unit/load/test_load_cparse.py holds the two equal
over the corpus, the example fleets and fuzzed text.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from typing import Any

from _ruamel_yaml import CParser
from ruamel.yaml.comments import CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver

from mpigen.load.constructor import ProfileConstructor, ProfileMapping

FULL_READER_ONLY = re.compile("[&*!%\t\x85\u2028\u2029\ufeff]|<<")
"""What sends a file to the full reader: anchors and aliases (`&`, `*`: the full reader reports reused anchors
and bounds what aliases expand to), tags (`!`), directives (`%YAML 1.1` changes what a scalar means), merge keys,
tabs (libyaml lets some pass that YAML refuses, and the full reader says where), a byte-order mark within the text
(libyaml does not count it as a column), and the line breaks of YAML 1.1 that YAML 1.2 reads as text. A `&` or `*`
inside a string (`a && b`) only costs that file the fast path."""


class _ProfileCLoader(CParser, ProfileConstructor, VersionedResolver):
    """libyaml's parser and composer under the profile constructor and YAML 1.2's resolver, as ruamel.yaml's
    round-trip reader pairs them with its own pure-Python parser."""

    def __init__(self, text: str) -> None:
        CParser.__init__(self, text)
        self._parser = self._composer = self
        ProfileConstructor.__init__(self, loader=self)
        VersionedResolver.__init__(self, loadumper=self)
        self.allow_duplicate_keys = False
        self.comment_handling = None  # the round-trip constructor asks; libyaml keeps no comments

    @property
    def versioned_resolver(self) -> Any:
        """YAML 1.2's rules for plain scalars, built once: a file without a `%YAML` directive is read as 1.2, and
        ruamel.yaml otherwise looks the version up, and builds the rules, again for every file and scalar."""
        return _rules_of_yaml_1_2()


@cache
def _rules_of_yaml_1_2() -> Any:
    return VersionedResolver(version=(1, 2)).versioned_resolver


class _NotPlain(Exception):
    """A node the builder below leaves to the full reader (a key that is not a scalar, a key written twice)."""


_STR = "tag:yaml.org,2002:str"
_TEXT_STYLES = frozenset((None, "", "'", '"'))  # plain ('' from libyaml, None from ruamel.yaml), quoted


def _tree(loader: _ProfileCLoader, node: Node) -> Any:
    """The value of a composed node, as the round-trip constructor builds it for a file with no anchors, tags,
    merges or comments: a mapping or list with the line and column of each key, value and item, a string as
    written, and any other scalar (numbers, booleans, null, block scalars) by the constructor itself."""
    if isinstance(node, ScalarNode):
        if node.style in _TEXT_STYLES and node.tag == _STR:
            return node.value
        return loader.construct_object(node, deep=True)
    if isinstance(node, MappingNode):
        mapping = ProfileMapping()
        mapping._yaml_set_line_col(node.start_mark.line, node.start_mark.column)
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.style not in _TEXT_STYLES:
                raise _NotPlain
            key = key_node.value  # a key stays the text written (ProfileConstructor), whatever it looks like
            if key in mapping:
                raise _NotPlain
            value = _tree(loader, value_node)
            mapping._yaml_set_kv_line_col(key, [key_node.start_mark.line, key_node.start_mark.column,
                                                value_node.start_mark.line, value_node.start_mark.column])
            mapping[key] = value
        loader.set_collection_style(mapping, node)
        return mapping
    if isinstance(node, SequenceNode):
        items = CommentedSeq()
        items._yaml_set_line_col(node.start_mark.line, node.start_mark.column)
        for index, child in enumerate(node.value):
            items.append(_tree(loader, child))
            items._yaml_set_idx_line_col(index, [child.start_mark.line, child.start_mark.column])
        loader.set_collection_style(items, node)
        return items
    raise _NotPlain


def parse_plain(text: str) -> list[Any] | None:
    """The file's YAML documents (empty ones left out), or None where the full reader must read it."""
    if FULL_READER_ONLY.search(text):
        return None
    loader = _ProfileCLoader(text)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            documents = []
            while loader.check_node():
                documents.append(_tree(loader, loader.get_node()))
    except (_NotPlain, YAMLError, RecursionError, ValueError):  # the full reader says what and where
        return None
    finally:
        loader.dispose()
    if caught:  # a warning is a problem of the file's, worded by the full reader
        return None
    return [document for document in documents if document is not None]
