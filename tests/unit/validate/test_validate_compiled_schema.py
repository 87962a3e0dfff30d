"""Profiles are judged first by the compiled validator (generator/validate/schema.py), and by jsonschema only where it
does not find them valid: the two give the same verdict on every profile of the corpus and the example fleet, and on
profiles mutated at random; a pattern is read by both as JSON Schema means it (`$` is the end of the text, `\\s` is
what Python calls space), and a number jsonschema-rs cannot see (`.inf`) is jsonschema's alone."""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from conftest import PROFILES, REPO, mutated_tree, profile_verdict_disagreements
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

from mpigen.load import ProfileFile, load_paths, to_plain
from mpigen.support.schema_files import CONFIG_SCHEMA_FILE, KIND_SCHEMA_FILES
from mpigen.validate.schema import check_schema, schema_errors, schema_verdicts

EXAMPLES = int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) if "MPIGEN_FUZZ_EXAMPLES" in os.environ else 300
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_127)
CORPUS = REPO / "tests" / "acceptance" / "corpus"


def fleet() -> list[ProfileFile]:
    return load_paths([PROFILES]).documents


def cluster(**changes: Any) -> dict[str, Any]:
    """The example's dgx-lab cluster as plain values, with `changes`."""
    (document,) = [d for d in fleet() if d.kind == "Cluster" and d.data["name"] == "dgx-lab"]
    return {**to_plain(document.data), **changes}


def test_the_plain_cluster_is_valid_both_ways() -> None:
    assert schema_verdicts(KIND_SCHEMA_FILES["Cluster"], cluster()) == (True, True)


def test_a_name_ending_in_a_newline_is_refused_both_ways() -> None:
    """`$` is the end of the text, not a place before a last newline, to the compiled validator too."""
    assert schema_verdicts(KIND_SCHEMA_FILES["Cluster"], cluster(name="dgx-lab\n")) == (False, False)
    assert [(path, keyword) for path, keyword, _ in schema_errors(KIND_SCHEMA_FILES["Cluster"],
                                                                  cluster(name="dgx-lab\n"))] == [(("name",), "pattern")]


@pytest.mark.parametrize("engine", [None, jsonschema_rs.RegexOptions(), jsonschema_rs.FancyRegexOptions()])
def test_jsonschema_rs_s_own_engines_end_dollar_at_the_end_of_the_text(engine: Any) -> None:
    """Neither of the crate's engines takes `$` before a final newline as Python's re does; the compiled validator
    still asks Python's re, with jsonschema's reading of `$`, for `\\s` (below)."""
    validator = jsonschema_rs.Draft202012Validator({"pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?$"}, pattern_options=engine)
    assert validator.is_valid("dgx-lab") and not validator.is_valid("dgx-lab\n")


@pytest.mark.parametrize("space", ["\x85", "\x1c", "\x1f", "\u2028", "\xa0"])
def test_a_url_holding_what_python_calls_space_is_refused_both_ways(space: str) -> None:
    """jsonschema-rs's own `\\s` is ECMA-262's: without jsonschema's reading of the pattern, `[^\\s]+` would take
    U+0085 and U+001C-U+001F, which Python's `\\s` (and so jsonschema) refuses."""
    gitops = {**cluster()["gitops"], "repoURL": f"https://git.example.com/fleet{space}.git"}
    assert schema_verdicts(KIND_SCHEMA_FILES["Cluster"], cluster(gitops=gitops)) == (False, False)


def test_the_crate_alone_would_have_taken_such_a_url() -> None:
    assert jsonschema_rs.Draft202012Validator({"pattern": "^https://[^\\s]+$"}).is_valid("https://x\x85")


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_non_finite_number_is_jsonschema_s_alone(value: float) -> None:
    pools = [{**pool, "nodes": value} for pool in cluster()["nodePools"]]
    compiled, reference = schema_verdicts(KIND_SCHEMA_FILES["Cluster"], cluster(nodePools=pools))
    assert (compiled, reference) == (None, False)


def test_schema_errors_are_jsonschema_s_where_there_are_any() -> None:
    assert schema_errors(KIND_SCHEMA_FILES["Cluster"], cluster()) == []
    assert [(path, keyword) for path, keyword, _ in schema_errors(KIND_SCHEMA_FILES["Cluster"], cluster(extra=1))] == \
        [((), "additionalProperties")]


def test_the_example_fleet_is_valid_both_ways() -> None:
    judged = profile_verdict_disagreements(fleet())
    assert judged.disagreements == [] and judged.refused == 0 and judged.compiled == len(fleet())


def test_every_profile_of_the_corpus_gets_the_same_verdict_both_ways() -> None:
    """Each case's profile files that load: the broken and hostile ones, most refused by their schema."""
    documents = [document for case in sorted(CORPUS.iterdir()) if (case / "profiles").is_dir()
                 for document in load_paths([case / "profiles"]).documents]
    judged = profile_verdict_disagreements(documents)
    assert judged.disagreements == []
    assert judged.compiled > 150 and judged.refused > 50  # the corpus is mostly refused: both ways


def test_the_repository_config_schema_is_compiled_too(tmp_path: Path) -> None:
    assert schema_verdicts(CONFIG_SCHEMA_FILE, {"profiles": "profiles"})[0] is not None
    assert schema_verdicts(CONFIG_SCHEMA_FILE, {"profiles": 5}) == (False, False)


def test_jsonschema_is_not_even_loaded_where_every_profile_is_valid() -> None:
    """The example fleet validates without jsonschema: the compiled validator found every profile valid."""
    code = ("import sys\nfrom mpigen.commands.cli import main\n"
            f"try:\n    main(['validate', {str(PROFILES)!r}])\nexcept SystemExit as done:\n    assert done.code == 0\n"
            "print('jsonschema' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines()[-1] == "False", result.stdout + result.stderr


def test_a_broken_profile_still_gets_jsonschema_s_words() -> None:
    (document,) = [d for d in fleet() if d.kind == "Cluster"][:1]
    broken = copy.deepcopy(document)
    broken.data["nodePools"][0]["nodes"] = "two"
    found, sound = check_schema(broken)
    assert not sound and [d.message for d in found] == ["`nodePools[0].nodes` must be a whole number, not 'two'"]


# An in-process fuzzer: the example fleet's profiles, as plain values, with values replaced, removed or added.
VALUES = [None, 0, -1, 1.5, 2**31, 2**63, 10**400, math.inf, -math.inf, math.nan, True, False, "", "x", "16Gi",
          "500m", "a\n", "dgx-lab\n", "dgx-lab", "1.31", "1e3", "é", "a b", "https://x\x85", "https://x.example/a",
          "\u202e", [], {}, [None], {"a": None}, "a" * 300, "{{ .Values.x }}", "-lab", "Lab", "/dev/shm", "8Gi", 4.0]
values = st.sampled_from(VALUES).map(copy.deepcopy)  # a fresh one each time: a mutation may change it


@st.composite
def mutated_profiles(draw: st.DrawFn) -> tuple[str, Any]:
    kind, data = draw(st.sampled_from([d for d in fleet_plain() if d[0] in KIND_SCHEMA_FILES]))
    return kind, mutated_tree(draw, data, values, ["x", "name", "nodes", "cpu", "labels", "extends", "rails"])


_PLAIN: list[tuple[str, Any]] = []


def fleet_plain() -> list[tuple[str, Any]]:
    if not _PLAIN:
        _PLAIN.extend((str(d.kind), to_plain(d.data)) for d in fleet())
    return _PLAIN


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=mutated_profiles())
def test_mutated_profiles_get_the_same_verdict_both_ways(profile: tuple[str, Any]) -> None:
    kind, data = profile
    compiled, reference = schema_verdicts(KIND_SCHEMA_FILES[kind], data)
    assert compiled in (None, reference)
    event(f"{'asked' if compiled is not None else 'not asked'}, {'valid' if reference else 'refused'}")
