"""Every profile checked: each on its own (both cores share them), then the references between those sound
enough to be followed."""

from __future__ import annotations

from collections.abc import Sequence

from mpigen.load import ProfileFile, Unreadable
from mpigen.support.diagnostics import Diagnostic, sort_diagnostics
from mpigen.support.parallel import split_map
from mpigen.support.progress import Tally
from mpigen.validate.references import check_references
from mpigen.validate.schema import check_kind, check_schema
from mpigen.validate.secrets import check_secrets
from mpigen.validate.security import check_job_security
from mpigen.validate.text import check_characters


def validate(documents: list[ProfileFile], unreadable: Sequence[Unreadable] = (),
             tally: Tally | None = None) -> list[Diagnostic]:
    """Every problem of the profiles, each said once; `tally` hears of the profiles checked on their own."""
    found: list[Diagnostic] = []
    valid: list[ProfileFile] = []
    invalid: list[ProfileFile] = []
    for document, (problems, sound) in zip(documents, split_map(_check_each, documents, tally=tally), strict=True):
        found.extend(problems)
        (valid if sound else invalid).append(document)
    found.extend(check_references(valid, invalid, unreadable))
    # A value a profile inherits through `extends` is checked in its own file and again in every profile
    # that extends it, at the same place with the same words: say it once.
    return sort_diagnostics(dict.fromkeys(found))


def _check_each(documents: Sequence[ProfileFile]) -> list[tuple[list[Diagnostic], bool]]:
    """Each profile on its own: its problems, and whether it is sound enough for the cross-references. Profiles
    are independent here, so both cores share them (generator/support/parallel.py)."""
    checked = []
    for document in documents:
        problems = check_kind(document)
        sound = not problems
        if sound:
            problems, sound = check_schema(document)
        if sound:
            problems += check_job_security(document)
        # A character no manifest may carry, in any string; where the schema already refused the value (a name
        # says which character breaks its pattern), once.
        taken = {problem.location for problem in problems}
        problems += [problem for problem in check_characters(document) if problem.location not in taken]
        problems += check_secrets(document)  # whatever else is wrong with the profile
        checked.append((problems, sound))
    return checked
