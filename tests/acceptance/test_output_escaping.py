"""Every text a command prints from its input is escaped the same way (mpigen.support.diagnostics.one_line): object and
file names holding terminal escapes (an OSC window title, an OSC 8 hyperlink, clear screen, cursor moves), C1, bidi
controls or characters XML cannot hold reach the terminal and the reports as visible escapes such as `\\x1b`, and
every report format still parses. The second red team's case: `check`'s text output printed them raw, while
`validate` escaped the same bytes."""

from __future__ import annotations

import json
import shutil
import xml.dom.minidom
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import CHARTS, HOSTILE_NAME, PROFILES, RAW_CONTROL, helm_path, require_helm, run_mpigen

from mpigen.support.diagnostics import one_line

# What a file name can hold of HOSTILE_NAME: no NUL, no `/`, no lone surrogate (not even Python writes one to disk).
HOSTILE_FILE = "m\x1b]0;file\x07\x1b[2J\u202e\x9b"
ESCAPED_TITLE = "\\x1b]0;owned\\x07"


def _clean(*outputs: str) -> None:
    for text in outputs:
        assert "Traceback" not in text, text[-2000:]
        assert not RAW_CONTROL.search(text), repr(RAW_CONTROL.search(text))


def _hostile_manifests(folder: Path) -> Path:
    """A privileged Pod named HOSTILE_NAME in a namespace and with a container of that name, and a ConfigMap with a
    label of it, as JSON (the one spelling that holds NUL and a lone surrogate), in a file of a hostile name."""
    folder.mkdir()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": HOSTILE_NAME, "namespace": f"ns{HOSTILE_NAME}"},
           "spec": {"containers": [{"name": HOSTILE_NAME, "image": "busybox:1.36",
                                    "securityContext": {"privileged": True}}]}}
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "settings", "namespace": "hpc", "labels": {HOSTILE_NAME: HOSTILE_NAME}}}
    (folder / f"{HOSTILE_FILE}.json").write_text(json.dumps(pod), encoding="utf-8")
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.mark.parametrize("output", ["text", "junit", "json", "sarif"])
def test_check_prints_no_control_character_of_a_manifest_in_any_format(tmp_path, output):
    folder = _hostile_manifests(tmp_path / "manifests")
    result = run_mpigen("check", "--no-helm", "--output", output, folder)
    _clean(result.stdout, result.stderr)
    assert result.returncode == 1  # the names are refused
    if output == "text":
        assert f"Pod/a{ESCAPED_TITLE}" in result.stdout and "\\u202eb\\x00\\x01\\x0b\\ud800\\uffffc" in result.stdout
        assert one_line(HOSTILE_FILE) in result.stdout
    elif output == "junit":
        root = ET.fromstring(result.stdout.encode("utf-8"))
        xml.dom.minidom.parseString(result.stdout.encode("utf-8"))
        names = {case.get("name") for case in root.iter("testcase")}
        assert one_line(f"Pod/{HOSTILE_NAME}") in names
        failures = [case.find("failure") for case in root.iter("testcase") if case.find("failure") is not None]
        assert any(one_line(f"Pod/{HOSTILE_NAME}") in (failure.text or "") for failure in failures)
    else:
        data = json.loads(result.stdout)
        if output == "json":
            objects = {finding["object"] for finding in data["findings"]}
            assert f"Pod/{HOSTILE_NAME}" in objects  # JSON carries the name exactly, escaped by JSON itself
            assert [entry["namespace"] for entry in data["podSecurity"]] == [f"ns{HOSTILE_NAME}"]
        else:
            messages = [result_["message"]["text"] for result_ in data["runs"][0]["results"]]
            assert any(HOSTILE_NAME in message for message in messages)


def test_what_check_says_of_its_options_is_escaped_too(tmp_path):
    helm = f"/nowhere/helm{HOSTILE_FILE}"
    result = run_mpigen("check", "--helm", helm, tmp_path)
    _clean(result.stdout, result.stderr)
    assert result.returncode == 2 and f"--helm {one_line(helm)}: no such program" in result.stderr


@pytest.mark.parametrize("args", [("check", f"missing{HOSTILE_FILE}"),
                                  ("check", "--cluster", f"lab=missing{HOSTILE_FILE}", "."),
                                  ("validate", f"missing{HOSTILE_FILE}", f"--{HOSTILE_FILE}")],
                         ids=["click-path", "cluster-folder", "unknown-option"])
def test_usage_errors_quoting_what_was_typed_are_escaped(tmp_path, args):
    """click's own messages (`Path '...' does not exist`, `No such option`) and mpigen's usage errors quote the
    command line: escaped like every other text, exit 2."""
    result = run_mpigen(*args, cwd=tmp_path)
    _clean(result.stdout, result.stderr)
    assert result.returncode == 2 and "\\x1b]0;file\\x07" in result.stderr, result.stderr


def test_plan_explain_and_validate_escape_a_profile_file_name(profiles_copy):
    root = profiles_copy()
    job = root / "jobs" / "pi.yaml"
    text = job.read_text(encoding="utf-8")
    hostile = job.with_name(f"pi{HOSTILE_FILE}.yaml")
    job.rename(hostile)
    plan = run_mpigen("plan", root)
    explain = run_mpigen("explain", "pi", "-p", root)
    for result in (plan, explain):
        assert result.returncode == 0, result.stderr
        _clean(result.stdout, result.stderr)
        assert one_line(str(hostile)) in result.stdout  # main printed the name raw (the job's location, its source)
    hostile.write_text(text.replace("workers: 2", "workers: many"), encoding="utf-8")
    validate = run_mpigen("validate", root)
    assert validate.returncode == 1
    _clean(validate.stdout, validate.stderr)
    assert one_line(str(hostile)) in validate.stderr  # main escaped ESC here, but not the bidi control


def test_diff_escapes_the_objects_it_names(tmp_path):
    helm = helm_path(3) or require_helm(4)
    shutil.copytree(PROFILES, tmp_path / "profiles")
    shutil.copytree(CHARTS, tmp_path / "charts")
    name = HOSTILE_NAME.replace("\x00", "").replace("\ud800", "")  # what YAML and Helm pass through
    chart = tmp_path / "charts" / "dgx-lab" / "jobs" / f"extra{HOSTILE_FILE}"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: extra\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "templates" / "cm.yaml").write_text(json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name, "namespace": "hpc"}}), encoding="utf-8")
    result = run_mpigen("diff", "profiles", "-o", "charts", "--helm", helm, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    _clean(result.stdout, result.stderr)
    assert f"removed: v1 ConfigMap hpc/{one_line(name)}\n--- a: v1 ConfigMap hpc/{one_line(name)}\n" in result.stdout


def test_render_check_escapes_the_extra_files_it_lists(tmp_path):
    shutil.copytree(PROFILES, tmp_path / "profiles")
    shutil.copytree(CHARTS, tmp_path / "charts")
    extra = tmp_path / "charts" / "dgx-lab" / f"notes{HOSTILE_FILE}.txt"  # a file a pull request may add
    extra.write_text("x\n", encoding="utf-8")
    result = run_mpigen("render", "profiles", "-o", "charts", "--check", cwd=tmp_path)
    assert result.returncode == 1
    _clean(result.stdout, result.stderr)
    assert f"extra: charts/dgx-lab/{one_line(extra.name)}\n" in result.stdout


def test_render_render_check_and_diff_escape_the_output_folder_they_name(tmp_path):
    """The folder given with -o is the command line's text: every line naming it escapes it."""
    shutil.copytree(PROFILES, tmp_path / "profiles")
    output = f"out{HOSTILE_FILE}"
    runs = [run_mpigen("render", "profiles", "-o", output, cwd=tmp_path),
            run_mpigen("render", "profiles", "-o", output, "--check", cwd=tmp_path),
            run_mpigen("render", "profiles", "-o", output, "--stamp", cwd=tmp_path),
            run_mpigen("render", "profiles", "-o", output, "--stamp", cwd=tmp_path),
            run_mpigen("diff", "profiles", "-o", output, cwd=tmp_path)]
    for result in runs:
        _clean(result.stdout, result.stderr)
        assert result.returncode == 0, result.stderr
        assert one_line(output) in result.stdout + result.stderr
