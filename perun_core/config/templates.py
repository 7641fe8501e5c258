"""Commented YAML text for new configuration files.

:func:`render_local_config` writes ``.perun/local.yml`` for one of the three
predefined templates (``master``, ``developer``, ``user``).  Options a
template sets are written out; the others appear as commented-out hints, so
that ``config edit`` shows what can be configured.  The ``user`` template also
looks for commands (executables in ``build``, ``_build`` or ``dist``) and
workloads (files in ``workload``, ``workloads``, ``examples`` or
``payloads``) of the project.

:func:`render_shared_config` writes ``shared.yml`` holding the built-in
defaults.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from . import DEFAULTS, dump_yaml, validate_data
from ..errors import ConfigError

__all__ = [
    "COMMAND_DIRS",
    "TEMPLATES",
    "WORKLOAD_DIRS",
    "find_commands",
    "find_workloads",
    "render_local_config",
    "render_shared_config",
]

TEMPLATES = ("master", "developer", "user")
COMMAND_DIRS = ("build", "_build", "dist")
WORKLOAD_DIRS = ("workload", "workloads", "examples", "payloads")
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")


# --------------------------------------------------------------------------
# automatic look-up


def _relative(path: Path, root: Path) -> str:
    return "./" + path.relative_to(root).as_posix()


def _is_executable_file(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and bool(info.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))


def find_commands(project_root: Path) -> list[str]:
    """Executable files directly inside ``build``, ``_build`` or ``dist``, as ``./build/app``."""
    project_root = Path(project_root)
    found: list[str] = []
    for name in COMMAND_DIRS:
        directory = project_root / name
        if not directory.is_dir():
            continue
        try:
            entries = list(directory.iterdir())
        except OSError:
            continue
        found.extend(_relative(entry, project_root) for entry in entries if _is_executable_file(entry))
    return sorted(found)


def find_workloads(project_root: Path) -> list[str]:
    """Regular files anywhere inside ``workload(s)``, ``examples`` or ``payloads``.

    Hidden files and directories (``.gitkeep``, ``.cache/``) are skipped, and
    symbolic links to directories are not followed.
    """
    project_root = Path(project_root)
    found: list[str] = []
    for name in WORKLOAD_DIRS:
        directory = project_root / name
        if not directory.is_dir():
            continue
        for current, dirnames, filenames in os.walk(directory, onerror=lambda _exc: None):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for filename in filenames:
                if filename.startswith("."):
                    continue
                path = Path(current) / filename
                try:
                    regular = stat.S_ISREG(path.stat().st_mode)
                except OSError:
                    continue
                if regular:
                    found.append(_relative(path, project_root))
    return sorted(found)


def _has_makefile(project_root: Path) -> bool:
    return any((Path(project_root) / name).is_file() for name in _MAKEFILES)


# --------------------------------------------------------------------------
# rendering helpers


def _scalar(value: Any) -> str:
    """One YAML scalar (quoted when needed) for use after ``key: `` or ``- ``."""
    import yaml

    text = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=2**31 - 1)
    return text.rstrip("\n")[1:-1]


def _list(key: str, items: list[str], indent: int = 0) -> list[str]:
    pad = " " * indent
    return [f"{pad}{key}:"] + [f"{pad}  - {_scalar(item)}" for item in items]


def _hint(*lines: str, indent: int = 0) -> list[str]:
    pad = " " * indent
    return [f"{pad}# {line}" if line else f"{pad}#" for line in lines]


# --------------------------------------------------------------------------
# the local configuration


def _header_section(template: str, vcs_type: str, vcs_url: str) -> list[str]:
    """The file's opening comment, its version and the vcs section."""
    out = [
        f"# Perun local configuration ({template} template).",
        "#",
        "# Options are looked up here first, then in the shared configuration",
        "# (shared.yml), then in perun's built-in defaults.  Keys are written",
        "# as sections joined by dots on the command line, e.g.",
        "#   perun-core config set format.sort_profiles_by time",
        "# Commented-out lines show what else can be set.",
        "",
        "config_version: 1",
        "",
        "# The wrapped version control system (local-only).",
        "vcs:",
        f"  type: {_scalar(vcs_type)}",
        f"  url: {_scalar(vcs_url)}",
        "",
        "# ---- job matrix: what 'run matrix' profiles ---------------------------",
        "# Every command is run with every argument and every workload, and each",
        "# run is collected by every collector, then post-processed in order.",
        "",
    ]
    return out


def _matrix_section(project_root: Path, user: bool) -> list[str]:
    """cmds, args, workloads and the workload generators."""
    out: list[str] = []
    # cmds
    commands = find_commands(project_root) if user else []
    if commands:
        out += ["# Commands to profile (found in " + ", ".join(f"{d}/" for d in COMMAND_DIRS) + ")."]
        out += _list("cmds", commands)
    else:
        if user:
            out += _hint(f"No executables were found in {', '.join(d + '/' for d in COMMAND_DIRS)}; add commands here.")
        out += _hint("Commands to profile (binaries or scripts, without arguments):", "cmds:", "  - ./build/app")
    out.append("")

    # args
    out += _hint("Arguments passed to every command:", "args:", "  - --fast", "  - -q -O2")
    out.append("")

    # workloads
    workloads = find_workloads(project_root) if user else []
    if workloads:
        out += ["# Workloads (program inputs) found in " + ", ".join(f"{d}/" for d in WORKLOAD_DIRS) + "."]
        out += _list("workloads", workloads)
    else:
        if user:
            out += _hint(f"No files were found in {', '.join(d + '/' for d in WORKLOAD_DIRS)}; add workloads here.")
        out += _hint("Workloads (program inputs, files) given to every command:", "workloads:", "  - ./workloads/small.txt")
    out.append("")

    # workload generators (perun_core.runner.generators)
    out += _hint(
        "Workload generators: a job whose workload is a generator's id (listed under",
        "workloads, or -w sizes) runs once per generated input, and the runs merge into",
        "one profile with each input's size as structure-unit-size, ready for regression",
        "analysis (profile_for_each_workload: true keeps a profile per input instead).",
        "Types: singleton (value), integer (min, max, step), string (min_len, max_len,",
        "step_len), textfile (min_lines, max_lines, step_lines, min_chars, max_chars,",
        "step_chars) and external (command writing the inputs into {dir}).",
        "generators:",
        "  workload:",
        "    - id: sizes",
        "      type: integer",
        "      min: 1000",
        "      max: 10000",
        "      step: 1000",
        "    - id: texts",
        "      type: textfile",
        "      min_lines: 100",
        "      max_lines: 1000",
        "      step_lines: 300",
        "      min_chars: 80",
        "      max_chars: 80",
        "      profile_for_each_workload: true",
    )
    out.append("")
    return out


def _units_section(user: bool) -> list[str]:
    """collectors and postprocessors."""
    out: list[str] = []
    # collectors
    if user:
        out += ["# Collectors gathering the profiling data of every run."]
        out += ["collectors:", "  - name: time"]
    else:
        out += _hint(
            "Collectors gathering the profiling data of every run, with optional params:",
            "collectors:",
            "  - name: time",
            "  - name: memory",
            "    params:",
            "      sampling: 1",
        )
    out.append("")

    # postprocessors
    out += _hint(
        "Postprocessors applied to every collected profile, in order:",
        "postprocessors:",
        "  - name: normalizer",
        "  - name: regression_analysis",
        "    params:",
        "      method: full",
        "      steps: 10",
    )
    out.append("")
    return out


def _pre_run_section(project_root: Path, developer: bool) -> list[str]:
    """execute.pre_run: make, where a developer template finds a Makefile."""
    out: list[str] = []
    # execute.pre_run
    out += ["# ---- commands run before collecting ------------------------------------"]
    if developer and _has_makefile(project_root):
        out += ["execute:", "  # Run without a shell before any collection, e.g. to rebuild the binaries.", "  pre_run:", "    - make"]
    else:
        if developer:
            out += _hint("No Makefile was found in the project root, so 'make' is not run;", "uncomment and adapt this to rebuild the binaries before collecting.")
        else:
            out += _hint("Commands run (without a shell) before any collection:")
        out += _hint("execute:", "  pre_run:", "    - make")
    out.append("")
    return out


def _profiles_section(user: bool) -> list[str]:
    """profiles.register_after_run."""
    out: list[str] = []
    # profiles.register_after_run
    out += ["# ---- profiles -----------------------------------------------------------"]
    if user:
        out += ["profiles:", "  # Register newly collected profiles to the current commit at once.", "  register_after_run: true"]
    else:
        out += _hint("Register newly collected profiles to the current commit at once:", "profiles:", "  register_after_run: true")
    out.append("")
    return out


def _degradation_section(developer: bool) -> list[str]:
    """The checks and their logging (never collect_before_check: see the comment it writes)."""
    out: list[str] = []
    # degradation
    out += ["# ---- degradation checks -------------------------------------------------"]
    if developer:
        out += [
            "degradation:",
            "  # Log the collection of missing profiles (check -c) to <commit>-precollect.log.",
            "  # collect_before_check (collect them on every check) runs the job matrix's",
            "  # commands, so it is honoured only in your shared configuration, never here.",
            "  log_collect: true",
            "  # Which checks apply to which profiles: the first matching rule (apply: first)",
            "  # or all of them (apply: all).  Rules may also match type, collector or",
            "  # postprocessor, e.g. {type: mixed, postprocessor: regression_analysis, method: bmoe}.",
            "  strategies:",
            "    - method: aat",
        ]
    else:
        out += _hint(
            "degradation:",
            "  log_collect: true",
            "  apply: first",
            "  strategies:",
            "    - type: mixed",
            "      postprocessor: regression_analysis",
            "      method: bmoe",
            "    - method: aat",
        )
    out.append("")
    return out


def _format_section(user: bool) -> list[str]:
    """Output formats and the general section."""
    out: list[str] = []
    # format
    out += ["# ---- output formats (override the shared configuration) ----------------"]
    if user:
        out += [
            "format:",
            "  # Name of generated profiles.",
            f"  output_profile_template: {_scalar('%collector%-of-%cmd%-%workload%-%date%')}",
        ]
        out += _hint(
            f"status: {_scalar('| %type% | %cmd% | %workload% | %collector% | (%time%) |')}",
            f"shortlog: {_scalar('%checksum:6% (%stats%) %desc%')}",
            "sort_profiles_by: time",
            indent=2,
        )
    else:
        out += _hint(
            "format:",
            f"  status: {_scalar('| %type% | %cmd% | %workload% | %collector% | (%time%) |')}",
            f"  shortlog: {_scalar('%checksum:6% (%stats%) %desc%')}",
            f"  output_profile_template: {_scalar('%collector%-%cmd%-%args%-%workload%-%date%')}",
            "  sort_profiles_by: time",
        )
    out.append("")
    out += _hint("general:", "  editor: vi", "  paging: only-log")
    return out


def render_local_config(
    template: str,
    *,
    project_root: Path,
    vcs_type: str = "git",
    vcs_url: str = ".",
) -> str:
    """Commented YAML for ``.perun/local.yml`` following ``template``.

    ``master`` sets only the ``vcs`` section; ``developer`` adds the Average
    Amount Threshold check, the log of pre-collections (check -c) and
    ``make`` before runs; ``user`` also fills the job matrix (commands and
    workloads found in the project, the time collector), registers profiles
    after runs and names them ``%collector%-of-%cmd%-%workload%-%date%``.
    ``make`` is only enabled when the project root has a Makefile.
    """
    if template not in TEMPLATES:
        raise ConfigError(None, "template", f"expected one of {', '.join(TEMPLATES)}")
    project_root = Path(project_root)
    user = template == "user"
    developer = template in ("developer", "user")

    out = (_header_section(template, vcs_type, vcs_url) + _matrix_section(project_root, user) + _units_section(user)
           + _pre_run_section(project_root, developer) + _profiles_section(user) + _degradation_section(developer)
           + _format_section(user))
    text = "\n".join(out) + "\n"
    _self_check(text, template)
    return text


def _self_check(text: str, what: str) -> None:
    """A rendered file must parse into a valid mapping (a failure is a bug here)."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:  # pragma: no cover - guarded by tests
        raise ConfigError(None, "template", f"{what} renders invalid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):  # pragma: no cover
        raise ConfigError(None, "template", f"{what} does not render a mapping")
    validate_data(data)


# --------------------------------------------------------------------------
# the shared configuration


def render_shared_config() -> str:
    """Commented YAML for ``shared.yml`` holding the built-in defaults."""

    header = [
        "# Perun shared configuration: options for every perun repository of this user.",
        "# A repository's .perun/local.yml overrides them; options removed from here",
        "# fall back to perun's built-in defaults (the values written below).",
        "",
        "config_version: 1",
        "",
    ]
    notes = {
        "general": "# paging: always, only-log, only-status or never",
        "format": "# status and shortlog are formatting strings; see 'Customizing Logs and Statuses'",
        "degradation": "# strategies are gathered: local ones come first, then these",
        "profiles": None,
    }
    body: list[str] = []
    for section, values in DEFAULTS.items():
        if section == "execute":
            continue  # local-only: commands run before collecting belong to a project
        note = notes.get(section)
        if note:
            body.append(note)
        body.append(dump_yaml({section: values}).rstrip("\n"))
        body.append("")
    text = "\n".join(header + body)
    _self_check(text, "shared configuration")
    return text
