"""The porcelain: every operation a front end (the CLI, the TUI, a script) may call.

Plain functions that return dataclasses; nothing here prints, prompts or
exits, and failures raise :class:`perun_core.errors.PerunError` subclasses.
Each function takes an optional ``repo`` (an open
:class:`~perun_core.storage.repository.PerunRepository`, as the TUI keeps
one) or finds the nearest instance from ``cwd``.

The functions live in modules by subject (``repository``, ``config``,
``profiles``, ``views``, ``matrix``, ``run``, ``catalog``, ``check``,
``demo``, ``files``).  This package re-exports them by name, loading a
module only when one of its names is first used, so ``from perun_core
import api`` stays cheap for commands that need one corner of it.  The
progress events are namespaces of their own (``run_events``,
``check_events``: both have a ``VersionStarted``).  A module is never named
like a name it exports (the module would shadow the name once imported).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {}


def _export(module: str, names: str) -> None:
    for name in names.split():
        _EXPORTS[name] = module


_export("_repo", "open_repository PerunRepository")
_export("repository", """SORT_KEYS InitResult init AddedProfile add RemovedProfile remove StatusReport status
        ProfileCounts LogEntry log log_format ProfileInfo shallow_commits SourceFile source_at""")
_export("config", """ConfigValue config_get config_set config_reset EditRequest config_edit_request
        validate_config_file parse_config_value editor_command""")
_export("profiles", "LoadedProfile load_profile")
_export("postprocessing", "PostprocessResult postprocess")
_export("matrix", "MATRIX_KEYS read_matrix check_local_config validate_matrix save_matrix")
_export("run", """UnitInfo units stream collect run_job run_matrix EventStream
        Job RunResult WrittenProfile""")
_export("catalog", "unit_names get_unit unit_params unit_requirements")
_export("check", """DOUBTFUL FAIL_ON HISTORY_WINDOW PairReport VersionReport CheckReport check_head check_all
        check_profiles stored_check matrix_commands install_hook uninstall_hook tree_lines json_records junit_xml markdown format_value""")
_export("check", "MethodInfo check_method check_methods")
_export("views", """Shown show view view_names build_view render_view one_plot only_types profile_json write_output
        Theme DEFAULT_THEME FlameLayout Span layout_flame block_colour block_label HeapLayout layout_heap allocations_in
        site_glyph heat_glyph heat_legend HEAT_GLYPHS HTML_SUFFIXES PLAIN_SUFFIXES""")
_export("files", "atomic_write atomic_write_text ensure_writable_directory ensure_writable_target write_user_file "
        "write_deferred command_scope")
_export("text", "drop_controls escape_controls escape_lines escape_output has_controls in_words_of json_bytes_safe")
_export("demo", "DEMO_DURATION demo_dir build_demo demo_is_built demo_phase")
_export("formats", "LAYOUT_CHOICES ConvertResult convert profile_bytes unused_config_keys")
_export("importing", "ImporterInfo ImportedProfile importer_info importer_kinds read_imported import_profiles")
_export("diff", "NOISE_FLOOR DIFF_VIEWS compare_profiles diff_profiles render_diff diff_formats diff_flame_legend")
_export("fuzz", """FUZZ_PARAMS DELTA_PARAMS FuzzForm RuleInfo fuzz_form fuzz_rules FuzzSettings FuzzResult Finding FuzzStarted
        FuzzProgress InputKept FuzzFinished ProfilesCollected run_fuzzing slowdown_plot DeltaStep DeltaResult deltadebug
        FindingAnalysed Verdict compact_rules format_cost growth_text""")
_export("bisecting", """BisectResult BisectStep BisectStarted BisectCollecting BisectRunEvent BisectTested BisectFinished
        bisect bisect_jobs labelled_findings""")
_export("explaining", "Explanation ExplainedFunction ExplainStarted ExplainCollecting ExplainRound ExplainFinished explain "
        "explanation_of explanation_comparison why_not_explained")
_export("remote_state", "remote_status")
_export("remote", """PushResult FetchResult PullResult RemoteState push fetch pull PushRetried RemoteContacted
        TransferProgress TransferStarted""")
_export("repair", "STALE_AFTER FsckProblem FsckReport fsck")
_export("views", "ViewFit view_fits fitting_views share_y_scale y_extent fit_middle type_defaults")
_export("text", "UNIT_SPACE format_amount format_change format_percent relative_change amount_scale nice_ticks wrap_text "
                "commit_time local_time")
_export("statistics", """FieldStats ModelRow ProfileSummary summary short_number format_number MEASURED_KEYS
        describe_machine""")

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
