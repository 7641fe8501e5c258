"""Comparing two profiles: ``perun-core diff BASELINE TARGET [VIEW]``.

Profiles are looked up as ``check profiles`` looks them up (``i@i`` and
``i@p`` tags, names of registered or pending profiles, file paths; spec
§3.2.16); plain files work outside a perun repository.  The comparison
itself is :func:`perun_core.diff.compare` and its views
:mod:`perun_core.diff.render`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..check.compare import compare as compare_samples
from ..diff import NOISE_FLOOR, compare

from ..diff.render import FORMATS, flame_legend, render

from ..safetext import escape_output

from .profiles import load_profile

if TYPE_CHECKING:  # pragma: no cover
    from ..diff import Comparison
    from ..profile.model import Profile
    from ..storage.repository import PerunRepository

__all__ = ["NOISE_FLOOR", "DIFF_VIEWS", "compare_profiles", "diff_formats", "diff_profiles", "render_diff",
           "diff_flame_legend"]

DIFF_VIEWS = ("short", "flamegraph", "bars", "report")


def compare_profiles(baseline: Profile, target: Profile, *, baseline_name: str = "baseline",
                     target_name: str = "target", functions: bool = True,
                     noise_floor: float = NOISE_FLOOR) -> Comparison:
    """The :class:`~perun_core.diff.Comparison` of two loaded profiles.

    A value that moved by less than ``noise_floor`` (a share of its baseline) counts as unchanged.  Repeated
    measurements of one thing (runs of a program) read as ``check`` reports them: the baseline's median and the
    target's level by the robust shift (:func:`robust_levels`), not their means.
    """

    return compare(baseline, target, baseline_name=baseline_name, target_name=target_name, functions=functions,
                   noise_floor=noise_floor, levels=robust_levels)


def robust_levels(before: list[float], after: list[float]) -> tuple[float, float, float]:
    """The levels the degradation check gives two samples of amounts without input sizes: the baseline's median
    (``from``), that median moved by the Hodges-Lehmann shift of the log amounts (``to``), and the relative change
    (the shift's ratio less one, which the check prints as a percentage)."""
    import math

    import numpy as np

    found = compare_samples(None, np.array(before, dtype=float), None, np.array(after, dtype=float))
    return found.base_level, found.target_level, math.exp(found.effect) - 1.0


def diff_profiles(
    baseline: str,
    target: str,
    *,
    minor: str | None = None,
    baseline_minor: str | None = None,
    target_minor: str | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
    noise_floor: float = NOISE_FLOOR,
) -> Comparison:
    """Look both profiles up and compare them (``noise_floor`` as in :func:`compare_profiles`).

    ``minor`` is the commit whose ``i@i`` tags and registered names both
    specs refer to (default HEAD); ``baseline_minor`` / ``target_minor``
    set it for one side (profiles of two commits).  Raises
    ProfileNotFound, InvalidProfile, IncomparableProfiles.
    """

    loaded = []
    for spec, at in ((baseline, baseline_minor or minor), (target, target_minor or minor)):
        loaded.append(load_profile(spec, minor=at, repo=repo, cwd=cwd))
    names = [spec if item.kind == "file" else item.source for spec, item in zip((baseline, target), loaded)]
    return compare_profiles(loaded[0].profile, loaded[1].profile, baseline_name=names[0], target_name=names[1],
                            noise_floor=noise_floor)


def render_diff(comparison: Comparison, view: str = "short", *, fmt: str | None = None, width: int = 100,
                height: int = 30, color: bool = False, limit: int | None = None, pixels: int | None = None,
                front: str = "cli", legend: bool = True) -> str:
    """``view`` of ``comparison`` as text (terminal text, SVG, folded pair or HTML by ``fmt``); ``front`` (``cli``,
    ``tui``, ``tui-dialog``: the explain dialog) names the settings it advises in that front end's words.

    ``legend=False``: the terminal flame graph without its line on the signs, for a front end that keeps
    :func:`diff_flame_legend` in view below a scrolled graph.
    """

    text = render(comparison, view, fmt=fmt, width=width, height=height, color=color, limit=limit, pixels=pixels,
                  front=front, legend=legend)
    return escape_output(text, keep_colour=color)


def diff_flame_legend(comparison: Comparison) -> str:
    """What the signs of the difference flame graph's frames say (``=``: under the comparison's noise floor)."""
    return flame_legend(comparison.noise_floor)


def diff_formats(view: str) -> tuple[str, ...]:
    return FORMATS.get(view, ())


