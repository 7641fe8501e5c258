"""Names of generated profiles: ``format.output_profile_template`` (spec 001 §9.2).

Tags::

    %collector%        the collector's name
    %postprocessors%   postprocessor names joined by "-and-"
    %<unit>.<param>%   a parameter of the collector or a postprocessor named <unit>
                       (empty when there is no such unit or parameter)
    %cmd%              the profiled command (file names only: ./build/app -> app)
    %args%             its arguments
    %workload%         its workload (file names only)
    %type%             the profile's type (time, memory, mixed)
    %date%             when it was generated: YEAR-MONTH-DAY-HOUR-MINUTES-SECONDS
    %origin%           the commit it was collected for
    %counter%          a counter from 0, increasing over one run of perun

Values are made safe for file names (anything but letters, digits and
``._+=,@-`` becomes ``_``), runs of separators left by empty or sanitized
values are collapsed (to ``-`` if they hold one, else to ``_``), and
``.perf`` is appended.  A generated name never replaces an
existing file: ``-1``, ``-2``, ... are added until the name is free, and the
file is created exclusively, so concurrent runs cannot overwrite each other.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..profile.codec import store_profile_at
from ..profile.model import Profile
from ..profile.validate import validate_profile
from ..storage.repository import pending_layout

__all__ = ["TAGS", "TEMPLATE_KEY", "render_name", "validate_template", "write_new_profile"]

TEMPLATE_KEY = "format.output_profile_template"
TAGS = ("collector", "postprocessors", "cmd", "args", "workload", "type", "date", "origin", "counter")
_TAG = re.compile(r"%([A-Za-z0-9_.\-]+)%")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=,@-]+")
_DASHES = re.compile(r"[-_]*-[-_]*")
_UNDERSCORES = re.compile(r"__+")
_MAX_STEM = 180
_EXTENSION = ".perf"


def validate_template(template: str) -> None:
    """ConfigError naming the first tag that is neither known nor ``unit.param``."""
    if not isinstance(template, str) or not template.strip():
        raise ConfigError(None, TEMPLATE_KEY, "the output profile template is empty")
    for match in _TAG.finditer(template):
        tag = match.group(1)
        if tag not in TAGS and "." not in tag.strip("."):
            error = ConfigError(None, TEMPLATE_KEY, f"unknown tag %{tag}% in '{template}'")
            error.hint = f"known tags: {', '.join('%' + t + '%' for t in TAGS)} and %<unit>.<param>%"
            raise error


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _file_names(text: str) -> str:
    return "_".join(os.path.basename(word.rstrip("/")) or word for word in _words(text))


def _param(profile: Profile, unit: str, name: str) -> Any:
    units = [profile.collector_info, *profile.postprocessors]
    for info in units:
        if info.get("name") == unit and isinstance(info.get("params"), dict) and name in info["params"]:
            return info["params"][name]
    return ""


def render_name(profile: Profile, template: str, *, counter: int = 0, when: float | None = None) -> str:
    """The file name (with ``.perf``) ``template`` gives for ``profile``."""
    stamp = time.strftime("%Y-%m-%d-%H-%M-%S", time.localtime(when if when is not None else time.time()))
    values = {
        "collector": profile.collector,
        "postprocessors": "-and-".join(profile.postprocessor_names),
        "cmd": _file_names(profile.cmd),
        "args": "_".join(_words(profile.args)),
        "workload": _file_names(profile.workload),
        "type": profile.type,
        "date": stamp,
        "origin": profile.origin or "",
        "counter": str(counter),
    }

    def substitute(match: re.Match[str]) -> str:
        tag = match.group(1)
        if tag in values:
            value: Any = values[tag]
        elif "." in tag:
            unit, _, name = tag.partition(".")
            value = _param(profile, unit, name)
        else:
            return match.group(0)
        if value is None or isinstance(value, (dict, list)):
            value = "" if value is None else "_".join(map(str, value))
        return _UNSAFE.sub("_", str(value))

    stem = _UNSAFE.sub("_", _TAG.sub(substitute, template))
    stem = _UNDERSCORES.sub("_", _DASHES.sub("-", stem)).strip("-_.")[:_MAX_STEM].rstrip("-_.")
    if stem.endswith(_EXTENSION):
        stem = stem[: -len(_EXTENSION)]
    return (stem or "profile") + _EXTENSION


def write_new_profile(profile: Profile, directory: Path, name: str, *, layout: str | None = None,
                      resources_checked: bool = False) -> Path:
    """Write ``profile`` as ``directory/name``, never replacing a file.

    The layout is the compact columnar one by default, documented JSON in a
    ``.perun/jobs`` the original Perun shares (it lists and adds those too);
    see :func:`~perun_core.storage.repository.pending_layout`.

    When the name is taken, ``-1``, ``-2``, ... are inserted before the
    extension.  Returns the path written.  ``resources_checked``: the
    caller validated the resources already (only the rest is checked again).
    """

    validate_profile(profile, path=name, resources=not resources_checked)
    if layout is None:
        layout = pending_layout(Path(directory))
    stem, extension = (name[: -len(_EXTENSION)], _EXTENSION) if name.endswith(_EXTENSION) else (name, "")
    attempt = 0
    while True:
        candidate = Path(directory) / (f"{stem}{extension}" if attempt == 0 else f"{stem}-{attempt}{extension}")
        try:
            store_profile_at(profile, candidate, exclusive=True, layout=layout)
            return candidate
        except FileExistsError:
            attempt += 1
