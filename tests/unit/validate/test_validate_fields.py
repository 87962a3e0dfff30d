"""generator/validate/fields.py: checks and names of single fields that several profile kinds share."""

from __future__ import annotations

from mpigen.validate import schema, secrets, text
from mpigen.validate.fields import field_name


def test_a_field_is_named_as_its_path_reads_in_the_profile():
    assert field_name(("nodePools", 0, "taints")) == "`nodePools[0].taints`"
    assert field_name(["program", 1]) == "`program[1]`"
    assert field_name(("env", "HF_TOKEN")) == "`env.HF_TOKEN`"
    assert field_name(()) == "the profile"


def test_every_check_names_a_field_with_the_one_formatter():
    """The schema, character and secret checks once each wrote their own; a message names a field one way."""
    assert schema.field_name is secrets.field_name is text.field_name is field_name
