"""What the YAML parser, or the tree it built, gets wrong in a profile, said in words with a hint and a place."""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedOrderedMap, CommentedSeq, CommentedSet, TaggedScalar
from ruamel.yaml.error import MantissaNoDotYAML1_1Warning, MarkedYAMLError

from mpigen.load.constructor import INSIDE_ITSELF, MERGES_ITSELF, NOT_MERGEABLE
from mpigen.load.document import one_based

_MARK = re.compile(r", line (\d+), column (\d+)")


def _reused_anchor(text: str) -> tuple[str, int, int, int] | None:
    """Name, first line, and line and column of the second definition, from ruamel's duplicate-anchor warning
    (text only: the anchor's repr and both marks). Split on the fixed phrases, then one mark search in each
    part: a pattern spanning the whole message would backtrack over every character of a long anchor."""
    _, found, rest = text.partition("found duplicate anchor ")
    name, found_first, rest = rest.partition("first occurrence") if found else ("", "", "")
    first_part, found_second, second_part = rest.partition("second occurrence") if found_first else ("", "", "")
    first, second = _MARK.search(first_part), _MARK.search(second_part)
    if not (found_second and first and second):
        return None
    return name.strip(), int(first[1]), int(second[1]), int(second[2])


def yaml_warning(warning: Warning | str) -> tuple[int, int, str, str]:
    """Line, column, message and hint for a warning of the YAML parser, which would otherwise be printed raw,
    over several lines, beside the diagnostics (and the profile read anyway)."""
    if isinstance(warning, MantissaNoDotYAML1_1Warning):
        line, column = one_based((warning.node.start_mark.line, warning.node.start_mark.column))
        return (line, column, f"the number {warning.flt} has no `.` in its mantissa, which YAML 1.1 requires",
                "write it with a dot (e.g. 1.0e3), or remove the `%YAML 1.1` line")
    text = str(warning)
    found = _reused_anchor(text)
    if found:
        name, first, line, column = found
        return (line, column, f"anchor &{name[1:-1]} is defined a second time (first on line {first})",
                "give each anchor its own name")
    return 1, 1, f"not valid YAML: {' '.join(text.split())}", "check the anchors and aliases, tags and directives"


def _tag_of(node: Any) -> str | None:
    """The tag written on `node` (`!secret`, `!!python/object/apply:os.system`), or None for a plain node."""
    if isinstance(node, TaggedScalar) or (isinstance(node, (CommentedMap, CommentedSeq)) and node.tag.value):
        return str(node.tag.value).replace("tag:yaml.org,2002:", "!!")
    if isinstance(node, bytes):
        return "!!binary"
    if isinstance(node, CommentedSet):
        return "!!set"
    if isinstance(node, CommentedOrderedMap):
        return "!!omap"
    return None


def first_odd_node(data: CommentedMap) -> tuple[tuple[int, int], str, str] | None:
    """Where the tree holds what no profile needs and JSON cannot say: a tagged value or a key that is a
    list or mapping. A tag is otherwise dropped without a word (`image: !secret x` is just `x`), and a
    Python tag is a request to run code; mpigen's loader runs none, and refuses the file instead."""
    stack: list[Any] = [data]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, CommentedMap):
            for key, value in node.items():
                if not isinstance(key, str):
                    return (one_based(node.lc.key(key)), "a key must be a plain name, not a list, mapping or "
                            "tagged value", "write the key as a word, e.g. `workers:`")
                tag = _tag_of(value)
                if tag is not None:
                    return (one_based(node.lc.value(key)), f"YAML tag `{tag}` is not allowed in a profile",
                            "remove the tag; quote the value if it must be a string")
                stack.append(value)
        elif isinstance(node, CommentedSeq):
            for i, item in enumerate(node):
                tag = _tag_of(item)
                if tag is not None:
                    return (one_based(node.lc.item(i)), f"YAML tag `{tag}` is not allowed in a profile",
                            "remove the tag; quote the value if it must be a string")
                stack.append(item)
    return None


def yaml_problem(exc: MarkedYAMLError) -> tuple[Any, str, str]:
    """Where the parser's complaint should point, what it means in words, and how to fix it."""
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    mark, opened = exc.problem_mark or exc.context_mark, exc.context_mark
    if "\\t" in problem or "tab" in problem or "\\t" in context:
        return mark, "a tab character is not allowed here: YAML indents with spaces", "replace the tab with spaces"
    if problem == NOT_MERGEABLE:  # `<<: 5`, `<<: [1]`, `<<: *list`
        return mark, "`<<` merges mappings into this one, but its value is not a mapping or a list of mappings", \
            "write `<<: *name` or `<<: [*a, *b]` where each anchor names a mapping, or quote `\"<<\"` for a plain key"
    if problem == MERGES_ITSELF:
        return mark, "`<<` merges a mapping into itself: the alias names this mapping, or one it is part of", \
            "merge a mapping defined outside this one"
    if problem == INSIDE_ITSELF:
        return mark, "this anchor's value holds an alias of itself, so it would never end", \
            "write the value out, or move the alias out of the anchored value"
    if "duplicate merge key" in problem:
        return mark, "`<<` appears twice in this mapping", "merge several mappings with one `<<: [*a, *b]`"
    if "duplicate key" in problem:
        return mark, f"{problem}: each key may appear once", "remove or rename one of them"
    if context == "while scanning a quoted scalar" and "end of stream" in problem and opened is not None:
        return opened, "not valid YAML: this quote is never closed", "add the closing quote"
    if context.startswith("while parsing a flow ") and opened is not None:
        bracket, closer = ("[", "]") if "sequence" in context else ("{", "}")
        if "<stream end>" in problem:
            return opened, f"not valid YAML: this `{bracket}` is never closed", f"close it with `{closer}`"
        return mark, f"not valid YAML: {problem}", (f"close the `{bracket}` of line {opened.line + 1}, column "
                                                    f"{opened.column + 1} with `{closer}` before this, or quote the "
                                                    "value if it holds `:`, `,` or brackets")
    if problem.startswith("expected <block end>"):
        return mark, "not valid YAML: this line is indented differently from the lines before it", \
            "indent the keys of one mapping, and the `-` of one list, by the same number of spaces"
    if problem.startswith("found undefined alias"):
        return mark, f"not valid YAML: {problem}", "define the anchor (`&name`) on a value before the alias, " \
            "or write the value out"
    return mark, f"not valid YAML: {problem or context or 'cannot be read'}", \
        "check the indentation and quoting on this line"
