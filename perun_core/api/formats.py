"""Profile file layouts: converting a file, the bytes of a profile in a layout, unused configuration keys."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import Config, shared_config_dir, unused_keys
from ..errors import NotPerunRepository, UsageError
from ..profile.codec import iter_layout, load_profile_from_file, store_profile_at
from ..storage.repository import PerunRepository
from .files import write_user_file

__all__ = ["LAYOUT_CHOICES", "ConvertResult", "convert", "profile_bytes", "unused_config_keys"]

#: Layouts perun writes: ``compact`` (columnar, versioned) and ``documented`` (spec JSON, readable by the original Perun).
LAYOUT_CHOICES = ("compact", "documented")


@dataclass(frozen=True, slots=True)
class ConvertResult:
    source: Path
    target: Path
    layout_read: str
    layout_written: str
    resources: int
    bytes_written: int


def _check_layout(layout: str) -> None:
    if layout not in LAYOUT_CHOICES:
        raise UsageError(f"--layout '{layout}' is not a layout perun writes; expected one of {', '.join(LAYOUT_CHOICES)}")


def profile_bytes(profile: object, layout: str, *, indent: int | None = 2) -> bytes:
    """``profile`` (a loaded :class:`~perun_core.profile.model.Profile`) serialized in ``layout``."""

    _check_layout(layout)
    return b"".join(iter_layout(profile, layout, indent=indent))  # type: ignore[arg-type]


def convert(path: Path | str, *, layout: str = "compact", output: Path | str | None = None,
            indent: int | None = 2) -> ConvertResult:
    """Rewrite the profile file ``path`` (any layout perun reads) in ``layout``, to ``output`` or in place.

    The file is replaced atomically: it is either the old one or the whole new one.
    """

    _check_layout(layout)
    source = Path(path)
    profile = load_profile_from_file(source)
    target = Path(output) if output is not None else source
    if output is not None:  # a file the user named: checked first, and a device is written into, not replaced
        data = profile_bytes(profile, layout, indent=indent)
        write_user_file(target, data)
        return ConvertResult(source, target, profile.layout, layout, profile.resource_count(), len(data))
    store_profile_at(profile, target, indent=indent, layout=layout)
    return ConvertResult(source, target, profile.layout, layout, profile.resource_count(), target.stat().st_size)


def unused_config_keys(*, cwd: Path | str | None = None) -> dict[str, list[str]]:
    """Keys of the local (when in a repository) and shared configuration files that this perun does not read.

    They stay in the files untouched (the original Perun's ``format.output_show_template``,
    ``general.editor`` of another tool, keys of a newer perun, ...).
    """

    found: dict[str, list[str]] = {}
    try:
        repo = PerunRepository.discover(cwd)
    except NotPerunRepository:
        repo = None
    if repo is not None:
        local = Config.load(repo.local_config_path, kind="local")
        keys = unused_keys(local.data)
        if keys:
            found[str(repo.local_config_path)] = keys
    shared_path = shared_config_dir() / "shared.yml"
    if shared_path.is_file():
        keys = unused_keys(Config.load(shared_path, kind="shared").data)
        if keys:
            found[str(shared_path)] = keys
    return found
