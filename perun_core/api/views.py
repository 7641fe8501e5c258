"""The porcelain of views: which views can show a profile (``view_fits``), and why the others cannot.

Each view declares the profiles it fits (see :mod:`perun_core.views.fits`);
front ends call :func:`view_fits` to offer only the views that fit and to
say why the others are not offered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile
    from ..storage.repository import PerunRepository

__all__ = ["ViewFit", "view_fits", "fitting_views"]


@dataclass(frozen=True, slots=True)
class ViewFit:
    """One registered view and whether it can show a profile; ``reason`` says why not ("" when it can)."""

    name: str
    summary: str
    fits: bool
    reason: str = ""


def view_fits(
    profile: Profile | dict | str,
    *,
    minor: str | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> list[ViewFit]:
    """Every registered view, in the order ``show`` lists them, with whether it fits ``profile``.

    ``profile`` is a loaded profile (or its JSON dict) or a spec that
    :func:`perun_core.api.load_profile` looks up (``0@i``, a name, a path).
    """
    from ..profile.query import as_profile
    from ..views import get_view, view_names
    from ..views.fits import traits_of

    if isinstance(profile, str):
        from .repository import load_profile

        loaded = load_profile(profile, minor=minor, repo=repo, cwd=cwd).profile
    else:
        loaded = as_profile(profile)
    traits = traits_of(loaded)
    out = []
    for name in view_names():
        view = get_view(name)
        reason = view.fit(loaded, traits)
        out.append(ViewFit(name, view.summary, reason is None, reason or ""))
    return out


def fitting_views(profile: Profile | dict) -> list[str]:
    """The names of the views that can show ``profile``."""
    return [fit.name for fit in view_fits(profile) if fit.fits]
