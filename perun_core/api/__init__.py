"""The porcelain: every operation a front end (the CLI, the TUI, a script) may call.

Plain functions that return dataclasses; nothing here prints, prompts or
exits, and failures raise :class:`perun_core.errors.PerunError` subclasses.
Each function takes an optional ``repo`` (an open
:class:`~perun_core.storage.repository.PerunRepository`, as the TUI keeps
one) or finds the nearest instance from ``cwd``.

The functions live in modules by subject (``repository``, ``run``,
``check``, ...).  This package re-exports them by name, loading a module only
when one of its names is first used, so ``from perun_core import api`` stays
cheap for commands that need one corner of it.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {}


def _export(module: str, names: str) -> None:
    for name in names.split():
        _EXPORTS[name] = module


_export("repository", """SORT_KEYS open_repository InitResult init ConfigValue config_get config_set
        config_reset EditRequest config_edit_request validate_config_file AddedProfile add RemovedProfile
        remove StatusReport status ProfileCounts LogEntry log log_format LoadedProfile load_profile""")
_export("run", "UnitInfo units stream collect run_job run_matrix PostprocessResult postprocess")
_export("check", """FAIL_ON HISTORY_WINDOW PairReport VersionReport CheckReport check_head check_all
        check_profiles stored_check matrix_commands install_hook uninstall_hook""")

_export("files", "ensure_writable_target write_user_file")
_export("text", "escape_controls escape_lines has_controls")
_export("check", "MethodInfo check_method check_methods")
_export("views", "ViewFit view_fits fitting_views")
_export("statistics", "FieldStats ModelRow ProfileSummary summary short_number")

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
