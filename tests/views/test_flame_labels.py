"""Labels of narrow flame graph frames: one ellipsis at most, never a frame drawn as a lone one."""

from __future__ import annotations

import re

import pytest

from perun_core.views.base import RenderOptions
from perun_core.views.flamegraph import FlameGraph, _tree, render_icicle
from perun_core.views.style import DEFAULT_THEME, strip_ansi


def test_a_block_too_narrow_for_two_letters_shows_no_label():
    from perun_core.views.flamegraph import block_label

    assert block_label("sll_remove()", 8) == " sll_re…"
    assert block_label("sll_remove()", 4) == " sl…"
    assert block_label("sll_remove()", 3) == "   " and block_label("ab", 3) == " ab"
    assert block_label("sll_remove()", 2) == "  " and block_label("x", 2) == " x"
    assert block_label("sll_remove()", 7, bracketed=True) == "[sll_…]"
    assert block_label("sll_remove()", 5, bracketed=True) == "[sl…]"
    assert block_label("sll_remove()", 4, bracketed=True) == "[  ]" and block_label("ab", 4, bracketed=True) == "[ab]"
    assert block_label("sll_remove()", 1, bracketed=True) == "|"


@pytest.mark.parametrize("theme", [None, DEFAULT_THEME])
def test_a_row_of_narrow_frames_reads_as_one_label_with_one_ellipsis(theme):
    """At 40 columns 'sll_remove()' beside two frames of a cell or two, each drawn as '…', read 'sll_remov……'."""
    folded = ["main;sll_search 600", "main;sll_remove 330", "main;sll_free 70", "main;sll_size 50", "main;sll_new 90"]
    graph = FlameGraph(_tree(folded, {}), "amount", "ns", "Flame graph", folded, {})
    text = strip_ansi(render_icicle(graph, RenderOptions("icicle", 38, 8, theme)))
    row = next(line for line in text.splitlines() if "sll_search" in line)
    assert "……" not in row and not re.search(r"(^|[ \[])…", row), row
