"""Whatever text reaches the tool parsers (generator/inventory/tools.py), they return or raise ToolTextError with one
line that names a line of the text; never another exception. Random text and random edits of real outputs, a few
examples from a fixed seed in CI, MPIGEN_FUZZ_EXAMPLES from its seed under `make fuzz`."""

from __future__ import annotations

import os
import re

from conftest import REPO, UPSTREAM
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mpigen.inventory import tools

EXAMPLES = int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) if "MPIGEN_FUZZ_EXAMPLES" in os.environ else 60
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_126)
SAMPLES = (
    (REPO / "tests" / "fixtures" / "inventory" / "dgx-a100_nvidia-smi-topo.txt").read_text(encoding="utf-8"),
    (REPO / "tests" / "fixtures" / "inventory" / "dgx-a100_lspci-nn.txt").read_text(encoding="utf-8"),
    (UPSTREAM / "inventory" / "sriov-network-device-plugin_vf-setup.md").read_text(encoding="utf-8")[4300:5600],
)
WORDS = ("GPU0", "GPU1", "NIC0", "mlx5_0", "X", "PIX", "SYS", "NV12", "CPU", "Affinity", "NUMA", "ID", "Legend:",
         "NIC Legend:", "NIC0:", "port", "1", "==>", "(Up)", "0c:00.0", "0000:0c:00.0", "[0207]:", "[15b3:101b]",
         "\t", "\n", "\r\n", " ", "\x1b[4m", "N/A", "(rev", "a1)", "]: ", " [")
TOKENS = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=60).map("".join)
EDITED = st.tuples(st.sampled_from(SAMPLES), st.integers(0, 10_000), st.integers(0, 200), TOKENS).map(
    lambda edit: edit[0][:edit[1] % (len(edit[0]) + 1)] + edit[3] + edit[0][edit[1] % (len(edit[0]) + 1) + edit[2]:])
LOCATED = re.compile(r"src:[1-9][0-9]*: [^\n]+; [^\n]+")


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=400), TOKENS, EDITED))
def test_any_text_parses_or_is_refused_at_a_line(text):
    lines = max(1, len(text.splitlines()))
    tools.identify(text)
    for parse in (tools.parse_nvidia_smi_topo, tools.parse_ibdev2netdev, tools.parse_lspci_nn):
        try:
            result = parse(text, "src")
        except tools.ToolTextError as exc:
            assert LOCATED.fullmatch(str(exc)), str(exc)
            assert 1 <= exc.line <= lines
        else:
            if isinstance(result, tools.TopoMatrix):
                tools.nearest_nics(result)
