"""Pilot tests: views that cannot show a profile are greyed out, say why, and never fail with a technical message."""

from __future__ import annotations

from textual.widgets import Static

from perun_tui.app import PerunApp
from perun_tui.commands import UNAVAILABLE_STYLE
from perun_tui.messages import PlotModelBuilt
from perun_tui.screens.plot import PlotScreen
from perun_tui.widgets.plot import ChartView

from .helpers import Recorder, main_screen, rendered_text, select_profile, settle


def _styles_of(text, word: str) -> set[str]:
    """The styles of the spans of a Rich ``text`` that cover ``word``."""
    start = text.plain.index(word)
    return {str(span.style) for span in text.spans if span.start <= start < span.end}


async def test_views_that_do_not_fit_a_time_profile_are_greyed_out_and_explain_themselves(demo_repo):
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await select_profile(pilot, "0@i")
        await pilot.press("p")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PlotScreen) and screen.view == "bars"
        assert set(screen.unfit) == {"flamegraph", "heapmap"}
        assert "memory" in screen.unfit["heapmap"] and "call stacks" in screen.unfit["flamegraph"]
        views = screen.query_one("#plot-views", Static)
        line = views.content
        assert UNAVAILABLE_STYLE in _styles_of(line, "heap map") and UNAVAILABLE_STYLE in _styles_of(line, "flame graph")
        assert UNAVAILABLE_STYLE not in _styles_of(line, "bars")
        assert "heap map: it is a time profile, not memory" in str(views.tooltip)

        built = len(recorder.of(PlotModelBuilt))
        await pilot.press("f")
        await settle(pilot)
        assert len(recorder.of(PlotModelBuilt)) == built  # nothing was tried: no technical failure
        message = str(screen.query_one("#plot-message", Static).content)
        assert "flame graph: it has no call stacks" in message
        status = str(screen.query_one("#plot-status", Static).content)
        assert "views that fit: s scatter, b bars, w flow" in status
        # the pane says it: no toast repeats it over the tab bar and the keys that fit
        assert not any("cannot show" in note for note in recorder.notes("warning"))
        assert not recorder.notes("error")
        assert not app.screen.query("Toast")

        commands = {command.name: command for command in screen.palette_commands()}
        assert commands["plot: heap map"].unavailable == screen.unfit["heapmap"]
        assert commands["plot: heap map"].help_text.startswith("not here: it is a time profile")
        assert not commands["plot: bars"].unavailable
        assert commands["plot: bars"].help == "Show the profile as bars"
        # the unavailable command still runs: it explains instead of failing
        commands["plot: heap map"].run()
        await settle(pilot)
        assert screen.view == "heapmap"
        assert "heap map: it is a time profile, not memory" in str(screen.query_one("#plot-message", Static).content)
        await pilot.press("b")
        await settle(pilot)
        assert screen.view == "bars" and screen.query_one(ChartView).picture is not None


async def test_an_unfit_view_asked_for_from_the_main_screen_opens_the_default_view_and_says_why(demo_repo):
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i")  # a mixed profile: no heap map
        main_screen(app).open_plot("heapmap")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PlotScreen) and screen.view == "scatter"
        assert any("heap map cannot show 1@i: it is a mixed profile, not memory" in note
                   for note in recorder.notes("warning"))


async def test_palette_texts_read_as_sentences(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        helps = {command.name: command.help for command in main_screen(app).palette_commands()}
        assert helps["plot: bars"] == "Plot the selected profile as bars"
        assert helps["plot: scatter"] == "Plot the selected profile as a scatter plot"
        assert helps["plot: flame graph"] == "Plot the selected profile as a flame graph"
        assert not any(" as a bars" in text or " as a flow" in text for text in helps.values())


async def test_the_plot_subtitle_is_text_shortened_in_the_middle(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 16)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "0@i")
        from dataclasses import replace

        info = replace(app.query_one("ProfilesTable").current, args="--mode [fast] " * 6)
        app.push_screen(PlotScreen(info, None))
        await settle(pilot)
        subtitle = str(app.screen.query_one("#plot-pane").border_subtitle)
        assert "…" in subtitle and len(subtitle.replace("\\[", "[")) <= 40
        assert subtitle.replace("\\[", "[").endswith(" ".join(p for p in (info.args, info.workload) if p)[-8:])


async def test_the_main_screens_palette_greys_out_the_views_the_selected_profile_cannot_take(demo_repo):
    from textual.command import CommandPalette

    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "0@i")  # a time profile
        await pilot.press("ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        await pilot.press("escape")
        await settle(pilot)
        commands = {command.name: command for command in main_screen(app).palette_commands()}
        assert "time profile" in commands["plot: heap map"].unavailable
        assert "call stacks" in commands["plot: flame graph"].unavailable
        assert not commands["plot: bars"].unavailable and not commands["plot: scatter"].unavailable
