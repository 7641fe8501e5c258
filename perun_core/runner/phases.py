"""Running a unit's phases, and applying one postprocessor to a profile.

``postprocessby`` needs only this part of the runner: it runs no
processes, makes no worktrees and plans no jobs, so it does not import the
modules that do (:mod:`perun_core.runner.run` builds on this one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import InvalidProfile, PerunError, PostprocessError
from ..profile.model import Profile
from ..units import call_phase, postprocessors

if TYPE_CHECKING:  # pragma: no cover
    from .jobs import UnitConfig

__all__ = ["apply_postprocessor", "as_profile", "run_phases"]


def run_phases(unit: Any, main: str, ctx: Any, kwargs: dict[str, Any],
                fail: Callable[[str, str], PerunError]) -> dict[str, Any]:
    """Run ``before``, ``main`` and ``after`` of ``unit`` (those it has), threading kwargs through."""

    for phase in ("before", main, "after"):
        if getattr(unit, phase, None) is None:
            continue
        if getattr(ctx, "listened", True):
            # lazy: a run without listeners (postprocessby) need not create the event classes
            from ..events import PhaseStarted

            ctx.emit(PhaseStarted(phase, unit.name, ctx.job))
        result = call_phase(unit, phase, ctx, kwargs)
        assert result is not None
        if result.status != 0:
            raise fail(phase, result.message or "no reason given")
        kwargs = result.kwargs
    return kwargs


def as_profile(value: Any, what: str, fail: Callable[[str], PerunError]) -> Profile:
    if isinstance(value, Profile):
        return value
    if isinstance(value, dict):
        try:
            return Profile.from_dict(value)
        except InvalidProfile as exc:
            raise fail(f"{what} produced an invalid profile: {exc.message}") from None
    raise fail(f"{what} produced no profile (kwargs['profile'] is {type(value).__name__})")


def apply_postprocessor(config: UnitConfig, profile: Profile, ctx: Any) -> Profile:
    """``profile`` after the postprocessor ``config`` (its entry appended to ``postprocessors``).

    The entry is ``{name, params}`` plus the keys of the ``info`` dict the
    unit may leave in its kwargs (``skipped`` of the analyses).  The origin
    is kept.  Raises :class:`PostprocessError` when the unit reports an
    error or returns no valid profile.
    """

    unit = postprocessors.get(config.name)
    kwargs = run_phases(
        unit, "postprocess", ctx, {**config.params, "profile": profile},
        lambda phase, message: PostprocessError(config.name, f"{message} (in {phase}())"),
    )
    result = as_profile(kwargs.get("profile"), "it", lambda r: PostprocessError(config.name, r))
    entry = config.as_info()
    info = kwargs.get("info")
    if isinstance(info, dict):
        entry.update((str(key), value) for key, value in info.items() if key not in ("name", "params"))
    result.postprocessors = [*result.postprocessors, entry]
    result.origin = profile.origin
    return result
