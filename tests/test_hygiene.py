"""Import hygiene: the core stays headless and --help stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("textual", "plotext", "numpy", "scipy")


def modules_after(code: str) -> set[str]:
    result = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
                            capture_output=True, text=True, cwd=ROOT, check=True)
    return set(result.stdout.split())


def test_help_imports_nothing_heavy():
    code = ("import sys\nsys.argv=['perun-core','--help']\nfrom perun_core.cli.main import cli\n"
            "try:\n    cli.main(standalone_mode=False)\nexcept SystemExit:\n    pass")
    loaded = modules_after(code)
    assert "perun_core.cli.main" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HEAVY + ("rich", "dulwich", "yaml")}


@pytest.mark.parametrize("module", sorted(
    "perun_core." + str(p.relative_to(ROOT / "perun_core").with_suffix("")).replace("/", ".")
    for p in (ROOT / "perun_core").rglob("*.py") if p.name != "__init__.py"))
def test_core_modules_never_import_textual(module):
    loaded = modules_after(f"import {module}")
    assert "textual" not in {m.split(".")[0] for m in loaded}


def test_core_never_prints_or_exits():
    offenders = []
    for path in (ROOT / "perun_core").rglob("*.py"):
        if "cli" in path.parts:
            continue
        text = path.read_text()
        for needle in ("print(", "sys.exit(", "input("):
            if needle in text:
                offenders.append(f"{path.name}: {needle}")
    assert offenders == []
