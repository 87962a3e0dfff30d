"""Regular-expression search in time linear in the text, for the `pattern`s of CRD schemas.

A CRD comes from the chart under review, and Python's `re` backtracks: `^(a+)+$` against forty `a`s and a
`!` runs for hours. Kubernetes checks these patterns with Go's RE2, which never backtracks; so does this:
a Thompson NFA walked one character at a time (its sets of states cached as a lazy DFA), with a bound on
the work any one search may do. The syntax is what RE2 and ECMA-262 share: literals, `.`, classes,
`\\d \\w \\s` and their negations, groups (capturing, `(?:`, named), `|`, `* + ? {n} {n,} {n,m}` (lazy or
not: the same matches), `^` and `$` (text start and end, as in Go), and `(?i)`. Anything else
(backreferences, lookaround, `\\b`) is refused with Unsupported rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

MAX_STATES = 4000
MAX_WORK = 20_000_000
"""NFA state visits one search may spend on cache misses: about ten seconds of Python at worst."""
_CACHE_LIMIT = 20_000


class Unsupported(ValueError):
    """A pattern this engine does not read, or one too large or too costly to run."""


@dataclass(frozen=True)
class _Chars:
    """A set of characters: ranges and shorthand classes, maybe negated, maybe ignoring case."""

    ranges: tuple[tuple[str, str], ...] = ()
    shorthands: str = ""  # letters among d, w, s, D, W, S
    negated: bool = False
    anything: bool = False
    fold: bool = False

    def __contains__(self, ch: str) -> bool:
        if self.anything:
            return ch != "\n"
        hit = self._hit(ch) or (self.fold and (self._hit(ch.lower()) or self._hit(ch.upper())))
        return hit != self.negated

    def _hit(self, ch: str) -> bool:
        if any(low <= ch <= high for low, high in self.ranges):
            return True
        return any(_shorthand(s, ch) for s in self.shorthands)


def _shorthand(letter: str, ch: str) -> bool:
    if letter in "dD":
        hit = "0" <= ch <= "9"
    elif letter in "wW":
        hit = ch == "_" or "0" <= ch <= "9" or "a" <= ch <= "z" or "A" <= ch <= "Z"
    else:
        hit = ch in " \t\n\r\f\v"
    return hit != letter.isupper()


def repeat_bounds(text: str, at: int) -> tuple[int, int | None, int] | None:
    """`{n}`, `{n,}` or `{n,m}` starting at `text[at]`: (n, m or None, where it ends); else None (a `{` that is a
    literal, as RE2 and Python read it). Only ASCII digits count, as in RE2: `{²}` is text."""
    if not text.startswith("{", at):
        return None
    close = text.find("}", at, at + 16)
    if close == -1:
        return None
    low, comma, high = text[at + 1:close].partition(",")
    if not _digits(low) or (high and not _digits(high)):
        return None
    return int(low), (int(high) if high else None) if comma else int(low), close + 1


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


# NFA: each state is (kind, chars or None, out, out2). Kinds: "char", "split", "start", "end", "match".
@dataclass
class _Nfa:
    states: list[tuple[str, _Chars | None, int, int]] = field(default_factory=list)

    def add(self, kind: str, chars: _Chars | None = None, out: int = -1, out2: int = -1) -> int:
        if len(self.states) >= MAX_STATES:
            raise Unsupported(f"pattern needs more than {MAX_STATES} states")
        self.states.append((kind, chars, out, out2))
        return len(self.states) - 1

    def patch(self, holes: list[tuple[int, int]], target: int) -> None:
        for index, slot in holes:
            kind, chars, out, out2 = self.states[index]
            self.states[index] = (kind, chars, target if slot == 0 else out, target if slot == 1 else out2)


_Fragment = tuple[int, list[tuple[int, int]]]  # start state, dangling outs (state, slot)
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}


class _Parser:
    """Recursive descent over the pattern (a schema's few dozen characters), building the NFA as it goes."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.nfa = _Nfa()
        self.depth = 0

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def take(self) -> str:
        ch = self.peek()
        if not ch:
            raise Unsupported("pattern ends early")
        self.at += 1
        return ch

    def alternation(self, fold: bool) -> _Fragment | None:
        self.depth += 1
        if self.depth > 100:
            raise Unsupported("pattern nests too deep")
        branches = [self.sequence(fold)]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.sequence(fold))
        self.depth -= 1
        fragment = branches[0]
        for branch in branches[1:]:
            fragment = self.either(fragment, branch)
        return fragment

    def empty(self) -> _Fragment:
        """A state that only passes on: an empty branch or group."""
        state = self.nfa.add("split")
        return state, [(state, 0)]

    def either(self, left: _Fragment | None, right: _Fragment | None) -> _Fragment:
        left = left or self.empty()
        right = right or self.empty()
        split = self.nfa.add("split", None, left[0], right[0])
        return split, left[1] + right[1]

    def sequence(self, fold: bool) -> _Fragment | None:
        fragment: _Fragment | None = None
        while self.peek() and self.peek() not in "|)":
            if self.text.startswith("(?i)", self.at):
                self.at += 4
                fold = True
                continue
            start_at = self.at
            atom = self.atom(fold)
            atom = self.quantified(atom, self.text[start_at:self.at], fold)
            if fragment is None:
                fragment = atom
            else:
                self.nfa.patch(fragment[1], atom[0])
                fragment = (fragment[0], atom[1])
        return fragment

    def atom(self, fold: bool) -> _Fragment:
        ch = self.take()
        if ch == "(":
            if self.peek() == "?":
                if self.text.startswith("?:", self.at):
                    self.at += 2
                elif self.text.startswith(("?P<", "?<"), self.at) and not self.text.startswith(("?<=", "?<!"), self.at):
                    close = self.text.find(">", self.at)
                    if close == -1:
                        raise Unsupported("unclosed group name")
                    self.at = close + 1
                else:
                    raise Unsupported(f"group `(?{self.text[self.at + 1:self.at + 2]}` (lookaround or flags)")
            inner = self.alternation(fold)
            if self.take() != ")":
                raise Unsupported("unbalanced parenthesis")
            return inner or self.empty()
        if ch == ")":
            raise Unsupported("unbalanced parenthesis")
        if ch == "^":
            state = self.nfa.add("start")
            return state, [(state, 0)]
        if ch == "$":
            state = self.nfa.add("end")
            return state, [(state, 0)]
        if ch == ".":
            chars = _Chars(anything=True)
        elif ch == "[":
            chars = self.char_class(fold)
        elif ch == "\\":
            chars = self.escape(fold)
        elif ch in "*+?" or repeat_bounds(self.text, self.at - 1):
            raise Unsupported("nothing to repeat")
        else:
            chars = _Chars(((ch, ch),), fold=fold)
        state = self.nfa.add("char", chars)
        return state, [(state, 0)]

    def escape(self, fold: bool) -> _Chars:
        ch = self.take()
        if ch in "dDwWsS":
            return _Chars(shorthands=ch)
        if ch in _ESCAPES:
            return _Chars(((_ESCAPES[ch],) * 2,))
        if ch in "xu":
            digits = 2 if ch == "x" else 4
            code = self.text[self.at:self.at + digits]
            if len(code) != digits or any(c not in "0123456789abcdefABCDEF" for c in code):
                raise Unsupported(f"escape \\{ch}{code}")
            self.at += digits
            return _Chars(((chr(int(code, 16)),) * 2,), fold=fold)
        if ch.isalnum():
            raise Unsupported(f"escape \\{ch}")
        return _Chars(((ch, ch),), fold=fold)

    def char_class(self, fold: bool) -> _Chars:
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        ranges: list[tuple[str, str]] = []
        shorthands = ""
        first = True
        while True:
            ch = self.take()
            if ch == "]" and not first:
                break
            first = False
            if ch == "[" and self.peek() == ":":
                raise Unsupported("POSIX class")
            if ch == "\\":
                escaped = self.escape(fold)
                if escaped.shorthands:
                    shorthands += escaped.shorthands
                    continue
                ch = escaped.ranges[0][0]
            if self.peek() == "-" and self.text[self.at + 1:self.at + 2] not in ("]", ""):
                self.at += 1
                high = self.take()
                if high == "\\":
                    escaped = self.escape(fold)
                    if escaped.shorthands:
                        raise Unsupported("a range ending in a class")
                    high = escaped.ranges[0][0]
                if high < ch:
                    raise Unsupported("a range out of order")
                ranges.append((ch, high))
            else:
                ranges.append((ch, ch))
        return _Chars(tuple(ranges), shorthands, negated, fold=fold)

    def quantified(self, atom: _Fragment, source: str, fold: bool) -> _Fragment:
        """The atom with its quantifier, if one follows; `source` is the atom's own text, parsed again for
        each copy a counted repetition needs."""
        ch = self.peek()
        bounds = repeat_bounds(self.text, self.at)
        if bounds is not None:
            low, high, self.at = bounds
        elif ch and ch in "*+?":
            self.at += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
        else:
            return atom
        if self.peek() == "?":
            self.at += 1  # lazy: the same set of matches
        if (self.peek() and self.peek() in "*+?") or repeat_bounds(self.text, self.at):
            raise Unsupported("a repetition of a repetition")
        if (high is not None and high < low) or max(low, high or 0) > 1000:
            raise Unsupported("a repetition count out of range")
        return self.repeat(atom, source, low, high, fold)

    def repeat(self, atom: _Fragment, source: str, low: int, high: int | None, fold: bool) -> _Fragment:
        if high == 0:
            return self.empty()
        count = low if high is None else high
        copies = [atom] + [self.copy(source, fold) for _ in range(max(count, 1) - 1)]
        if high is None and low == 0:
            return self.star(atom, at_least_once=False)
        fragment: _Fragment | None = None
        for index, piece in enumerate(copies):
            if high is None and index == len(copies) - 1:
                piece = self.star(piece, at_least_once=True)
            elif index >= low:
                piece = self.optional(piece)
            if fragment is None:
                fragment = piece
            else:
                self.nfa.patch(fragment[1], piece[0])
                fragment = (fragment[0], piece[1])
        assert fragment is not None
        return fragment

    def copy(self, source: str, fold: bool) -> _Fragment:
        """A fresh NFA for an atom's text."""
        saved = self.text, self.at
        self.text, self.at = source, 0
        try:
            return self.atom(fold)
        finally:
            self.text, self.at = saved

    def star(self, piece: _Fragment, at_least_once: bool) -> _Fragment:
        split = self.nfa.add("split", None, piece[0])
        self.nfa.patch(piece[1], split)
        return (piece[0] if at_least_once else split), [(split, 1)]

    def optional(self, piece: _Fragment) -> _Fragment:
        split = self.nfa.add("split", None, piece[0])
        return split, [*piece[1], (split, 1)]


@dataclass(frozen=True)
class _Program:
    states: tuple[tuple[str, _Chars | None, int, int], ...]
    start: int
    match: int


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> _Program:
    """The NFA of a pattern; Unsupported if it is outside the syntax above or too large."""
    parser = _Parser(pattern)
    fragment = parser.alternation(fold=False) or parser.empty()
    if parser.at != len(pattern):
        raise Unsupported("unbalanced parenthesis")
    match = parser.nfa.add("match")
    parser.nfa.patch(fragment[1], match)
    return _Program(tuple(parser.nfa.states), fragment[0], match)


def longest_text(pattern: str) -> int:
    """The longest text search() runs `pattern` over without refusing it as too costly: the start costs two
    closures, each character at most a step and a closure, each visiting every state at most once."""
    states = len(compile_pattern(pattern).states)
    return (MAX_WORK - 2 * (states + 1)) // (2 * states + 1)


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches anywhere in `text` (jsonschema's `pattern`: unanchored, like `re.search`,
    but `$` is the end of the text only, as in Go)."""
    program = compile_pattern(pattern)
    states = program.states
    work = 0

    def closure(seeds: set[int], at_start: bool, at_end: bool) -> frozenset[int]:
        nonlocal work
        seen: set[int] = set()
        stack = list(seeds)
        while stack:
            state = stack.pop()
            if state < 0 or state in seen:
                continue
            seen.add(state)
            kind, _, out, out2 = states[state]
            if kind == "split":
                stack += (out, out2)
            elif (kind == "start" and at_start) or (kind == "end" and at_end):
                stack.append(out)
        work += len(seen) + 1
        if work > MAX_WORK:
            raise Unsupported("pattern too costly to run on this text")
        return frozenset(seen)

    fresh = closure({program.start}, False, False)  # an unanchored search may begin at every position
    current = closure({program.start}, True, not text)
    cache: dict[tuple[frozenset[int], str], frozenset[int]] = {}
    last = len(text) - 1
    for index, ch in enumerate(text):
        if program.match in current:
            return True
        following = cache.get((current, ch)) if index != last else None
        if following is None:
            stepped = set()
            for state in current:
                kind, chars, out, _ = states[state]
                if kind == "char" and ch in chars:  # type: ignore[operator]
                    stepped.add(out)
            work += len(current)
            if index == last:
                following = closure(stepped | {program.start}, False, True)
            else:
                following = closure(stepped, False, False) | fresh
                if len(cache) > _CACHE_LIMIT:
                    cache.clear()
                cache[(current, ch)] = following
        current = following
    return program.match in current
