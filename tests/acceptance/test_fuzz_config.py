"""Fuzzing the repository config (`.mpigen.yaml`, generator/commands/repository.py) and the glance at the profiles
that completion and the default charts folder read (generator/load/glance.py): whatever a config holds, reading it
gives settings or ConfigError diagnostics at a line of the file, each one printable line, never another exception;
whatever a profile file holds, the glance returns names and never raises or prints. A config's messages speak of
the config (no profile's advice), and a `helm` path in it comes back absolute.

Each example writes a config drawn from the keys the schema knows and a few it does not, each given a value of any
YAML shape (strings with any character, numbers, booleans, null, lists, mappings, nested), or raw text and bytes;
and a profiles folder of such files. CI runs a fixed number from a fixed seed (60: about a second); `make fuzz` draws
MPIGEN_FUZZ_EXAMPLES from its seed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from conftest import RAW_CONTROL
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mpigen.commands.repository import ConfigError, RepositoryConfig, read_config
from mpigen.load.glance import FleetGlance, glance
from mpigen.support.schema_files import CONFIG_SCHEMA_FILE
from mpigen.validate.schema import schema_verdicts

LONG = "MPIGEN_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) if LONG else 60
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_126)
KEYS = ("profiles", "charts", "helm", "validate", "check", "plan", "render", "strict", "output", "stamp", "kind", "name",
        "cluster", "pool", "nodePools", "gitops", "path", "profile", "", "<<")
keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=8))
LOCATED = re.compile(r"^\.mpigen\.yaml:([0-9]+):([0-9]+): error: \S")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.text(max_size=20), st.sampled_from(["profiles", "charts", "json", "sarif", "text", "..", "/",
                                                           "a/b", "https://x.example/r.git", "on", "~", "0x1f"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(keys, inner, max_size=4), max_leaves=12)
documents = st.dictionaries(keys, values, max_size=6)


def _text(document: dict[str, Any], style: int) -> str:
    """JSON is YAML: one flow line, or each top-level key on its own line (so messages point at lines past 1)."""
    if style == 0:
        return json.dumps(document, ensure_ascii=False)
    return "".join(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}\n" for key, value in document.items())


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(document=documents, style=st.integers(0, 1), raw=st.one_of(st.none(), st.binary(max_size=200)))
def test_a_config_gives_settings_or_located_messages(document, style, raw):
    compiled, reference = schema_verdicts(CONFIG_SCHEMA_FILE, document)  # the compiled validator judges as jsonschema
    assert compiled in (None, reference), document
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / ".mpigen.yaml"
        data = raw if raw is not None else _text(document, style).encode("utf-8", "surrogatepass")
        config.write_bytes(data)
        lines = len(data.decode("utf-8", errors="replace").splitlines()) + 1  # any line break the reader may count
        try:
            read = read_config(config)
        except ConfigError as exc:
            assert exc.diagnostics
            for diagnostic in exc.diagnostics:
                shown = diagnostic.format().replace(str(config), ".mpigen.yaml")
                located = LOCATED.match(shown)
                assert located and 1 <= int(located[1]) <= lines, shown
                assert "\n" not in shown and not RAW_CONTROL.search(shown), shown
                assert "apiVersion" not in shown and "per file" not in shown, shown  # no profile's advice
                assert not re.search(r"; [A-Z][a-z]", shown), shown  # a schema description reads on after `;`
            return
        assert isinstance(read, RepositoryConfig) and read.file == config
        assert read.profiles is None or all(str(path).startswith(tmp) for path in read.profiles)
        assert read.helm is None or "/" not in read.helm or os.path.isabs(read.helm)  # a path: never a name on PATH


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=st.lists(st.tuples(documents, st.integers(0, 1), st.one_of(st.none(), st.binary(max_size=200))),
                      max_size=4))
def test_the_glance_never_raises(files):
    printed = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        for index, (document, style, raw) in enumerate(files):
            text = raw if raw is not None else _text(document, style).encode("utf-8", "surrogatepass")
            (Path(tmp) / f"p{index}.yaml").write_bytes(text)
        fleet = glance([Path(tmp)])
    assert isinstance(fleet, FleetGlance) and printed.getvalue() == ""
    assert all(isinstance(c.name, str) and c.name for c in fleet.clusters)
    assert all(isinstance(j.name, str) and j.name for j in fleet.jobs)
