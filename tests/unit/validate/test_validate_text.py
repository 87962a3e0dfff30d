"""generator/validate/text.py: no key or value of any profile holds a control or bidi character."""

from __future__ import annotations

import pytest
from conftest import PROFILES, TRAIN_JOB

from mpigen.commands.pipeline import compile_profiles
from mpigen.support.diagnostics import Severity

JOB = TRAIN_JOB + "workers: 2\n"  # additions start at line 9


def errors_of(profiles_copy, edits: dict[str, str]) -> list[str]:
    root = profiles_copy(edits)
    result = compile_profiles([root])
    return [d.format().replace(f"{root}/", "") for d in result.diagnostics if d.severity is Severity.ERROR]


@pytest.mark.parametrize("escape, shown", [
    ("\\x7f", "U+007F, a control character"), ("\\0", "U+0000, a control character"),
    ("\\x1b", "U+001B, a control character"), ("\\r", "U+000D, a control character"),
    ("\\x85", "U+0085, a control character"), ("\\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("\\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"), ("\\u200f", "U+200F RIGHT-TO-LEFT MARK"),
    ("\\u061c", "U+061C ARABIC LETTER MARK"), ("\\u2028", "U+2028 LINE SEPARATOR"),
    ("\\ud800", "U+D800, half of a UTF-16 surrogate pair, not a character"),  # was a UnicodeEncodeError
])
def test_a_control_character_in_a_value_is_named_at_its_place(profiles_copy, escape, shown):
    job = JOB.replace("program: [python, train.py]", f'program: [python, "train{escape}.py"]')
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        f"jobs/train.yaml:7:19: error: `program[1]` holds {shown} (character 6), which no manifest may carry; delete it"
        + ("; a line ends with a newline alone" if escape == "\\r" else "")]


def test_tabs_and_newlines_are_allowed_in_values(profiles_copy):
    job = JOB.replace("program: [python, train.py]", 'launcherCommand: [bash, -c, "set -e\\n\\tmpirun hostname\\n"]')
    assert errors_of(profiles_copy, {"jobs/train.yaml": job + 'description: "a\\tb\\nc"\n'}) == []


def test_a_control_character_in_a_key_is_named_at_the_key(profiles_copy):
    """Said once, at the key, whether the key's schema pattern or this pass finds it first."""
    hardware = (PROFILES / "hardware" / "cpu-node.yaml").read_text(encoding="utf-8")
    line = hardware.splitlines().index("  node.kubernetes.io/instance-type: cpu-2s64c") + 1
    hardware = hardware.replace("  node.kubernetes.io/instance-type: cpu-2s64c",
                                '  "node.kubernetes.io/instance-type\\t": cpu-2s64c')
    found = errors_of(profiles_copy, {"hardware/cpu-node.yaml": hardware})
    assert any(e.startswith(f"hardware/cpu-node.yaml:{line}:3: error: ") and "U+0009" in e for e in found), found


def test_a_character_the_schema_already_names_is_reported_once(profiles_copy):
    job = JOB.replace("name: train", 'name: "tra\\x7fin"')
    found = errors_of(profiles_copy, {"jobs/train.yaml": job})
    assert [e.split(": error: ")[0] for e in found] == ["jobs/train.yaml:3:7"], found
    assert "character 4 is U+007F, a control character" in found[0]


def test_a_description_that_reaches_no_manifest_is_checked_too(profiles_copy):
    """One pass over every string: a field is not trusted to stay out of the charts forever."""
    job = JOB + 'description: "look \\u202eleft"\n'
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        "jobs/train.yaml:9:14: error: `description` holds U+202E RIGHT-TO-LEFT OVERRIDE (character 6), which no "
        "manifest may carry; delete it"]


@pytest.mark.parametrize("image, shown", [
    ("nvcr.io/nvidia/pytorch:24.03-py3\\x7f", "character 33 is U+007F, a control character"),
    ("nvcr.io/nvidia/pytorch:24.03-py3\\0", "character 33 is U+0000, a control character"),
    ("nvcr.\\u0456o/nvidia/pytorch:24.03-py3", "character 6 is U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I, "
                                               "which is not ASCII"),
])
def test_an_image_is_printable_ascii(profiles_copy, image, shown):
    job = JOB.replace("image: nvcr.io/nvidia/pytorch:24.03-py3", f'image: "{image}"')
    found = errors_of(profiles_copy, {"jobs/train.yaml": job})
    assert len(found) == 1 and found[0].startswith("jobs/train.yaml:6:8: error: `image` ") and shown in found[0], found
