"""The SVG flame graph in a real browser: headless Chromium loads it and runs its script without errors."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from perun_core.views import get_view

from tools import require

from .profiles import memory_profile

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((found for found in map(shutil.which, BROWSERS) if found), None)

@pytest.fixture(autouse=True)
def needs_browser():
    require(BROWSER is not None, "a headless Chromium to open the SVG in (Debian: chromium)")


def open_in_chromium(path, fragment: str = "") -> tuple[str, str]:
    """The DOM after the SVG's scripts ran, and Chromium's log (console messages included)."""
    result = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=2000", "--dump-dom", f"file://{path}{fragment}"],
        capture_output=True, text=True, timeout=90,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, result.stderr


def console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.fixture(scope="module")
def svg_file(tmp_path_factory):
    flame = get_view("flamegraph")
    path = tmp_path_factory.mktemp("flame") / "flame.svg"
    path.write_text(flame.render(flame.run(memory_profile()), fmt="svg"), encoding="utf-8")
    return path


def test_svg_opens_without_errors(svg_file):
    dom, log = open_in_chromium(svg_file)
    assert console_errors(log) == []
    # init() ran to its end
    assert 'data-ready="true"' in dom
    assert dom.count('class="frame"') == 14


def test_search_and_zoom_run_in_the_browser(svg_file):
    # the URL fragment runs a search for "malloc" and zooms into the frame f4 (grow) on load
    dom, log = open_in_chromium(svg_file, "#s=malloc&z=f4")
    assert console_errors(log) == []
    assert 'data-ready="true"' in dom
    assert "Matched: 36.1%" in dom  # (256 + 96) / 976 bytes
    assert 'fill="rgb(230,0,230)"' in dom
    assert 'style="display: none;"' in dom  # frames outside the zoomed one are hidden
    zoomed = re.search(r'id="f4"[^>]*data-name="grow\(\)"><title>[^<]*</title><rect x="([0-9.]+)"[^>]* width="([0-9.]+)"', dom)
    assert zoomed and zoomed.groups() == ("10.00", "1180.00")  # grow now fills the width
