"""The porcelain of ``postprocessby``: one looked-up profile through one postprocessor into a new pending one.

Kept apart from :mod:`perun_core.api.run` (which re-exports it): running a
postprocessor plans no jobs, starts no processes and checks no runs, so
``perun-core postprocessby`` imports none of the modules that do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..profile.validate import resources_kept
from ..runner.jobs import UnitConfig, unit_config
from ..runner.naming import TEMPLATE_KEY, render_name, validate_template, write_new_profile
from ..runner.phases import apply_postprocessor
from ..storage.repository import PerunRepository
from ..units import UnitContext, ignore_event
from ._repo import using as _using
from .profiles import load_profile

__all__ = ["PostprocessResult", "postprocess"]


@dataclass(frozen=True, slots=True)
class PostprocessResult:
    path: Path
    origin: str | None
    source: str
    unit: UnitConfig


def postprocess(
    spec: str,
    postprocessor: str,
    params: Mapping[str, Any] | None = None,
    *,
    minor: str | None = None,
    output_template: str | None = None,
    on_event: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> PostprocessResult:
    """Postprocess one looked-up profile into a new pending profile (spec §3.4.1).

    ``spec`` is found like everywhere else (``i@i`` in ``minor``'s index,
    ``i@p``, names, paths).  The unit's entry is appended to
    ``postprocessors``; the new profile keeps the origin (for a registered
    profile: the commit whose index holds it).  Events: the unit's phases and
    ``ProfileWritten``.
    """

    config = unit_config("postprocessor", postprocessor, params)
    with _using(repo, cwd) as r:
        template = output_template or str(r.config.get(TEMPLATE_KEY))
        validate_template(template)
        loaded = load_profile(spec, minor=minor, repo=r)
        profile = loaded.profile
        if loaded.kind == "index":
            profile.origin = loaded.minor
        ctx = UnitContext(r.root, on_event or ignore_event, cancel or threading.Event(), None,
                          f"postprocessby {postprocessor}")
        result = apply_postprocessor(config, profile, ctx)
        # the models of a million resources are checked, the resources read (and checked) unchanged are not
        path = write_new_profile(result, r.jobs_dir, render_name(result, template),
                                 resources_checked=resources_kept(profile, result))
        if on_event is not None:
            # lazy: the command line's postprocessby listens to no events and need not create their classes
            from ..events import ProfileWritten

            on_event(ProfileWritten(None, path, result.origin or ""))
        return PostprocessResult(path, result.origin, loaded.source, config)
