"""Diagnostics as the CLI prints them: one line each, `path:line:col: severity: message; hint`."""

from __future__ import annotations

from mpigen.support import profile_rules
from mpigen.support.diagnostics import Diagnostic, Location, Severity, did_you_mean, one_line, printable, raises, with_rule


def test_a_diagnostic_is_one_line_whatever_the_text_it_quotes():
    # Names the profiles wrote, quoted in a message or a hint (did-you-mean choices), and file names may hold line
    # breaks; printed raw, one diagnostic became two lines and the second was no `path:line:col` at all.
    diagnostic = Diagnostic(Location("profiles/a\nb.yaml", 6, 10), "no cluster profile is named 'cpu-lab'",
                            did_you_mean("cpu-lab", ["a\n", "b\r\u2028", "c\x85"]), Severity.WARNING)
    assert diagnostic.format() == ("profiles/a\\x0ab.yaml:6:10: warning: no cluster profile is named 'cpu-lab'; "
                                   "expected one of 'a\\x0a', 'b\\x0d\\u2028', 'c\\x85'")


def test_tabs_and_other_text_are_printed_as_they_are():
    assert Diagnostic(Location("f.yaml"), "a\tb 'ü' {{ x }}").format() == "f.yaml:1:1: error: a\tb 'ü' {{ x }}"


def test_every_character_that_moves_recolours_or_reorders_a_terminal_is_escaped():
    # ESC starts OSC titles and hyperlinks, cursor moves and clear-screen; C1 (U+009B is CSI on its own) and DEL too;
    # bidi controls reorder what the reader sees; a lone surrogate cannot be written out at all.
    text = "a\x1b]0;title\x07b\x1b[2J\x9b\x7f\u202e\u2066\u200f\u061c\ud800\ufffe\uffff\u2028c"
    assert one_line(text) == ("a\\x1b]0;title\\x07b\\x1b[2J\\x9b\\x7f\\u202e\\u2066\\u200f\\u061c\\ud800\\ufffe\\uffff"
                              "\\u2028c")


def test_printable_keeps_the_lines_of_a_text_and_escapes_the_rest():
    assert printable("one\x1b[1A\r\ntwo\t\u202e\n") == "one\\x1b[1A\\x0d\ntwo\t\\u202e\n"


def test_a_check_names_the_rule_of_what_it_raises_and_an_inner_check_its_own():
    @raises("inner")
    def inner() -> list[Diagnostic]:
        return [Diagnostic(Location("f.yaml"), "a")]

    @raises("outer")
    def outer() -> list[Diagnostic]:
        return [*inner(), Diagnostic(Location("f.yaml"), "b")]

    found = outer()
    assert [(d.message, d.rule) for d in found] == [("a", "inner"), ("b", "outer")]
    assert found[0].format() == "f.yaml:1:1: error: a"  # the rule is no part of the text
    assert with_rule("other", found) == found


def test_every_profile_rule_is_described_and_schema_rules_by_their_keyword():
    assert all(text.endswith(".") for text in profile_rules.DESCRIPTIONS.values())
    assert "`required`" in profile_rules.describe(profile_rules.schema_rule("required"))
    assert profile_rules.describe(profile_rules.SCHEMA_QUANTITY) == profile_rules.DESCRIPTIONS["schema/quantity"]
