"""One way to upgrade every versioned format perun reads: step functions ``update_to_N``.

A format (the columnar profile layout, the minor-version index, the change
records) declares its versions with a :class:`Versioned` and registers one
step per version after the first::

    PROFILE = Versioned("profile layout", newest=2)

    @PROFILE.step(2)
    def update_to_2(doc):
        doc.setdefault("origin", None)
        return doc

Readers decode whatever version a file holds into that version's in-memory
shape and call :meth:`Versioned.upgrade`, which applies ``update_to_(v+1)``,
``update_to_(v+2)``, ... up to the newest, so only the newest shape is ever
handled past reading.  Writers always write :attr:`Versioned.newest`.  A
version newer than the newest known is
:class:`~perun_core.errors.UnsupportedFormatVersion`; anything below the
oldest, or not an integer, is a damaged file (``invalid`` builds its error).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import PerunError, UnsupportedFormatVersion

__all__ = ["Versioned", "registered_formats"]

Step = Callable[..., Any]

_FORMATS: dict[str, Versioned] = {}


class Versioned:
    """The versions of one format and the steps between them."""

    def __init__(self, what: str, *, newest: int, oldest: int = 1) -> None:
        self.what = what
        self.newest = newest
        self.oldest = oldest
        self.steps: dict[int, Step] = {}
        _FORMATS[what] = self

    def step(self, version: int) -> Callable[[Step], Step]:
        """Register the function bringing a document of ``version - 1`` to ``version``."""
        if not self.oldest < version <= self.newest:
            raise ValueError(f"{self.what}: no step to version {version} (versions {self.oldest}..{self.newest})")

        def register(function: Step) -> Step:
            if version in self.steps:
                raise ValueError(f"{self.what}: two steps to version {version}")
            self.steps[version] = function
            return function

        return register

    def check(self, version: Any, path: Path | str, *, invalid: Callable[[str], PerunError] | None = None) -> int:
        """``version`` if it can be read; the error to raise otherwise."""
        if type(version) is not int or version < self.oldest:
            reason = f"invalid {self.what} version {version!r} (versions {self.oldest}..{self.newest} exist)"
            raise invalid(reason) if invalid is not None else PerunError(f"{path}: {reason}")
        if version > self.newest:
            raise UnsupportedFormatVersion(path, self.what, version, self.newest)
        return version

    def upgrade(self, doc: Any, version: Any, *, path: Path | str = "<data>",
                invalid: Callable[[str], PerunError] | None = None, **context: Any) -> Any:
        """``doc`` of ``version`` brought to the newest version, step by step."""
        start = self.check(version, path, invalid=invalid)
        for target in range(start + 1, self.newest + 1):
            step = self.steps.get(target)
            if step is None:  # pragma: no cover - a format declared without its step
                raise RuntimeError(f"{self.what}: missing update_to_{target}")
            doc = step(doc, **context)
        return doc


def registered_formats() -> dict[str, Versioned]:
    """Every format declared so far (by the modules imported), by name."""
    return dict(_FORMATS)
