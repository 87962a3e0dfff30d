"""Stage 1: files that are not one YAML mapping are refused with `path:line:col`, never a traceback.

Expected lines and columns are counted by hand from the bytes each test writes.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from conftest import PROFILES, REPO, run_helm, run_mpigen, snapshot

from mpigen.load import MAX_FILE_BYTES, load_bytes, load_paths, to_plain
from mpigen.load.catalogue import expand_hardware
from mpigen.load.files import _guess_identity
from mpigen.load.problems import _reused_anchor
from mpigen.readback.kubeyaml import load_all as kube_load_all
from mpigen.validate import validate

pytestmark = pytest.mark.usefixtures("parse_every_time")  # tests of loading parse each file (conftest.ParseMemo)

PI = (PROFILES / "jobs" / "pi.yaml").read_bytes()
assert PI.splitlines()[9] == b"workers: 2"


def load_one(raw: bytes) -> list[str]:
    """Diagnostics of one file's bytes, formatted, with the file called `f.yaml`."""
    document, diagnostics = load_bytes(raw, "f.yaml", "profiles/f.yaml")
    assert (document is None) == bool(diagnostics)
    return [d.format() for d in diagnostics]


def check_folder(root: Path) -> list[str]:
    loaded = load_paths([root])
    expanded = expand_hardware(loaded.documents, loaded.unreadable)  # as the pipeline does, before validate
    return [d.format() for d in loaded.diagnostics + expanded.diagnostics
            + validate(expanded.documents, [*loaded.unreadable, *expanded.unresolved])]


# --- not YAML -------------------------------------------------------------------------------------------------------


def test_mapping_value_where_none_is_allowed():
    raw = b"apiVersion: mpigen/v1alpha1\nkind: Job\nname: train\nimage: repo:tag: x\n"
    # Line 4: `image: ` is 7 columns, `repo:tag` 8 to 15, the offending `:` column 16.
    assert load_one(raw) == ["f.yaml:4:16: error: not valid YAML: mapping values are not allowed here; "
                             "check the indentation and quoting on this line"]


def test_unclosed_flow_list_points_at_its_bracket():
    raw = b"apiVersion: mpigen/v1alpha1\nkind: Job\nname: train\nprogram: [python, train.py\n"
    # Line 4: `program: ` is 9 columns, the `[` column 10; the parser only notices at the end of the file.
    assert load_one(raw) == ["f.yaml:4:10: error: not valid YAML: this `[` is never closed; close it with `]`"]


def test_flow_list_left_open_before_the_next_key_names_where_it_opened():
    raw = b"kind: Job\nprogram: [python, train.py\nworkers: 3\n"
    # `train.py workers` is one plain scalar; its `:` (line 3, column 8) cannot follow it inside the list.
    assert load_one(raw) == ["f.yaml:3:8: error: not valid YAML: expected ',' or ']', but got ':'; close the `[` of "
                             "line 2, column 10 with `]` before this, or quote the value if it holds `:`, `,` or "
                             "brackets"]


@pytest.mark.parametrize("quote", [b'"', b"'"])
def test_unclosed_quote_points_at_the_quote(quote):
    raw = b"kind: Job\nimage: " + quote + b"nvcr.io/x\nworkers: 2\n"
    assert load_one(raw) == ["f.yaml:2:8: error: not valid YAML: this quote is never closed; add the closing quote"]


def test_indentation_that_matches_no_block_is_said_in_words():
    raw = b"nodePools:\n  - name: cpu\n   hardware: x\n"
    # Line 3's key is indented 3, the item's keys 4: the parser's "expected <block end>" at column 4.
    assert load_one(raw) == ["f.yaml:3:4: error: not valid YAML: this line is indented differently from the lines "
                             "before it; indent the keys of one mapping, and the `-` of one list, by the same number "
                             "of spaces"]


def test_undefined_alias():
    assert load_one(b"kind: Job\nprogram: *cmd\n") == [
        "f.yaml:2:10: error: not valid YAML: found undefined alias 'cmd'; define the anchor (`&name`) on a value "
        "before the alias, or write the value out"]


def test_tab_indentation():
    raw = b"apiVersion: mpigen/v1alpha1\nkind: Hardware\nname: box\ncpu:\n\tsockets: 2\n"
    assert load_one(raw) == ["f.yaml:5:1: error: a tab character is not allowed here: YAML indents with spaces; "
                             "replace the tab with spaces"]


def test_tab_after_spaces_points_at_the_tab():
    raw = b"cpu:\n  \tsockets: 2\n"
    assert load_one(raw) == ["f.yaml:2:3: error: a tab character is not allowed here: YAML indents with spaces; "
                             "replace the tab with spaces"]


def test_duplicate_key_points_at_the_second():
    raw = b"apiVersion: mpigen/v1alpha1\nkind: Job\nname: train\nworkers: 2\nimage: x\nworkers: 3\n"
    assert load_one(raw) == ['f.yaml:6:1: error: found duplicate key "workers" with value "3" (original value: "2"): '
                             "each key may appear once; remove or rename one of them"]


def test_nested_duplicate_key_points_at_the_second():
    raw = b"kind: Job\nresources:\n  cpu: \"1\"\n  memory: 1Gi\n  cpu: \"2\"\n"
    [line] = load_one(raw)
    assert line.startswith('f.yaml:5:3: error: found duplicate key "cpu"'), line
    assert "each key may appear once" in line


@pytest.mark.parametrize("raw", [b"", b"\n\n", b"# only a comment\n# and another\n", b"---\n", b"   \n"])
def test_empty_file(raw):
    assert load_one(raw) == ["f.yaml:1:1: error: file is empty; a profile needs at least apiVersion, kind and name"]


def test_two_documents_point_at_the_second():
    raw = b"apiVersion: mpigen/v1alpha1\nkind: Job\nname: a\n---\napiVersion: mpigen/v1alpha1\nkind: Job\nname: b\n"
    assert load_one(raw) == ["f.yaml:5:1: error: file holds 2 YAML documents; "
                             "put one profile in each file and remove the `---` separators"]


def test_three_documents_are_counted():
    [line] = load_one(b"a: 1\n---\nb: 2\n---\nc: 3\n")
    assert line.startswith("f.yaml:3:1: error: file holds 3 YAML documents;"), line


@pytest.mark.parametrize("raw", [b"---\n" + PI, PI + b"---\n", PI + b"...\n"])
def test_document_markers_around_one_profile_are_fine(raw):
    assert load_one(raw) == []


def test_invalid_utf8_points_at_the_byte():
    raw = b"apiVersion: mpigen/v1alpha1\nkind: Job\nname: caf\xe9\n"
    # Line 3: `name: caf` is 9 bytes, the bad byte is column 10.
    assert load_one(raw) == ["f.yaml:3:10: error: byte 0xe9 is not valid UTF-8; save the file as UTF-8"]


@pytest.mark.parametrize(("raw", "where", "code", "escape"), [
    (b"\x00" + PI, "1:1", "0000", "\\x00"),
    (PI.replace(b"workers: 2", b"workers: \x1b2"), "10:10", "001B", "\\x1b"),
    (PI.replace(b"image: ", b'image: "\xef\xbf\xbe'), "9:9", "FFFE", "\\ufffe"),
])
def test_a_character_yaml_forbids_is_pointed_at_on_one_line(raw, where, code, escape):
    # The reader refuses these before any mark exists: its position is counted into line and column here.
    assert load_one(raw) == [f"f.yaml:{where}: error: character U+{code} is not allowed in YAML; delete it, or write "
                             f'it as the escape "{escape}" inside a double-quoted string']


def test_lines_end_where_yaml_ends_them_and_columns_count_characters():
    # A lone CR ends a line for YAML (and for the positions the parser gives), `é` is one column.
    assert load_one(b"a: b\rc: \"\x00\"\n") == [
        'f.yaml:2:5: error: character U+0000 is not allowed in YAML; delete it, or write it as the escape "\\x00" '
        "inside a double-quoted string"]
    assert load_one("a: b\r\nc: d\re: café".encode() + b"\xff\n") == [
        "f.yaml:3:8: error: byte 0xff is not valid UTF-8; save the file as UTF-8"]
    # YAML 1.2 ends no line at NEL or U+2028: the parser's marks count them as characters of the line.
    assert load_one("a: 'b\u2028c\x85d'\x00".encode()) == [
        'f.yaml:1:11: error: character U+0000 is not allowed in YAML; delete it, or write it as the escape "\\x00" '
        "inside a double-quoted string"]


def test_utf16_file_is_refused_at_its_first_byte():
    raw = b"\xff\xfe" + "apiVersion: mpigen/v1alpha1\n".encode("utf-16-le")
    assert load_one(raw) == ["f.yaml:1:1: error: byte 0xff is not valid UTF-8; save the file as UTF-8"]


def test_utf8_byte_order_mark_is_accepted_and_does_not_shift_columns(profiles_copy):
    root = profiles_copy()
    (root / "jobs" / "pi.yaml").write_bytes(b"\xef\xbb\xbf" + PI.replace(b"workers: 2", b'workers: "2"'))
    assert check_folder(root) == [f"{root}/jobs/pi.yaml:10:10: error: `workers` must be a whole number, not '2'; "
                                  "Worker pods. Give this or `totalGpus`."]


@pytest.mark.parametrize("raw", [b"- apiVersion: mpigen/v1alpha1\n- kind: Job\n", b"just a string\n", b"42\n"])
def test_profile_that_is_not_a_mapping(raw):
    assert load_one(raw) == ["f.yaml:1:1: error: a profile must be a mapping of keys to values; "
                             "start with `apiVersion: mpigen/v1alpha1` and `kind:`"]


@pytest.mark.parametrize(("raw", "line"), [
    (b"kind: Job\nimage: !secret nvcr.io/x\n", "f.yaml:2:8: error: YAML tag `!secret` is not allowed in a profile"),
    (b"kind: Job\nprogram: !!python/object/apply:os.system [\"touch pwned\"]\n",
     "f.yaml:2:10: error: YAML tag `!!python/object/apply:os.system` is not allowed in a profile"),
    (b"kind: Job\nprogram: [a, !!binary aGVsbG8=]\n", "f.yaml:2:14: error: YAML tag `!!binary` is not allowed in a profile"),
    (b"kind: Job\nenv:\n  A: !!str 2\n", "f.yaml:3:6: error: YAML tag `!!str` is not allowed in a profile"),
    (b"kind: Job\nenv: !!set {a}\n", "f.yaml:2:6: error: YAML tag `!!set` is not allowed in a profile"),
])
def test_tagged_values_are_refused_where_they_stand(raw, line):
    assert load_one(raw) == [f"{line}; remove the tag; quote the value if it must be a string"]


def test_core_tags_that_give_plain_values_are_fine():
    document, diagnostics = load_bytes(b"a: !!int '3'\nb: !!map {c: !!float '1.5'}\n", "f.yaml", "f.yaml")
    assert diagnostics == [] and document is not None and document.data == {"a": 3, "b": {"c": 1.5}}


@pytest.mark.parametrize(("raw", "where"), [(b"kind: Job\n? [workers, totalGpus]\n: 2\n", "2:3"),
                                           (b"kind: Job\nenv: {? {a: 1}: 2}\n", "2:9")])
def test_a_key_that_is_a_list_or_mapping_is_refused_at_the_key(raw, where):
    # `? [` puts the key's `[` at column 3; in `env: {? {a: 1}: 2}` the key's `{` is column 9.
    assert load_one(raw) == [f"f.yaml:{where}: error: a key must be a plain name, not a list, mapping or tagged value; "
                             "write the key as a word, e.g. `workers:`"]


def test_an_empty_value_is_located_at_its_key():
    document, _ = load_bytes(b"kind: Job\nimage:\nworkers: 2\nenv:\n  A:\n", "f.yaml", "f.yaml")
    assert str(document.location("image")) == "f.yaml:2:1"
    assert str(document.location("env", "A")) == "f.yaml:5:3"
    assert str(document.location("workers")) == "f.yaml:3:10"


def test_a_key_written_as_a_number_is_found_by_its_string():
    document, _ = load_bytes(b"env:\n  1: x\n  B: y\n", "f.yaml", "f.yaml")
    assert str(document.location("env", "1", at_key=True)) == "f.yaml:2:3"


# --- size, aliases, nesting -----------------------------------------------------------------------------------------


def test_file_over_one_mebibyte():
    raw = PI + b"#" * (MAX_FILE_BYTES + 1 - len(PI))
    assert len(raw) == 1024 * 1024 + 1
    assert load_one(raw) == ["f.yaml:1:1: error: file is 1048577 bytes, more than the 1048576 a profile may have; "
                             "split it: one hardware, cluster or job per file"]


def test_file_of_exactly_one_mebibyte_is_read():
    raw = PI + b"#" * (MAX_FILE_BYTES - len(PI))
    assert len(raw) == 1024 * 1024
    assert load_one(raw) == []


def _billion_laughs() -> bytes:
    lines = [b'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    previous = "a"
    for name in "bcdefghi":
        refs = ", ".join([f"*{previous}"] * 9)
        lines.append(f"{name}: &{name} [{refs}]".encode())
        previous = name
    return b"\n".join(lines) + b"\n"


def test_alias_bomb_is_refused_quickly():
    raw = _billion_laughs()
    assert len(raw) < 1000  # 9**9 strings once expanded
    started = time.perf_counter()
    result = load_one(raw)
    elapsed = time.perf_counter() - started
    # At the first key whose value passes the budget: `f` (line 6), its anchor `&f` at column 4.
    assert result == ["f.yaml:6:4: error: YAML aliases expand to more than 100000 nodes; "
                      "write the values out instead of nesting anchors and aliases"]
    assert elapsed < 2, f"took {elapsed:.2f} s"


def test_alias_bomb_in_a_profile_folder_is_refused_before_validation(profiles_copy):
    root = profiles_copy()
    (root / "jobs" / "bomb.yaml").write_bytes(b"apiVersion: mpigen/v1alpha1\nkind: Job\n" + _billion_laughs())
    started = time.perf_counter()
    result = check_folder(root)
    assert time.perf_counter() - started < 5
    assert result == [f"{root}/jobs/bomb.yaml:8:4: error: YAML aliases expand to more than 100000 nodes; "
                      "write the values out instead of nesting anchors and aliases"]


@pytest.mark.parametrize(("raw", "expected"), [
    (PI + b"description: &cmd a\nlauncherCommand: &cmd [b]\n",
     "f.yaml:26:18: error: anchor &cmd is defined a second time (first on line 25); give each anchor its own name"),
    (b"%YAML 1.1\n---\n" + PI.replace(b"workers: 2", b"workers: 2e0"),
     "f.yaml:12:10: error: the number 2e0 has no `.` in its mantissa, which YAML 1.1 requires; write it with a dot "
     "(e.g. 1.0e3), or remove the `%YAML 1.1` line"),
])
def test_what_the_parser_only_warns_about_is_a_diagnostic_not_a_printed_warning(raw, expected):
    # Found by the fuzzer: ruamel warns (a Python warning, printed raw over several lines beside the diagnostics by
    # the real command) and reads the file anyway; the alias then means the last anchor of that name.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert load_one(raw) == [expected]
    assert [str(w.message) for w in caught] == []


def test_ordinary_anchors_and_aliases_still_work(profiles_copy):
    root = profiles_copy()
    text = PI.replace(b'resources:\n  cpu: "1"\n  memory: 1Gi\n', b'resources: &r\n  cpu: "1"\n  memory: 1Gi\n')
    text = text.replace(b'launcher:\n  resources:\n    cpu: "1"\n    memory: 1Gi\n', b"launcher:\n  resources: *r\n")
    assert b"*r" in text and b"&r" in text
    (root / "jobs" / "pi.yaml").write_bytes(text)
    assert check_folder(root) == []


def test_deep_nesting_is_refused():
    started = time.perf_counter()
    result = load_one(b"a: " + b"[" * 600 + b"\n")
    assert time.perf_counter() - started < 5
    # `a: ` is 3 columns: the 65th `[` is column 68.
    assert result == ["f.yaml:1:68: error: brackets nest more than 64 deep; a profile needs no such nesting"]


@pytest.mark.parametrize(("raw", "where"), [
    (b"program:\n  " + b"- " * 5000 + b"x\n", "2:129"),  # `program` 1 level, the item's indentation 1, 63 `- ` more
    (b"".join(b" " * i + b"k%d:\n" % i for i in range(300)), "65:65"),  # each key one space deeper
])
def test_deep_block_nesting_is_refused_before_the_parser_runs_out_of_stack(raw, where):
    started = time.perf_counter()
    result = load_one(raw)
    assert time.perf_counter() - started < 5
    assert result == [f"f.yaml:{where}: error: lists and mappings nest more than 64 deep; "
                      "a profile needs no such nesting"]


def test_brackets_and_hashes_inside_quotes_and_comments_do_not_count():
    raw = b"kind: Job\nprogram: ['" + b"[" * 100 + b"', \"" + b"{" * 100 + b"\"]  # " + b"[" * 100 + b"\n"
    assert load_one(raw) == []


@pytest.mark.parametrize("raw", [
    b'a: "\\"' + b"[" * 100 + b'"\n',  # an escaped double quote does not end the string
    b"a: 'it''s " + b"{" * 100 + b"'\n",  # nor does a doubled single quote
    b'a: "x\\\n  \\"' + b"[" * 100 + b'"\n',  # a string continued on the next line
])
def test_escaped_quotes_do_not_end_a_string_for_the_nesting_count(raw):
    """Once counted as the end of the string, what follows an escaped quote was counted as brackets: a valid
    profile string of `{{\\"` repeated was refused as nesting too deep."""
    assert load_one(b"kind: Job\n" + raw) == []


def test_an_escaped_backslash_does_not_escape_the_quote_after_it():
    assert load_one(b'a: "\\\\"\nb: ' + b"[" * 100 + b"\n") == [
        "f.yaml:2:68: error: brackets nest more than 64 deep; a profile needs no such nesting"]


# --- which files are read -------------------------------------------------------------------------------------------


def test_symlink_leading_outside_the_profiles_folder(profiles_copy, tmp_path):
    root = profiles_copy()
    outside = tmp_path / "elsewhere" / "secret.yaml"
    outside.parent.mkdir()
    outside.write_bytes(PI.replace(b"name: pi", b"name: secret"))
    link = root / "jobs" / "secret.yaml"
    link.symlink_to(outside)
    assert check_folder(root) == [f"{link}:1:1: error: is a link that leads outside the profiles folder; "
                                  "copy the profiles into the folder instead of linking to them"]


def test_symlinked_folder_leading_outside_is_reported(profiles_copy, tmp_path):
    root = profiles_copy()
    outside = tmp_path / "shared-jobs"
    outside.mkdir()
    (outside / "secret.yaml").write_bytes(PI.replace(b"name: pi", b"name: secret"))
    link = root / "shared"
    link.symlink_to(outside, target_is_directory=True)
    result = check_folder(root)
    assert len(result) == 1, result
    assert result[0].startswith(f"{link}"), result
    assert "leads outside the profiles folder" in result[0]


def test_dangling_symlink_inside_the_folder(profiles_copy):
    root = profiles_copy()
    link = root / "jobs" / "gone.yaml"
    link.symlink_to(root / "jobs" / "missing.yaml")
    assert check_folder(root) == [f"{link}:1:1: error: is a link to '{root}/jobs/missing.yaml', which does not exist; "
                                  "point the link at a profile, or remove it"]


def test_links_that_point_at_each_other_are_reported_not_a_crash(profiles_copy):
    root = profiles_copy()
    (root / "jobs" / "a.yaml").symlink_to("b.yaml")
    (root / "jobs" / "b.yaml").symlink_to("a.yaml")
    (root / "jobs" / "self.yaml").symlink_to("self.yaml")
    circle = "is a link that leads round in a circle (to itself, or through links that point at each other); " \
             "point the link at a profile, or remove it"
    assert check_folder(root) == [f"{root}/jobs/{name}.yaml:1:1: error: {circle}" for name in ("a", "b", "self")]


def test_named_pipe_is_refused_instead_of_blocking(profiles_copy):
    root = profiles_copy()
    pipe = root / "jobs" / "pipe.yaml"
    os.mkfifo(pipe)
    result = subprocess.run([sys.executable, "-m", "mpigen", "validate", str(root)], capture_output=True,
                            text=True, timeout=3, cwd=REPO)
    assert result.returncode == 1
    assert f"{pipe}:1:1: error:" in result.stderr


def test_non_profile_files_are_ignored(profiles_copy):
    root = profiles_copy()
    garbage = "{{{ not: yaml: at: all\n\t- ]"
    for name in ("README.md", "notes.txt", "jobs/pi.yaml.bak", "jobs/.pi.yaml", "jobs/pi.yaml~", "jobs/pi.json",
                 ".drafts/job.yaml", "jobs/.cache/x.yaml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(garbage, encoding="utf-8")
    loaded = load_paths([root])
    assert loaded.diagnostics == []
    assert [d.source for d in loaded.documents] == [
        "profiles/clusters/cpu-lab.yaml", "profiles/clusters/dgx-lab.yaml", "profiles/clusters/dgx-pod.yaml",
        "profiles/clusters/gb200-rack.yaml", "profiles/clusters/h100-dra.yaml",
        "profiles/clusters/kai-lab.yaml", "profiles/clusters/kueue-lab.yaml", "profiles/clusters/netapp-lab.yaml",
        "profiles/clusters/roce-lab.yaml",
        "profiles/clusters/volcano-lab.yaml",
        "profiles/hardware/cpu-node.yaml", "profiles/hardware/dgx-1-roce.yaml", "profiles/hardware/dgx-1.yaml",
        "profiles/hardware/dgx-h100-ib.yaml", "profiles/hardware/gb200-ib.yaml",
        "profiles/jobs/allreduce-vcjob.yaml", "profiles/jobs/cpu-pi.yaml", "profiles/jobs/kai-allreduce.yaml",
        "profiles/jobs/kai-research.yaml", "profiles/jobs/kueue-pi.yaml",
        "profiles/jobs/language-bert.yaml", "profiles/jobs/llm-pretrain.yaml", "profiles/jobs/mnnvl-allreduce.yaml",
        "profiles/jobs/netapp-resnet50.yaml",
        "profiles/jobs/pi.yaml", "profiles/jobs/resnet50-dgx.yaml", "profiles/jobs/resnet50-trainjob.yaml",
        "profiles/jobs/tensorflow-benchmarks.yaml",
        "profiles/jobs/vision-resnet50.yaml", "profiles/jobs/volcano-allreduce.yaml"]


def test_yml_files_are_profiles_too(profiles_copy):
    root = profiles_copy()
    (root / "jobs" / "extra.yml").write_bytes(b"apiVersion: mpigen/v1alpha1\nkind: Job\nname: [\n")
    result = check_folder(root)
    assert len(result) == 1 and result[0].startswith(f"{root}/jobs/extra.yml:4:1: error: not valid YAML"), result


def test_missing_path_is_reported_and_the_rest_still_read(tmp_path):
    missing = tmp_path / "nope"
    loaded = load_paths([missing, PROFILES])
    assert [d.format() for d in loaded.diagnostics] == [
        f"{missing}:1:1: error: no such file or folder; give the profiles folder, e.g. `mpigen validate profiles`"]
    assert len(loaded.documents) == 30


def test_a_single_file_can_be_given():
    loaded = load_paths([PROFILES / "hardware" / "dgx-1.yaml"])
    assert loaded.diagnostics == []
    [document] = loaded.documents
    assert document.source == "hardware/dgx-1.yaml"
    assert document.path == str(PROFILES / "hardware" / "dgx-1.yaml")


def test_files_are_read_in_path_order_and_errors_of_several_files_all_come_back(profiles_copy):
    root = profiles_copy({"jobs/zz.yaml": "a: [\n", "clusters/aa.yaml": "", "hardware/mm.yaml": "- x\n"})
    result = [line.split(": error: ")[0] for line in check_folder(root)]
    assert result == [f"{root}/clusters/aa.yaml:1:1", f"{root}/hardware/mm.yaml:1:1", f"{root}/jobs/zz.yaml:2:1"]


def test_token_is_the_number_as_written_also_inside_a_flow_list():
    document, _ = load_bytes(b"a: [-np, 16]\nb: {x: 1.30}\nc: 1.30  # minor\n", "f.yaml", "f.yaml")
    assert [document.token_at(document.location(*path)) for path in (("a", 1), ("b", "x"), ("c",))] == [
        "16", "1.30", "1.30"]


def test_positions_of_keys_and_values():
    document, diagnostics = load_bytes(PI, "pi.yaml", "profiles/pi.yaml")
    assert diagnostics == [] and document is not None
    assert str(document.location("workers")) == "pi.yaml:10:10"
    assert str(document.location("workers", at_key=True)) == "pi.yaml:10:1"
    assert str(document.location("launcher", "resources", "memory")) == "pi.yaml:22:13"
    assert str(document.location("workerCommand", 2)) == "pi.yaml:15:38"
    # A path that does not exist stops at the deepest node that does.
    assert str(document.location("launcher", "resources", "nope")) == "pi.yaml:21:5"
    assert str(document.location()) == "pi.yaml:3:1"


# --- merge keys and implicit typing ---------------------------------------------------------------

MERGED_JOB = """\
apiVersion: mpigen/v1alpha1
kind: Job
name: merged
<<: {cluster: dgx-lab, pool: dgx, workers: -1}
env:
  <<: {NCCL_DEBUG: INFO}
  STAMP: 2024-01-01 10:00:00
"""


def test_a_merged_key_is_located_where_its_value_was_written():
    document, diagnostics = load_bytes(MERGED_JOB.encode(), "job.yaml", "profiles/job.yaml")
    assert not diagnostics and document is not None
    assert document.data["workers"] == -1
    workers = document.location("workers")
    assert (workers.line, workers.column) == (4, 44)  # the -1 inside the merged mapping, not 1:1 nor a KeyError
    debug = document.location("env", "NCCL_DEBUG")
    assert (debug.line, debug.column) == (6, 20)


def test_a_timestamp_keeps_the_text_the_user_wrote():
    document, _ = load_bytes(MERGED_JOB.encode(), "job.yaml", "profiles/job.yaml")
    assert document is not None
    assert document.data["env"]["STAMP"] == "2024-01-01 10:00:00"  # was datetime -> "2024-01-01T10:00:00"


def test_token_of_a_line_of_spaces_is_linear():
    """`ProfileFile.token` once split with `\\s+#|\\s*$`, retried from each space: quadratic on a long line."""
    line = "x" + " " * 1_000_000 + "y"
    document, _ = load_bytes(b"a: 1\n", "f.yaml", "p/f.yaml")
    assert document is not None
    hostile = type(document)(document.path, document.source, document.data, (line,))
    assert hostile.token(1, 1) == line
    assert hostile.token(1, 1 + 1) == "y"


# --- YAML's implicit types: the text a string field was given is the text the cluster gets ---------------------

KEPT_ENV = {"STAMP": "2024-01-01 10:00:00", "DAY": "2001-12-14", "ZONED": "2001-12-14t21:59:43.10-05:00",
            "SPACED": "2001-12-14 21:59:43.10 -5", "EQUALS": "=", "ARROWS": "<<", "true": "yes"}


def test_values_yaml_types_by_their_look_reach_the_cluster_as_written(helm, profiles_copy, tmp_path):
    """Unquoted timestamps, `=` and `<<` where a string belongs, and a key that looks like a boolean, through the
    real render and real Helm, read back the way Kubernetes reads manifests (go-yaml, timestamps as strings)."""
    pi = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    env = "".join(f"  {name}: {value}\n" for name, value in KEPT_ENV.items())
    pi = pi.replace("program: [/home/mpiuser/pi]", "program: [/home/mpiuser/pi, 2024-01-01 10:00:00, 2001-12-14]")
    root = profiles_copy({"jobs/pi.yaml": pi + "env:\n" + env})
    out = tmp_path / "charts"
    result = run_mpigen("render", root, "-o", out)
    assert result.returncode == 0, result.stderr
    rendered = run_helm(helm, "template", "pi", out / "dgx-lab" / "jobs" / "pi", "--namespace", "hpc").stdout
    mpijob = next(d for d in kube_load_all(rendered) if d and d["kind"] == "MPIJob")
    launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    given = {e["name"]: e.get("value") for e in launcher["env"] if e["name"] in KEPT_ENV}
    assert given == KEPT_ENV  # was 2024-01-01T10:00:00, 2001-12-14T21:59:43.100000-05:00, ..., and "True"
    assert launcher["command"][-3:] == ["/home/mpiuser/pi", "2024-01-01 10:00:00", "2001-12-14"]


def test_keys_are_the_text_written():
    raw = b"env:\n  true: a\n  1e3: b\n  ~: c\n  0x1F: d\n  2024-01-01: e\n  null: f\n  1_000: g\n  'q': h\n"
    document, diagnostics = load_bytes(raw, "f.yaml", "p/f.yaml")
    assert diagnostics == [] and document is not None
    assert list(to_plain(document.data)["env"]) == ["true", "1e3", "~", "0x1F", "2024-01-01", "null", "1_000", "q"]
    assert str(document.location("env", "1e3", at_key=True)) == "f.yaml:3:3"


def test_yaml_1_1_keys_are_the_text_written_too():
    document, diagnostics = load_bytes(b"%YAML 1.1\n---\nlabels: {yes: 1, on: 2, 0777: 3}\n", "f.yaml", "p/f.yaml")
    assert diagnostics == [] and document is not None
    assert list(document.data["labels"]) == ["yes", "on", "0777"]  # were True, True (a duplicate) and 511


@pytest.mark.parametrize(("written", "plain"), [
    ("&ro true", True),  # ruamel's ScalarBoolean, an int: was 1, which the schema refused as not a boolean
    ("4.0", 4), ("1e3", 1000), ("-2.0e1", -20), ("2.5", 2.5), ("1e300", 1e300), (".inf", math.inf), ("0x1F", 31),
    ("0o17", 15), ("1_000", 1000), ("+5", 5),
])
def test_numbers_and_booleans_are_plain_json_values(written, plain):
    """A whole number written as a float is that integer (the charts would say `4.0`, which Kubernetes refuses
    for an integer); one too large for a float to hold exactly stays a float, for the schema's maximum."""
    document, diagnostics = load_bytes(f"v: {written}\n".encode(), "f.yaml", "p/f.yaml")
    assert diagnostics == [] and document is not None
    value = to_plain(document.data)["v"]
    assert value == plain and type(value) is type(plain)


def test_a_whole_float_in_a_count_gives_the_charts_of_the_integer(profiles_copy, tmp_path):
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    assert cluster.count("nodes: 4\n") == 1
    root = profiles_copy({"clusters/dgx-lab.yaml": cluster.replace("nodes: 4\n", "nodes: 4.0\n")})
    written, floated = tmp_path / "written", tmp_path / "floated"
    assert run_mpigen("render", PROFILES, "-o", written).returncode == 0
    assert run_mpigen("render", root, "-o", floated).returncode == 0
    assert snapshot(floated) == snapshot(written)  # was `maximum: 4.0` and "at most 4.0" in resnet50-dgx's chart


@pytest.mark.parametrize(("line", "token"), [
    ("v: &n 1.10", "1.10"), ("v: !!float 1.10  # c", "1.10"), ("v: &n !!float 1.10", "1.10"),
    ("v: !!float &n 1.10", "1.10"), ("v: [&n 1.10, 2]", "1.10"), ("v: *n", ""), ('v: "1.10"', ""), ("v: ", ""),
])
def test_token_is_the_plain_text_without_anchor_or_tag(line, token):
    """The schema's hint `quote it: "..."` quotes this: `&n 1.10` would have it quote the anchor too."""
    document, _ = load_bytes(b"a: 1\n", "f.yaml", "p/f.yaml")
    assert document is not None
    column = line.index(" ") + 2 if "[" not in line else line.index("[") + 2
    assert type(document)(document.path, document.source, document.data, (line,)).token(1, column) == token


# --- anchors that hold themselves -------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    (b"a: &a [*a]\n", "f.yaml:1:4: error: this anchor's value holds an alias of itself, so it would never end; write "
                      "the value out, or move the alias out of the anchored value"),
    (b"x: 1\na: &a\n  b: [1, {c: *a}]\n", "f.yaml:2:4: error: this anchor's value holds an alias of itself, so it "
                                          "would never end; write the value out, or move the alias out of the anchored "
                                          "value"),
    (b"a: &a {b: 1, <<: *a}\n", "f.yaml:1:14: error: `<<` merges a mapping into itself: the alias names this "
                                "mapping, or one it is part of; merge a mapping defined outside this one"),
    (b"a: &a\n  b: 1\n  c: [{<<: [{x: 1}, *a]}]\n", "f.yaml:3:8: error: `<<` merges a mapping into itself: the "
                                                   "alias names this mapping, or one it is part of; merge a mapping "
                                                   "defined outside this one"),
])
def test_an_alias_inside_its_own_anchor_is_refused(raw, expected):
    """ruamel made the alias None without a word (`[*a]` -> `[None]`), and a merge of it an AttributeError."""
    assert load_one(raw) == [expected]


# --- linear time on hostile text of the largest size a profile may have ------------------------------------------


def seconds(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def test_token_after_a_line_of_anchors_is_linear():
    """Cutting one `&a ` off at a time copies the rest of the line each time: quadratic (minutes at 1 MiB)."""
    line = "&a " * (MAX_FILE_BYTES // 3) + "1.10"
    document, _ = load_bytes(b"a: 1\n", "f.yaml", "p/f.yaml")
    assert document is not None
    hostile = type(document)(document.path, document.source, document.data, (line, " " * MAX_FILE_BYTES + "#"))
    assert seconds(lambda: (hostile.token(1, 1), hostile.token(2, 1))) < 2
    assert hostile.token(1, 1) == "1.10" and hostile.token(2, 1) == ""


def test_positions_of_many_merged_keys_are_linear():
    """Each position looked through every merged mapping of its mapping: with 30,000 merged mappings that each bring
    a key the schema refuses, 30,000 errors x 30,000 mappings (about 90 s; 6 s already at 8,000, 14 s at 12,000)."""
    count = 12_000  # 3 nodes per alias: within the 100,000 that aliases may add
    anchors = b", ".join(b"&a%d {k%d: 1}" % (i, i) for i in range(count))
    aliases = b", ".join(b"*a%d" % i for i in range(count))
    raw = b"junk: [" + anchors + b"]\nresources: {<<: [" + aliases + b"]}\n"
    assert len(raw) <= MAX_FILE_BYTES
    document, diagnostics = load_bytes(raw, "f.yaml", "p/f.yaml")
    assert diagnostics == [] and document is not None
    keys = list(document.data["resources"])
    assert len(keys) == count
    assert seconds(lambda: [document.location("resources", key, at_key=True) for key in keys]) < 5
    last = keys[-1]
    assert str(document.location("resources", last, at_key=True)) == f"f.yaml:1:{raw.index(last.encode()) + 1}"


def test_the_duplicate_anchor_message_is_read_in_linear_time():
    """The warning quotes the anchor; a pattern spanning the whole message backtracked over it."""
    hostile = ["found duplicate anchor " + "first occurrence" * (MAX_FILE_BYTES // 16),
               "found duplicate anchor 'x'" + " " * MAX_FILE_BYTES + "first occurrence, line 1, column 1",
               "found duplicate anchor 'x' first occurrence" + ", line 1" * (MAX_FILE_BYTES // 8) + "second occurrence",
               "found duplicate anchor " * (MAX_FILE_BYTES // 23)]
    assert seconds(lambda: [_reused_anchor(text) for text in hostile]) < 2
    assert [_reused_anchor(text) for text in hostile] == [None] * 4
    name = "n" * (MAX_FILE_BYTES // 2 - 20)
    raw = f"a: &{name} 1\nb: &{name} 2\n".encode()
    assert len(raw) <= MAX_FILE_BYTES
    assert load_one(raw) == [f"f.yaml:2:4: error: anchor &{name} is defined a second time (first on line 1); "
                             "give each anchor its own name"]


@pytest.mark.parametrize("line", ["kind:" + " " * 200 + "a" * 200 + "\x00", "name: '" + "a" * 400 + "'b"])
def test_the_identity_of_an_unreadable_file_is_guessed_in_linear_time(tmp_path, line):
    hostile = tmp_path / "f.yaml"
    hostile.write_bytes(((line + "\n") * (MAX_FILE_BYTES // (len(line) + 1))).encode())
    assert seconds(lambda: _guess_identity(hostile)) < 2


def test_many_mappings_merging_one_anchor_load_in_linear_time():
    """ruamel's add_referent looked for each merging mapping among all earlier ones by equality: 4,000 merges
    took 13 s, 10,000 about 80 s, a 1 MiB profile of them hours."""
    count = 10_000
    raw = b"apiVersion: mpigen/v1alpha1\nb: &b {x: 1}\n" + b"".join(b"m%d: {<<: *b}\n" % i for i in range(count))
    result: list[tuple] = []
    assert seconds(lambda: result.append(load_bytes(raw, "f.yaml", "p/f.yaml"))) < 10
    document, diagnostics = result[0]
    assert diagnostics == [] and document is not None and document.data[f"m{count - 1}"] == {"x": 1}


def test_reused_anchors_stop_the_parse_at_the_first():
    """Each reused anchor was recorded as a warning to the end of the file (13 s for 1 MiB), to report the first."""
    raw = b"a: [" + b"&a 1, " * ((MAX_FILE_BYTES - 10) // 6) + b"1]\n"
    assert len(raw) <= MAX_FILE_BYTES
    result: list[list[str]] = []
    assert seconds(lambda: result.append(load_one(raw))) < 2
    assert result[0] == ["f.yaml:1:11: error: anchor &a is defined a second time (first on line 1); "
                         "give each anchor its own name"]
